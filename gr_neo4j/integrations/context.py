"""Retrieved context for another framework's LLM: the graph's answers with their paths, and the
textualized subgraph, as framework-free items that each adapter turns into its own type.

The graph answers here and no LLM of gr-neo4j is loaded: the framework's own LLM writes the
reply from these items. A question the graph cannot answer gives one item saying so (its
``kind`` is ``not_in_graph``), so that LLM is told rather than left to guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..answer import Answerer, AskResult, ask, show_query
from ..retrieval import RetrievalParams, Retriever

# Where the selection gives no answers of its own (pcst on per-sample graphs), nobody answers here.
NO_ANSWERER = Answerer(lambda result: "", "nobody: the caller's LLM answers from the context")


@dataclass(frozen=True)
class ContextItem:
    """One piece of context: ``content`` is what the LLM reads, ``metadata`` what a program reads.

    ``metadata["kind"]``: ``answer`` (one per answer, ``content`` its path from a topic entity:
    ``Tom Hanks <-starred actors- Forrest Gump``), ``subgraph`` (``content`` the textualized
    subgraph) or ``not_in_graph`` (``content`` the reason)."""

    content: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphContext:
    """The items of one question and what they share: the Retrieval id, the Browser query, timings."""

    items: tuple[ContextItem, ...]
    metadata: dict[str, Any]
    result: AskResult


def graph_context(retriever: Retriever, question: str, dataset: str | None = None, entities: Sequence[str] = (),
                  params: RetrievalParams | None = None, record: bool = True, graph: str | None = None) -> GraphContext:
    """Retrieve ``question``'s subgraph (``graph``: which graph of a per-sample dataset), answer from
    the graph where the selection does, and (unless ``record`` is False) record it as a Retrieval
    node that Neo4j Browser shows."""
    out = ask(retriever.settings, question, dataset, graph, entities=entities, params=params, retriever=retriever,
              record_it=record, load_answerer_once=lambda: NO_ANSWERER)
    r = out.retrieval
    shared = {"retrieval_id": out.retrieval_id, "dataset": r.dataset, "mode": str(r.mode)}
    items: list[ContextItem] = []
    if r.not_in_graph:
        items.append(ContextItem(f"not in the graph: {r.not_in_graph}", {"kind": "not_in_graph", **shared}))
    for a in out.answers:
        if a.key is not None:
            items.append(ContextItem(a.line(), {"kind": "answer", "answer": a.text, "key": a.key, "score": a.score,
                                                "path": [asdict(s) for s in a.path], **shared}))
    if r.nodes:
        items.append(ContextItem(r.desc, {"kind": "subgraph", "nodes": len(r.nodes), "edges": len(r.edges), **shared}))
    metadata = {**shared, "question": question, "answer": out.answer or None, "answered_by": out.answered_by,
                "not_in_graph": r.not_in_graph, "browser_query": show_query(out.retrieval_id) if out.retrieval_id else None,
                "retrieval_ms": r.timings.total_ms}
    return GraphContext(tuple(items), metadata, out)
