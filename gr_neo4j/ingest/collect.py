"""Parse phase: gather the fragments of a load into deduplicated rows keyed by uid.

Nodes and relationships of knowledge graphs repeat across records (MetaQA mentions an actor in
many triples, WebQSP questions share subgraphs); keying by uid merges them once, in memory, so the
write phase never sends the same row twice. A fragment whose edges point at nodes it does not
declare is a loader bug or bad input, and is reported like any other bad record.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from .records import (
    MAX_KEY_BYTES,
    MAX_TEXT_BYTES,
    BadRecord,
    Fragment,
    GraphRecord,
    QuestionRecord,
    entity_uid,
    graph_uid,
    question_uid,
    rel_uid,
)


@dataclass
class Collected:
    """Rows ready for embedding and writing, each dict keyed by uid (insertion-ordered)."""

    dataset: str
    entities: dict[str, dict] = field(default_factory=dict)  # uid -> {uid, graph, key, idx, text}
    rels: dict[str, dict] = field(default_factory=dict)  # uid -> {uid, graph, head, tail, text}
    graphs: dict[str, dict] = field(default_factory=dict)  # uid -> {uid, graph, props}
    questions: dict[str, dict] = field(default_factory=dict)  # uid -> {uid, props, topics, answers, graph, in_graph}
    bad: list[BadRecord] = field(default_factory=list)
    records: int = 0
    _texts: dict[str, str] = field(default_factory=dict, repr=False)  # each relation text, held once

    def add(self, item: Fragment | BadRecord) -> None:
        self.records += 1
        if isinstance(item, BadRecord):
            self.bad.append(item)
            return
        problem = _inconsistency(item)
        rows = None if problem else self._rows(item)
        problem = problem or _over_limits(rows)
        if problem:
            self.bad.append(BadRecord(item.where, problem))
            return
        # A relationship's head and tail point at its entities' uid strings and each relation text
        # is held once, instead of new strings per relationship (MetaQA: 9 texts for 129k triples).
        for row in rows.entities:
            self.entities.setdefault(row["uid"], row)
        for row in rows.rels:
            row["head"], row["tail"] = self.entities[row["head"]]["uid"], self.entities[row["tail"]]["uid"]
            row["text"] = self._texts.setdefault(row["text"], row["text"])
            self.rels.setdefault(row["uid"], row)
        if rows.graph is not None:
            self.graphs[rows.graph["uid"]] = rows.graph
        for row in rows.questions:
            self.questions[row["uid"]] = row

    def _rows(self, item: Fragment) -> FragmentRows:
        ds = self.dataset
        entities = [
            {"uid": entity_uid(ds, n.graph, n.key), "graph": n.graph, "key": n.key, "idx": n.idx, "text": n.text} for n in item.nodes
        ]
        rels = [
            {
                "uid": rel_uid(ds, e.graph, e.head, e.relation, e.tail),
                "graph": e.graph,
                "head": entity_uid(ds, e.graph, e.head),
                "tail": entity_uid(ds, e.graph, e.tail),
                "text": e.text,
                "idx": e.idx,
            }
            for e in item.edges
        ]
        graph = self._graph_row(item.graph) if item.graph is not None else None
        return FragmentRows(entities, rels, graph, [self._question_row(q) for q in item.questions])

    def add_all(self, items: Iterable[Fragment | BadRecord]) -> None:
        for item in items:
            self.add(item)

    def _graph_row(self, graph: GraphRecord) -> dict:
        uid = graph_uid(self.dataset, graph.graph)
        # props are the whole node (`SET g = row.props`), so a re-load removes what the file dropped;
        # the fingerprint joins them once the load's nodes and edges are all known (plan.py)
        return {"uid": uid, "graph": graph.graph, "props": {**graph.props, "uid": uid, "dataset": self.dataset, "graph": graph.graph}}

    def _question_row(self, q: QuestionRecord) -> dict:
        ds = self.dataset
        uid = question_uid(ds, q.qid)
        props = {**q.props, "id": q.qid, "dataset": ds, "split": q.split, "text": q.text, "answers": list(q.answers)}
        if q.on_graph:
            props["graph"] = q.graph
        row = {
            "uid": uid,
            "props": props,
            "topics": _unique(entity_uid(ds, q.graph, k) for k in q.topics),
            "answers": _unique(entity_uid(ds, q.graph, k) for k in q.answer_keys),
            "graph": graph_uid(ds, q.graph) if q.on_graph else None,
            "in_graph": q.graph,
        }
        # the whole node (`SET q = row.props`) and a fingerprint of it and its links: a re-load
        # rewrites the question only when one of them changed
        props["fingerprint"] = fingerprint({k: row[k] for k in ("props", "topics", "answers", "graph")})
        props["uid"] = uid
        return row

    def bad_reasons(self) -> Counter:
        """How many records were skipped for each kind of reason (the reason's text before ':' or
        ' (': 'not valid UTF-8 (byte 0xe9 at column 4)' counts as 'not valid UTF-8')."""
        return Counter(b.reason.split(":")[0].split(" (")[0] for b in self.bad)


class FragmentRows(NamedTuple):
    """The rows of one fragment, checked before they join the load."""

    entities: list[dict]
    rels: list[dict]
    graph: dict | None
    questions: list[dict]


def _over_limits(rows: FragmentRows) -> str | None:
    """Why Neo4j would reject a row of the fragment part way through the writes (a key too long for
    its index, a value it cannot store), or why it is beyond what gr-neo4j stores (a text over
    MAX_TEXT_BYTES); checked while parsing, so that 'fail' writes nothing and 'skip' skips the record."""
    for row in rows.entities + rows.rels:
        problem = _key_problem(row["uid"]) or _text_problem(row["text"], "node" if "key" in row else "relation")
        if problem:
            return problem
    for row in ([rows.graph] if rows.graph else []) + rows.questions:
        problem = _key_problem(row["uid"]) or next(filter(None, (_value_problem(k, v) for k, v in row["props"].items())), None)
        if problem:
            return problem
    return None


def _size(value: str, what: str) -> int | str:
    """The UTF-8 size of `value`, or why it has none (a lone surrogate, e.g. from a JSON '\\ud800')."""
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        return f"not valid UTF-8 (lone surrogate U+{ord(value[exc.start]):04X} at column {exc.start + 1} of {what} {_quote(value)})"


def _key_problem(uid: str) -> str | None:
    size = _size(uid, "key")
    if isinstance(size, str):
        return size
    return f"key too long ({size} bytes, at most {MAX_KEY_BYTES}): {_quote(uid)}" if size > MAX_KEY_BYTES else None


def _text_problem(text: str, what: str) -> str | None:
    size = _size(text, what)
    if isinstance(size, str):
        return size
    return f"text too long ({size} bytes, at most {MAX_TEXT_BYTES}): {what} {_quote(text)}" if size > MAX_TEXT_BYTES else None


def _value_problem(name: str, value: object) -> str | None:
    """A property value Neo4j stores: null, a boolean, a 64-bit integer, a float, a text or a list of those."""
    if value is None or isinstance(value, (bool, float)):
        return None
    if isinstance(value, int):
        return None if -(2**63) <= value < 2**63 else f"bad value: property {name} is an integer beyond 64 bits"
    if isinstance(value, str):
        return _text_problem(value, f"property {name}")
    if isinstance(value, list):
        if len({type(v) for v in value}) > 1 or any(v is None or isinstance(v, (list, dict)) for v in value):
            return f"bad value: property {name} is a list of mixed, empty or nested values"
        return next(filter(None, (_value_problem(name, v) for v in value)), None)
    return f"bad value: property {name} is a {type(value).__name__}, not text, a number or a list of one kind"


def fingerprint(value: object) -> str:
    """sha256 of a canonical JSON serialisation (sorted keys, ASCII escapes), to tell a changed row."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _quote(text: str, width: int = 60) -> str:
    return repr(text[:width]) + ("…" if len(text) > width else "")


def _inconsistency(item: Fragment) -> str | None:
    declared = {(n.graph, n.key) for n in item.nodes}
    for edge in item.edges:
        for key in (edge.head, edge.tail):
            if (edge.graph, key) not in declared:
                return f"edge {edge.head!r} -[{edge.relation}]-> {edge.tail!r} points to a node {key!r} that the record does not define"
    for node in item.nodes:
        if not node.text:
            return f"node {node.key!r} has an empty text"
    return None


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))
