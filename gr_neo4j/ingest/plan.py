"""Which rows of a load to write, given what the database holds already.

A re-load brings every graph and question that the file holds to the file's content, and costs
nothing for what did not change:

- nodes and relationships are written when their uid is missing (or has no embedding yet: a
  killed load resumes);
- a per-sample graph is written when it is new or its fingerprint (a hash of its nodes, edges and
  properties) differs from the stored one; a changed graph is replaced whole: `load_graphs` deletes
  its old nodes and relationships in the same transaction and every node and relationship of it is
  written anew (vectors of texts already embedded are read back, not encoded again);
- a question is written when it is new or its fingerprint (properties and links) differs, or when
  it links to nodes of a graph being replaced; `load_questions` replaces its properties and links.

Graphs and questions absent from the file are left alone (a `--split` or `--limit` load covers only
part of a file). In a knowledge graph an entity's text is its key, so only questions can change
there, and relationships only get added.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .collect import Collected, fingerprint


@dataclass(frozen=True)
class Existing:
    """What the database holds of a dataset: uids of complete nodes and relationships, and the
    fingerprint of each graph and question (None when it was stored without one)."""

    entities: set[str] = field(default_factory=set)
    rels: set[str] = field(default_factory=set)
    graphs: dict[str, str | None] = field(default_factory=dict)
    questions: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True)
class WritePlan:
    """The rows to write, per statement, in the order of the write steps."""

    graphs: list[dict]
    entities: list[dict]
    rels: list[dict]
    questions: list[dict]


def plan_writes(collected: Collected, existing: Existing) -> WritePlan:
    """The rows of `collected` that must be written (sets the graphs' fingerprints as a side effect)."""
    _fingerprint_graphs(collected)
    graphs = [row for uid, row in collected.graphs.items() if existing.graphs.get(uid, "") != row["props"]["fingerprint"]]
    rewritten = {row["graph"] for row in graphs}  # their nodes are deleted by load_graphs, so all are written
    entities = [row for uid, row in collected.entities.items() if uid not in existing.entities or row["graph"] in rewritten]
    rels = [row for uid, row in collected.rels.items() if uid not in existing.rels or row["graph"] in rewritten]
    questions = [
        row
        for uid, row in collected.questions.items()
        if existing.questions.get(uid, "") != row["props"]["fingerprint"]
        or (row["in_graph"] in rewritten and (row["topics"] or row["answers"]))
    ]
    return WritePlan(graphs, entities, rels, questions)


def _fingerprint_graphs(collected: Collected) -> None:
    members: dict[str, tuple[list, list]] = {row["graph"]: ([], []) for row in collected.graphs.values()}
    for row in collected.entities.values():
        if row["graph"] in members:
            members[row["graph"]][0].append((row["key"], row["idx"], row["text"]))
        # knowledge-graph entities (graph "") belong to no Graph node
    for row in collected.rels.values():
        if row["graph"] in members:
            members[row["graph"]][1].append((row["uid"], row["idx"], row["text"]))
    for row in collected.graphs.values():
        nodes, edges = members[row["graph"]]
        props = {k: v for k, v in row["props"].items() if k != "fingerprint"}
        row["props"]["fingerprint"] = fingerprint({"props": props, "nodes": sorted(nodes), "edges": sorted(edges)})
