"""MetaQA (Zhang et al., 2018): the WikiMovies knowledge base and its 1/2/3-hop questions.

Reads a directory holding `kb.txt` (`head|relation|tail`, one triple a line) and
`{1,2,3}-hop/qa_{train,dev,test}.txt` (or the original release's `{n}-hop/vanilla/qa_*.txt`), where
a line is `question with [topic entity]<TAB>answer1|answer2`.

- Entities are keyed by their name, exactly as written (the KG is merged: `graph` = "").
- Relation text: the KB's relation name with '_' read as a space ('directed_by' -> 'directed by',
  'has_imdb_rating' -> 'has imdb rating'), so that it embeds like the words of the questions; the
  uid keeps the original name.
- A question's text drops the brackets around its topic entity; the topic becomes a TOPIC link,
  the answers ANSWER links (to those answers that are entities of the KB), the hop count `hops`.
- `limit` caps the questions per file; the KB is always loaded whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from gr_neo4j.errors import MissingInput
from gr_neo4j.ingest.records import KNOWLEDGE_GRAPH, BadRecord, Edge, Fragment, Node, QuestionRecord
from gr_neo4j.ingest.source import LoaderSpec, data_lines, limited, shared_path

NAME = "metaqa"
SPLITS = ("train", "dev", "test")
HOPS = (1, 2, 3)
TOPIC = re.compile(r"\[([^\[\]]+)\]")


def relation_text(relation: str) -> str:
    """'directed_by' -> 'directed by'."""
    return relation.replace("_", " ").strip()


def question_files(root: Path, splits: set[str] | None) -> list[tuple[int, str, Path]]:
    """(hops, split, file) for every question file present, in hop then split order."""
    found = []
    for hops in HOPS:
        for split in SPLITS:
            if splits is not None and split not in splits:
                continue
            for candidate in (root / f"{hops}-hop" / f"qa_{split}.txt", root / f"{hops}-hop" / "vanilla" / f"qa_{split}.txt"):
                if candidate.is_file():
                    found.append((hops, split, candidate))
                    break
    return found


def read_kb(path: Path) -> Iterator[Fragment | BadRecord]:
    for item in data_lines(path):
        if isinstance(item, BadRecord):
            yield item
            continue
        where, _, line = item
        parts = line.split("|")
        if len(parts) != 3:
            yield BadRecord(where, f"wrong column count: expected head|relation|tail, got {len(parts)} field(s)")
            continue
        head, relation, tail = (p.strip() for p in parts)
        if not head or not relation or not tail:
            yield BadRecord(where, "empty field: head, relation and tail must all be non-empty")
            continue
        yield Fragment(
            where,
            nodes=[Node("", head, head), Node("", tail, tail)],
            edges=[Edge("", head, relation, tail, relation_text(relation))],
        )


def read_questions(path: Path, hops: int, split: str, limit: int | None) -> Iterator[Fragment | BadRecord]:
    yield from limited(data_lines(path), limit, lambda line: question_fragment(line, hops, split))


def question_fragment(line: tuple[str, int, str], hops: int, split: str) -> Fragment | BadRecord:
    """One ``question<TAB>answer|answer`` line; the topic is the [bracketed] entity."""
    where, lineno, text = line
    parts = text.split("\t")
    if len(parts) != 2:
        return BadRecord(where, f"wrong column count: expected question<TAB>answers, got {len(parts)} field(s)")
    question, answer_field = parts
    topics = TOPIC.findall(question)
    if not topics:
        return BadRecord(where, "no topic entity: the question has no [entity] in brackets")
    answers = [a.strip() for a in answer_field.split("|") if a.strip()]
    if not answers:
        return BadRecord(where, "no answers after the tab")
    qid = f"{hops}-hop/{split}/{lineno}"
    return Fragment(
        where,
        questions=[
            QuestionRecord(
                qid,
                split,
                question.replace("[", "").replace("]", "").strip(),
                answers,
                topics=[t.strip() for t in topics],
                answer_keys=answers,
                props={"hops": hops},
            )
        ],
    )


def read(root: Path, splits: set[str] | None = None, limit: int | None = None) -> Iterator[Fragment | BadRecord]:
    if not root.is_dir():
        raise MissingInput(f"{root} is not a directory ({LOADER.path_help})")
    kb = root / "kb.txt"
    if not kb.is_file():
        raise MissingInput(f"{kb} does not exist ({LOADER.path_help})")
    files = question_files(root, splits)
    if splits is not None and not files:
        raise MissingInput(f"no MetaQA question files for split {','.join(sorted(splits))} under {root}")
    yield from read_kb(kb)
    for hops, split, path in files:
        yield from read_questions(path, hops, split, limit)


LOADER = LoaderSpec(
    name=NAME,
    kind=KNOWLEDGE_GRAPH,
    splits=SPLITS,
    read=read,
    default_path=lambda: shared_path("metaqa"),
    path_help="a MetaQA directory with kb.txt and 1-hop/, 2-hop/, 3-hop/ qa_{train,dev,test}.txt",
)
