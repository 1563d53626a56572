"""A user's own graph: head, relation, tail rows in TSV, CSV or JSON lines (optionally a graph id).

- `.tsv` / `.csv`: three columns `head, relation, tail`, or four with a graph id; an optional header
  row `head,relation,tail[,graph]` is recognised.
- `.jsonl`: one object a line with keys `head`, `relation`, `tail` and optionally `graph`.
- A directory: every such file in it, in name order.

Without graph ids the rows form one deduplicated knowledge graph (`graph` = "", nodes keyed by
their text). With graph ids every graph is a separate per-sample graph, its nodes numbered in order
of first appearance (as the ExplaGraphs loader does). Texts are kept as written (stripped).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Iterator

from gr_neo4j.ingest.records import BadRecord, Edge, Fragment, GraphRecord, MissingInput, Node
from gr_neo4j.ingest.source import LoaderSpec, data_lines

NAME = "triples"
SUFFIXES = {".tsv": "\t", ".csv": ",", ".jsonl": None}
HEADER = ["head", "relation", "tail"]


class GraphIndex:
    """Per-graph node numbering in order of first appearance."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, int]] = {}

    def node(self, graph: str, text: str) -> Node:
        if not graph:
            return Node("", text, text)
        numbering = self.nodes.setdefault(graph, {})
        if text not in numbering:
            numbering[text] = len(numbering)
        i = numbering[text]
        return Node(graph, str(i), text, i)


def row_fragment(where: str, values: list, index: GraphIndex, with_graph: bool) -> Fragment | BadRecord:
    expected = 4 if with_graph else 3
    if len(values) != expected:
        columns = "head, relation, tail, graph" if with_graph else "head, relation, tail"
        return BadRecord(where, f"wrong column count: expected {expected} ({columns}), got {len(values)}")
    if not all(isinstance(v, (str, int, float)) for v in values):
        return BadRecord(where, "bad value: head, relation, tail and graph must be strings")
    head, relation, tail = (str(v).strip() for v in values[:3])
    graph = str(values[3]).strip() if with_graph else ""
    if not head or not relation or not tail:
        return BadRecord(where, "empty field: head, relation and tail must all be non-empty")
    if with_graph and not graph:
        return BadRecord(where, "empty graph id")
    h, t = index.node(graph, head), index.node(graph, tail)
    return Fragment(
        where,
        nodes=[h, t],
        edges=[Edge(graph, h.key, relation, t.key, relation)],
        graph=GraphRecord(graph, {}) if graph else None,
    )


def _delimited(path: Path, delimiter: str, index: GraphIndex, limit: int | None) -> Iterator[Fragment | BadRecord]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter=delimiter)
        with_graph = None
        taken = 0
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if not row or not any(c.strip() for c in row):
                continue
            if with_graph is None:
                lowered = [c.strip().lower() for c in row]
                if lowered[:3] == HEADER and lowered[3:] in ([], ["graph"]):
                    with_graph = len(row) == 4
                    continue
                with_graph = len(row) == 4
            if limit is not None and taken >= limit:
                return
            taken += 1
            yield row_fragment(where, row, index, with_graph)


def _json_lines(path: Path, index: GraphIndex, limit: int | None) -> Iterator[Fragment | BadRecord]:
    taken = 0
    for where, _, line in data_lines(path):
        if limit is not None and taken >= limit:
            return
        taken += 1
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            yield BadRecord(where, f"bad JSON: {exc.msg} (column {exc.colno})")
            continue
        if not isinstance(obj, dict) or any(k not in obj for k in HEADER):
            yield BadRecord(where, "missing field(s): each line needs head, relation and tail")
            continue
        with_graph = obj.get("graph") is not None
        values = [obj["head"], obj["relation"], obj["tail"]] + ([obj["graph"]] if with_graph else [])
        yield row_fragment(where, values, index, with_graph)


def source_files(path: Path) -> list[Path]:
    if path.is_file():
        if path.suffix not in SUFFIXES:
            raise MissingInput(f"{path}: unknown triples format {path.suffix!r} (use .tsv, .csv or .jsonl)")
        return [path]
    files = sorted(p for p in path.iterdir() if p.suffix in SUFFIXES)
    if not files:
        raise MissingInput(f"{path} has no .tsv, .csv or .jsonl files")
    return files


def read(path: Path, splits: set[str] | None = None, limit: int | None = None) -> Iterator[Fragment | BadRecord]:
    index = GraphIndex()
    for file in source_files(path):
        delimiter = SUFFIXES[file.suffix]
        yield from (_json_lines(file, index, limit) if delimiter is None else _delimited(file, delimiter, index, limit))


LOADER = LoaderSpec(
    name=NAME,
    kind=None,  # decided by the data: per-sample when rows carry graph ids, else a knowledge graph
    splits=(),
    read=read,
    default_path=lambda: None,
    path_help="a .tsv, .csv or .jsonl file of head, relation, tail[, graph] rows, or a directory of them",
)
