"""ExplaGraphs (Saha et al., 2021): one explanation graph per (belief, argument) pair.

Reads a TSV file, or a directory with `train_dev.tsv` (G-Retriever's merged file) or
`train.tsv` + `dev.tsv`. Two layouts are accepted: the original one without header (belief,
argument, stance, graph) and G-Retriever's, whose first line is `arg1 arg2 label graph`.

Textualization follows G-Retriever's `textualize_graph`: triples are the `(…)` groups of the graph
string, split on ';'; node and relation texts are lowercased and stripped; nodes are numbered in
order of first appearance. Each row becomes a Graph (id = its 0-based row number over all files,
like G-Retriever's DataFrame index) and a Question whose text is the two arguments
('Argument 1: …\\nArgument 2: …'; the prompt is added by the model) and whose answer is the stance.
Splits are G-Retriever's 60/20/20 random split with seed 42 over all rows (`paper_split`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gr_neo4j.errors import MissingInput
from gr_neo4j.ingest.facts import Answers, DatasetFacts
from gr_neo4j.ingest.records import PER_SAMPLE, BadRecord, Edge, Fragment, GraphRecord, Node, QuestionRecord
from gr_neo4j.ingest.source import LoaderSpec, data_lines, limited, shared_path
from gr_neo4j.ingest.split import paper_split, split_of_rows

NAME = "explagraphs"
SPLITS = ("train", "val", "test")
HEADER = ["arg1", "arg2", "label", "graph"]
STANCES = ("support", "counter")
TRIPLE = re.compile(r"\((.*?)\)")

__all__ = ["LOADER", "ExplaGraphsRow", "data_rows", "paper_split", "parse_graph", "parse_row", "question_text", "read"]


def parse_graph(graph: str) -> tuple[list[str], list[tuple[int, str, int]]]:
    """'(a; rel; b)(…)' -> (node texts in first-appearance order, [(src, relation, dst)]).

    Raises ValueError with the reason when the string is not a graph.
    """
    triples = TRIPLE.findall(graph)
    outside = TRIPLE.sub("", graph).strip()
    if outside:
        raise ValueError(f"unparsable graph string: text outside '(…)' groups: {outside[:60]!r}")
    if not triples:
        raise ValueError("empty graph: no (head; relation; tail) triples")
    nodes: dict[str, int] = {}
    edges = []
    for triple in triples:
        parts = triple.split(";")
        if len(parts) != 3:
            raise ValueError(f"unparsable graph string: ({triple[:60]}) has {len(parts)} ';'-separated parts, expected 3")
        src, relation, dst = (p.lower().strip() for p in parts)
        if not src or not relation or not dst:
            raise ValueError(f"unparsable graph string: ({triple[:60]}) has an empty part")
        for text in (src, dst):
            if text not in nodes:
                nodes[text] = len(nodes)
        edges.append((nodes[src], relation, nodes[dst]))
    return list(nodes), edges


@dataclass(frozen=True)
class ExplaGraphsRow:
    """One data row: the two arguments, the stance and the explanation graph."""

    arg1: str
    arg2: str
    label: str  # "support" | "counter", lower-case whatever the file's case
    nodes: list[str]  # node texts in first-appearance order (see parse_graph)
    edges: list[tuple[int, str, int]]


def parse_row(line: str) -> ExplaGraphsRow:
    """A data line, ``belief \t argument \t stance \t graph`` -> :class:`ExplaGraphsRow`.

    The one parser of ExplaGraphs rows, for the loader and for training samples (so the two read a
    file alike). The stance is read in any case (``Support``, ``COUNTER``) and stored lower-case,
    the form the metrics compare answers with. Raises ValueError ``"<reason>: <detail>"``.
    """
    fields = line.split("\t")
    if len(fields) != 4:
        raise ValueError(f"wrong column count: expected 4 tab-separated fields (belief, argument, stance, graph), got {len(fields)}")
    arg1, arg2, stance, graph = (f.strip() for f in fields)
    label = stance.lower()
    if label not in STANCES:
        raise ValueError(f"bad stance: {stance[:40]!r} is not 'support' or 'counter'")
    nodes, edges = parse_graph(graph)
    return ExplaGraphsRow(arg1, arg2, label, nodes, edges)


def question_text(arg1: str, arg2: str) -> str:
    """The question of a row: its two arguments (the model's prompt adds the instruction)."""
    return f"Argument 1: {arg1}\nArgument 2: {arg2}"


def source_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    merged = path / "train_dev.tsv"
    if merged.is_file():
        return [merged]
    files = [p for p in (path / "train.tsv", path / "dev.tsv") if p.is_file()]
    if not files:
        raise MissingInput(f"{path} has no train_dev.tsv, train.tsv or dev.tsv ({LOADER.path_help})")
    return files


def data_rows(files: list[Path]) -> Iterator[tuple[str, str | BadRecord]]:
    """(where, line) of every data line, header lines and blank lines left out. A line that is not
    UTF-8 stays a row (as a BadRecord), so the rows after it keep their numbers and splits."""
    for path in files:
        for item in data_lines(path):
            if isinstance(item, BadRecord):
                yield item.where, item
                continue
            where, lineno, line = item
            if lineno == 1 and [c.strip().lower() for c in line.split("\t")] == HEADER:
                continue
            yield where, line


def row_fragment(where: str, row: int, line: str, split: str) -> Fragment | BadRecord:
    try:
        r = parse_row(line)
    except ValueError as exc:
        return BadRecord(where, str(exc))
    graph = str(row)
    return Fragment(
        where,
        nodes=[Node(graph, str(i), text, i) for i, text in enumerate(r.nodes)],
        edges=[Edge(graph, str(s), rel, str(d), rel, j) for j, (s, rel, d) in enumerate(r.edges)],
        graph=GraphRecord(graph, {"arg1": r.arg1, "arg2": r.arg2, "label": r.label}),
        questions=[
            QuestionRecord(graph, split, question_text(r.arg1, r.arg2), [r.label], graph=graph, on_graph=True)
        ],
    )


def read(path: Path, splits: set[str] | None = None, limit: int | None = None) -> Iterator[Fragment | BadRecord]:
    lines = list(data_rows(source_files(path)))
    split_names = split_of_rows(len(lines))  # by row number, bad rows included: splits never shift
    rows = (
        line if isinstance(line, BadRecord) else (where, row, line, split_names[row])
        for row, (where, line) in enumerate(lines)
        if splits is None or split_names[row] in splits
    )
    yield from limited(rows, limit, lambda r: row_fragment(*r))


def read_rows(path: str | Path) -> list[ExplaGraphsRow]:
    """Rows of an ExplaGraphs TSV (`belief, argument, stance, graph`, with or without the header
    row `arg1 arg2 label graph` of the G-Retriever copy), by the parser the loader uses, so Neo4j
    and training read ExplaGraphs alike; the first bad row is an error naming its file and line.
    Row i is the sample whose `graph` id in Neo4j is i."""
    path = Path(path)
    if not path.is_file():
        raise MissingInput(f"{path}: no such file")
    rows: list[ExplaGraphsRow] = []
    for where, line in data_rows([path]):
        if isinstance(line, BadRecord):
            raise MissingInput(str(line))
        try:
            rows.append(parse_row(line))
        except ValueError as exc:
            raise MissingInput(f"{where}: {exc}") from None
    if not rows:
        raise MissingInput(f"{path}: no rows")
    return rows


def whole_graph_samples(path: str | Path, embedder, batch_size: int = 256) -> list:
    """Every row of an ExplaGraphs TSV as a whole-graph :class:`~gr_neo4j.samples.SubgraphSample`
    (no Neo4j, as the paper trains); node and relation texts embedded by ``embedder`` (a
    :class:`gr_neo4j.embedder.Embedder`) in a few large batches. Sample ids are the 0-based data
    rows, the ``graph`` key of the ExplaGraphs data in Neo4j."""
    import torch  # the model stack, only when training asks for samples

    from gr_neo4j.samples import SubgraphSample
    from gr_neo4j.textualize import textualize, to_data

    rows = read_rows(path)
    node_texts = sorted({t for r in rows for t in r.nodes})
    rel_texts = sorted({rel for r in rows for _, rel, _ in r.edges})
    node_vec = dict(zip(node_texts, torch.from_numpy(embedder.encode(node_texts, batch_size=batch_size))))
    rel_vec = dict(zip(rel_texts, torch.from_numpy(embedder.encode(rel_texts, batch_size=batch_size))))
    samples = []
    for row, r in enumerate(rows):
        x = torch.stack([node_vec[t] for t in r.nodes])
        edge_index = torch.tensor([[s for s, _, _ in r.edges], [d for _, _, d in r.edges]], dtype=torch.long)
        edge_attr = torch.stack([rel_vec[rel] for _, rel, _ in r.edges])
        samples.append(SubgraphSample(id=str(row), question=question_text(r.arg1, r.arg2), label=r.label,
                                      desc=textualize(r.nodes, r.edges), data=to_data(x, edge_index, edge_attr),
                                      dataset=NAME, node_texts=list(r.nodes)))
    return samples


LOADER = LoaderSpec(
    name=NAME,
    kind=PER_SAMPLE,
    splits=SPLITS,
    read=read,
    default_path=lambda: shared_path("explagraphs", "train.tsv"),
    path_help="an ExplaGraphs TSV (belief, argument, stance, graph; or G-Retriever's arg1 arg2 label graph) or a directory with train_dev.tsv or train.tsv/dev.tsv",
    facts=DatasetFacts(Answers.STANCE, labels=("counter", "support"), whole_graphs=True, samples_from_file=whole_graph_samples),
)
