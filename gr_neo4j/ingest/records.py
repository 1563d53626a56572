"""What a loader yields: one `Fragment` per source record (a line, a row, a JSON key), or a `BadRecord`.

A fragment holds the nodes, edges, graph and questions that one record contributes, in the data
model's terms (see docs/design.md): node keys are local to their graph (`graph` = "" for
knowledge graphs), and the ingestion core turns them into uids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import BadInput

PER_SAMPLE = "per-sample"
KNOWLEDGE_GRAPH = "knowledge-graph"

# Neo4j 5.26 rejects a range-index key over 8,164 bytes of UTF-8 ("property value is too large to
# index"; measured on the uid constraints, 8,160 on the composite Entity(dataset, graph) index) in
# the middle of a load. A uid holds dataset, graph and key, so checking it covers both indexes;
# 8,000 keeps a margin.
MAX_KEY_BYTES = 8000
# Any text or property value: the embedding model reads its first 256 tokens (about 1-2 KB of
# text) and a textualized graph is cut to 512 tokens, so 16 KB is ten times what is ever read,
# while a 10 MB field (a broken line, a file pasted into a cell) is stopped before any write.
MAX_TEXT_BYTES = 16 * 1024


def make_uid(*parts: str) -> str:
    """The uid of a row: its parts joined by '|', each with '\\' and '|' escaped ('\\\\', '\\|').

    Escaping makes uids injective: ('a|b', 'c') and ('a', 'b|c') would both join to 'a|b|c'
    unescaped, and one row would silently replace the other. Parts without '|' or '\\' are
    unchanged, so such uids read as before: 'metaqa||Tom Hanks'.
    """
    return "|".join(p.replace("\\", "\\\\").replace("|", "\\|") for p in parts)


def entity_uid(dataset: str, graph: str, key: str) -> str:
    return make_uid(dataset, graph, key)


def rel_uid(dataset: str, graph: str, head: str, relation: str, tail: str) -> str:
    return make_uid(dataset, graph, head, relation, tail)


def graph_uid(dataset: str, graph: str) -> str:
    return make_uid(dataset, graph)


def question_uid(dataset: str, qid: str) -> str:
    return make_uid(dataset, qid)


@dataclass(frozen=True)
class Node:
    """A node of a textual graph; `idx` is its index in a per-sample graph (None in a KG)."""

    graph: str
    key: str
    text: str
    idx: int | None = None


@dataclass(frozen=True)
class Edge:
    """head -> tail; `relation` goes into the uid, `text` is what is embedded and shown; `idx` is its
    position in a per-sample graph (None in a KG), so edges textualize in source order."""

    graph: str
    head: str
    relation: str
    tail: str
    text: str
    idx: int | None = None


@dataclass(frozen=True)
class GraphRecord:
    """One per-sample graph and its sample fields (ExplaGraphs arguments, GQA image id...)."""

    graph: str
    props: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QuestionRecord:
    """A question; `topics`/`answer_keys` are node keys in `graph` (the KG's "" for KG datasets)."""

    qid: str
    split: str
    text: str
    answers: list[str]
    topics: list[str] = field(default_factory=list)
    answer_keys: list[str] = field(default_factory=list)
    graph: str = ""
    on_graph: bool = False  # per-sample: link (:Question)-[:ON_GRAPH]->(:Graph)
    props: dict[str, Any] = field(default_factory=dict)


@dataclass
class Fragment:
    """Everything one source record contributes; `where` is 'file:line' (or file key/row)."""

    where: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    graph: GraphRecord | None = None
    questions: list[QuestionRecord] = field(default_factory=list)


@dataclass(frozen=True)
class BadRecord:
    """A record that could not be read: where it is and why."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


def bad_input(bad: list[BadRecord]) -> BadInput:
    """The error of a load that found ``bad`` records with --on-error fail: nothing was written."""
    more = f" ({len(bad) - 1} more bad records; --on-error skip loads the rest)" if len(bad) > 1 else " (--on-error skip loads the rest)"
    return BadInput(f"{bad[0]}{more}; nothing was written", bad)
