"""A user's own graph: head, relation, tail rows in TSV, CSV or JSON lines (optionally a graph id).

- `.tsv` / `.csv`: three columns `head, relation, tail`, or four with a graph id; an optional header
  row `head,relation,tail[,graph]` is recognised. TSV has no quoting (a field is what lies between
  tabs, quotes included); CSV follows the usual quoting rules.
- `.jsonl`: one object a line with keys `head`, `relation`, `tail` and optionally `graph`.
- A directory: every such file in it, in name order.

Without graph ids the rows form one deduplicated knowledge graph (`graph` = "", nodes keyed by
their text). With graph ids every graph is a separate per-sample graph, its nodes numbered in order
of first appearance (as the ExplaGraphs loader does). Texts are kept as written (stripped).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from gr_neo4j.errors import MissingInput
from gr_neo4j.ingest.records import BadRecord, Edge, Fragment, GraphRecord, Node
from gr_neo4j.ingest.source import LoaderSpec, csv_rows, data_lines, limited

NAME = "triples"
SUFFIXES = (".tsv", ".csv", ".jsonl")
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


def _rows(path: Path) -> Iterator[tuple[str, list[str]] | BadRecord]:
    """(where, fields) of every row. TSV has no quoting in these datasets: a field is what lies
    between tabs, so `"Crocodile" Dundee` keeps its quotes and a lone `"` cannot swallow the lines
    after it. CSV keeps its quoting (a name with a comma is quoted)."""
    if path.suffix == ".csv":
        yield from csv_rows(path)
        return
    for item in data_lines(path):
        yield item if isinstance(item, BadRecord) else (item[0], item[2].split("\t"))


def _table(path: Path) -> Iterator[tuple[str, list[str], bool] | BadRecord]:
    """(where, fields, with_graph) of every data row: the first row decides whether a fourth column
    names the graph, and is left out when it is the header."""
    with_graph = None
    for item in _rows(path):
        if isinstance(item, BadRecord):
            yield item
            continue
        where, row = item
        if with_graph is None:
            with_graph = len(row) == 4
            lowered = [c.strip().lower() for c in row]
            if lowered[:3] == HEADER and lowered[3:] in ([], ["graph"]):
                continue
        yield where, row, with_graph


def _delimited(path: Path, index: GraphIndex, limit: int | None) -> Iterator[Fragment | BadRecord]:
    yield from limited(_table(path), limit, lambda r: row_fragment(r[0], r[1], index, r[2]))


def _json_lines(path: Path, index: GraphIndex, limit: int | None) -> Iterator[Fragment | BadRecord]:
    yield from limited(data_lines(path), limit, lambda line: _json_fragment(line, index))


def _json_fragment(line: tuple[str, int, str], index: GraphIndex) -> Fragment | BadRecord:
    where, _, text = line
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return BadRecord(where, f"bad JSON: {exc.msg} (column {exc.colno})")
    if not isinstance(obj, dict) or any(k not in obj for k in HEADER):
        return BadRecord(where, "missing field(s): each line needs head, relation and tail")
    with_graph = obj.get("graph") is not None
    values = [obj["head"], obj["relation"], obj["tail"]] + ([obj["graph"]] if with_graph else [])
    return row_fragment(where, values, index, with_graph)


def source_files(path: Path) -> list[Path]:
    if path.is_file():
        if path.suffix not in SUFFIXES:
            raise MissingInput(f"{path}: unknown triples format {path.suffix!r} (use .tsv, .csv or .jsonl)")
        return [path]
    files = sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file())  # not a directory named x.tsv
    if not files:
        raise MissingInput(f"{path} has no .tsv, .csv or .jsonl files")
    return files


def read(path: Path, splits: set[str] | None = None, limit: int | None = None) -> Iterator[Fragment | BadRecord]:
    index = GraphIndex()
    for file in source_files(path):
        yield from (_json_lines(file, index, limit) if file.suffix == ".jsonl" else _delimited(file, index, limit))


LOADER = LoaderSpec(
    name=NAME,
    kind=None,  # decided by the data: per-sample when rows carry graph ids, else a knowledge graph
    splits=(),
    read=read,
    default_path=lambda: None,
    path_help="a .tsv, .csv or .jsonl file of head, relation, tail[, graph] rows, or a directory of them",
    renamable=True,  # --name: unrelated triple files are separate datasets
)
