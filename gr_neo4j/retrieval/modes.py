"""How a subgraph is chosen from the candidates: the selection modes.

``reference``  G-Retriever exactly: node and relation texts scored against the question, PCST.
``triples``    PCST again, but an edge is scored as the triple it states, the mean of the
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
from .pcst import retrieval_pcst

MODES = ("reference", "triples", "whole", "kaping")


@dataclass(frozen=True)
class Scored:
    """Similarity of the question ``q`` [D] to every candidate node ``[N]`` and edge ``[E]``."""

    node: np.ndarray
    edge: np.ndarray
    triple: np.ndarray


def score(c: Candidates, q: np.ndarray) -> Scored:
    """Cosine similarities; every embedding is unit length, so a dot product suffices."""
    node = c.x @ q if c.num_nodes else np.zeros(0, dtype=np.float32)
    edge = c.edge_attr @ q if c.num_edges else np.zeros(0, dtype=np.float32)
    triple = (node[c.edge_index[0]] + edge + node[c.edge_index[1]]) / 3 if c.num_edges else np.zeros(0, dtype=np.float32)
    return Scored(node.astype(np.float32), edge.astype(np.float32), triple.astype(np.float32))


def select(mode: str, c: Candidates, s: Scored, topk: int, topk_e: int, cost_e: float, kaping_k: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Chosen (node indices sorted ascending, edge indices) of the candidate graph."""
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
