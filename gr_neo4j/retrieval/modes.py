"""How a subgraph is chosen from the candidates: the selection modes.

``paths``      the default on knowledge graphs: the ends of the relation paths from the topic
               entities whose text reads most like the question, under a node budget (see
               :mod:`gr_neo4j.retrieval.paths`). Multi-hop questions name a chain of relations;
               node and edge scores taken one by one cannot see it.
``reference``  G-Retriever exactly: node and relation texts scored against the question, PCST.
``triples``    PCST, but an edge is scored as the triple it states, the mean of the
               similarities of its head, relation and tail, and topic entities get the top node
               prize. On knowledge graphs with few relation texts (MetaQA has 9), the reference
               scores tie thousands of edges, and G-Retriever's tie rule splits one prize among them
               into crumbs no edge can live on; carrying the endpoints breaks the ties in favour of
               the edges next to what the question names.
``whole``      no selection: the whole candidate graph (ExplaGraphs; the "k-hop" baseline).
``kaping``     the top-k triples by the same triple score, no PCST (KAPING-style baseline).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .candidates import Candidates
from .paths import PathScorer, select_paths
from .pcst import retrieval_pcst

MODES = ("paths", "reference", "triples", "whole", "kaping")


@dataclass(frozen=True)
class Scored:
    """Similarity of the question ``q`` [D] to every candidate node ``[N]``, edge ``[E]`` and triple ``[E]``."""

    q: np.ndarray
    node: np.ndarray
    edge: np.ndarray
    triple: np.ndarray


def score(c: Candidates, q: np.ndarray) -> Scored:
    """Cosine similarities; every embedding is unit length, so a dot product suffices. Edge scores
    are computed once per distinct relation text."""
    node = np.asarray(c.node_sim, dtype=np.float32)
    edge = (c.rel_attr @ q).astype(np.float32)[c.edge_rel] if c.num_edges else np.zeros(0, dtype=np.float32)
    triple = (node[c.edge_index[0]] + edge + node[c.edge_index[1]]) / 3 if c.num_edges else np.zeros(0, dtype=np.float32)
    return Scored(np.asarray(q, dtype=np.float32), node, edge.astype(np.float32), triple.astype(np.float32))


def select(mode: str, c: Candidates, s: Scored, params, scorer: PathScorer | None = None, kaping_k: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Chosen (node indices sorted ascending, edge indices) of the candidate graph.

    ``params``: a resolved :class:`~gr_neo4j.retrieval.RetrievalParams` (topk, topk_e, cost_e,
    hops, max_paths, node_budget); ``scorer`` embeds relation paths (``paths`` mode only).
    """
    topk, topk_e, cost_e = params.topk, params.topk_e, params.cost_e
    if mode == "paths":
        if scorer is None:
            raise ValueError("the paths mode needs a PathScorer")
        roots = c.topic if len(c.topic) else np.argsort(-s.node, kind="stable")[: max(topk, 1)]
        return select_paths(c, s.node, s.q, scorer, params.hops, roots, params.max_paths, params.node_budget)
    if mode == "reference":
        sel = retrieval_pcst(s.node, c.edge_index, s.edge, topk=topk, topk_e=topk_e, cost_e=cost_e)
        return sel.nodes, sel.edges
    if mode == "triples":
        extra = np.zeros(c.num_nodes, dtype=np.float32)
        extra[c.topic] = max(topk, 1)
        sel = retrieval_pcst(s.node, c.edge_index, s.triple, topk=topk, topk_e=topk_e, cost_e=cost_e, extra_node_prizes=extra)
        return sel.nodes, sel.edges
    if mode == "whole":
        return np.arange(c.num_nodes), np.arange(c.num_edges)
    if mode == "kaping":
        edges = np.argsort(-s.triple, kind="stable")[:kaping_k]
        nodes = np.unique(np.concatenate([c.topic, c.edge_index[0, edges], c.edge_index[1, edges]]))
        return nodes.astype(np.int64), edges.astype(np.int64)
    raise ValueError(f"unknown retrieval mode {mode!r} (one of {', '.join(MODES)})")
