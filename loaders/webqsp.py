"""WebQSP in the RoG release (`rmanluo/RoG-webqsp`): questions with a Freebase subgraph each.

`--path` is a parquet shard or JSON lines file, or a directory of them (searched recursively);
the split is the start of the file name (`train-00000-of-00002.parquet`, `validation.jsonl`,
`test…`). A record has `id, question, answer[], q_entity[], a_entity[], graph[[h, r, t]]`.
Without `--path`, the release is fetched with `huggingface_hub` when online.

All subgraphs merge into one deduplicated knowledge graph (`graph` = ""): an entity is keyed by its
name as in the data and its text is the name lowercased, as G-Retriever's preprocessing does
(`h.lower()`, `t.lower()`); relation texts are kept as they are (G-Retriever does not lowercase
them). Each question links TOPIC to its `q_entity` and ANSWER to its `a_entity` entities.
A question whose subgraph is empty (G-Retriever drops one such validation sample) is still loaded:
in the merged graph it can reach the other questions' entities.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gr_neo4j.errors import MissingInput
from gr_neo4j.ingest.records import KNOWLEDGE_GRAPH, BadRecord, Edge, Fragment, Node, QuestionRecord
from gr_neo4j.ingest.source import LoaderSpec, data_lines, limited

NAME = "webqsp"
SPLITS = ("train", "validation", "test")
HUB_ID = "rmanluo/RoG-webqsp"
SUFFIXES = (".parquet", ".jsonl", ".json")
COLUMNS = ["id", "question", "answer", "q_entity", "a_entity", "graph"]


def split_of(path: Path) -> str:
    stem = path.name.lower()
    for split in SPLITS:
        if stem.startswith(split):
            return split
    if stem.startswith(("val", "dev")):
        return "validation"
    raise MissingInput(f"{path}: cannot tell the split from the file name (name it train*, validation* or test*)")


def record_fragment(where: str, split: str, record: Any) -> Fragment | BadRecord:
    if not isinstance(record, dict):
        return BadRecord(where, "bad record: expected a JSON object")
    missing = [c for c in COLUMNS if c not in record]
    if missing:
        return BadRecord(where, f"missing field(s): {', '.join(missing)}")
    if not isinstance(record["question"], str) or not record["question"].strip():
        return BadRecord(where, "bad question: empty or not a string")
    lists = {}
    for field in ("answer", "q_entity", "a_entity", "graph"):
        value = record[field]
        if value is None:
            value = []
        if not isinstance(value, (list, tuple)):
            return BadRecord(where, f"bad field {field}: expected a list")
        lists[field] = list(value)
    nodes: dict[str, Node] = {}
    edges = []
    for i, triple in enumerate(lists["graph"]):
        if not isinstance(triple, (list, tuple)) or len(triple) != 3 or not all(isinstance(x, str) and x.strip() for x in triple):
            return BadRecord(where, f"bad triple graph[{i}]: expected [head, relation, tail] of non-empty strings, got {str(triple)[:80]}")
        head, relation, tail = triple
        for name in (head, tail):
            if name not in nodes:
                nodes[name] = Node("", name, name.lower())
        edges.append(Edge("", head, relation, tail, relation))
    qid = str(record["id"])
    question = QuestionRecord(
        qid,
        split,
        record["question"],
        [str(a) for a in lists["answer"]],
        topics=[str(e) for e in lists["q_entity"]],
        answer_keys=[str(e) for e in lists["a_entity"]],
    )
    return Fragment(where, nodes=list(nodes.values()), edges=edges, questions=[question])


def _records(path: Path) -> Iterator[tuple[str, Any] | BadRecord]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(path)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowIOError / ArrowInvalid for a damaged file
            yield BadRecord(str(path), f"bad parquet file: {exc}")
            return
        missing = [c for c in COLUMNS if c not in parquet.schema_arrow.names]
        if missing:
            yield BadRecord(str(path), f"missing column(s): {', '.join(missing)}")
            return
        row = 0
        try:
            for batch in parquet.iter_batches(batch_size=256, columns=COLUMNS):
                for record in batch.to_pylist():
                    yield f"{path} row {row}", record
                    row += 1
        except (OSError, ValueError) as exc:  # a damaged page, or a string that is not UTF-8, part way through
            yield BadRecord(f"{path} row {row}", f"bad parquet file: {str(exc)[:200]}")
        return
    for item in data_lines(path):
        if isinstance(item, BadRecord):
            yield item
            continue
        where, _, line = item
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as exc:
            yield BadRecord(where, f"bad JSON: {exc.msg} (column {exc.colno})")


def source_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    if not files:
        raise MissingInput(f"{path} has no .parquet or .jsonl files ({LOADER.path_help})")
    return files


def read(path: Path, splits: set[str] | None = None, limit: int | None = None) -> Iterator[Fragment | BadRecord]:
    for file in source_files(path):
        split = split_of(file)
        if splits is not None and split not in splits:
            continue
        yield from limited(_records(file), limit, lambda r, split=split: record_fragment(r[0], split, r[1]))


def fetch_from_hub() -> Path:
    """Download the RoG parquet shards (online only); a clear error tells offline users to pass --path."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        raise MissingInput(f"WebQSP was not found: pass --path to the RoG-webqsp parquet shards or JSON lines (HF_HUB_OFFLINE is set, so {HUB_ID} cannot be fetched)")
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(HUB_ID, repo_type="dataset", allow_patterns=["*.parquet"]))
    except Exception as exc:  # noqa: BLE001 - offline, hub errors, missing package: all mean "give me a path"
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise MissingInput(
            f"WebQSP was not found: pass --path to the RoG-webqsp parquet shards or JSON lines "
            f"(fetching {HUB_ID} from the Hugging Face hub failed: {first})"
        ) from None


LOADER = LoaderSpec(
    name=NAME,
    kind=KNOWLEDGE_GRAPH,
    splits=SPLITS,
    read=read,
    default_path=fetch_from_hub,
    path_help="RoG-webqsp parquet shards or JSON lines (train*/validation*/test*), or a directory of them",
)
