"""Parse phase: gather the fragments of a load into deduplicated rows keyed by uid.

Nodes and relationships of knowledge graphs repeat across records (MetaQA mentions an actor in
many triples, WebQSP questions share subgraphs); keying by uid merges them once, in memory, so the
write phase never sends the same row twice. A fragment whose edges point at nodes it does not
declare is a loader bug or bad input, and is reported like any other bad record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from .records import (
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
    questions: dict[str, dict] = field(default_factory=dict)  # uid -> {uid, split, props, topics, answers, graph}
    bad: list[BadRecord] = field(default_factory=list)
    records: int = 0

    def add(self, item: Fragment | BadRecord) -> None:
        self.records += 1
        if isinstance(item, BadRecord):
            self.bad.append(item)
            return
        problem = _inconsistency(item)
        if problem:
            self.bad.append(BadRecord(item.where, problem))
            return
        ds = self.dataset
        for node in item.nodes:
            uid = entity_uid(ds, node.graph, node.key)
            if uid not in self.entities:
                self.entities[uid] = {"uid": uid, "graph": node.graph, "key": node.key, "idx": node.idx, "text": node.text}
        for edge in item.edges:
            uid = rel_uid(ds, edge.graph, edge.head, edge.relation, edge.tail)
            if uid not in self.rels:
                self.rels[uid] = {
                    "uid": uid,
                    "graph": edge.graph,
                    "head": entity_uid(ds, edge.graph, edge.head),
                    "tail": entity_uid(ds, edge.graph, edge.tail),
                    "text": edge.text,
                    "idx": edge.idx,
                }
        if item.graph is not None:
            self._add_graph(item.graph)
        for question in item.questions:
            self._add_question(question)

    def add_all(self, items: Iterable[Fragment | BadRecord]) -> None:
        for item in items:
            self.add(item)

    def _add_graph(self, graph: GraphRecord) -> None:
        uid = graph_uid(self.dataset, graph.graph)
        self.graphs[uid] = {"uid": uid, "graph": graph.graph, "props": {**graph.props, "dataset": self.dataset, "graph": graph.graph}}

    def _add_question(self, q: QuestionRecord) -> None:
        ds = self.dataset
        uid = question_uid(ds, q.qid)
        props = {**q.props, "id": q.qid, "dataset": ds, "split": q.split, "text": q.text, "answers": list(q.answers)}
        if q.on_graph:
            props["graph"] = q.graph
        self.questions[uid] = {
            "uid": uid,
            "props": props,
            "topics": _unique(entity_uid(ds, q.graph, k) for k in q.topics),
            "answers": _unique(entity_uid(ds, q.graph, k) for k in q.answer_keys),
            "graph": graph_uid(ds, q.graph) if q.on_graph else None,
        }

    def bad_reasons(self) -> Counter:
        """How many records were skipped for each kind of reason (the reason's text before ':' or
        ' (': 'not valid UTF-8 (byte 0xe9 at column 4)' counts as 'not valid UTF-8')."""
        return Counter(b.reason.split(":")[0].split(" (")[0] for b in self.bad)


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
