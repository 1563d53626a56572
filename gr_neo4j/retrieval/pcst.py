"""Prize-collecting Steiner tree selection, exactly as G-Retriever's ``retrieval_via_pcst``.

Given the cosine similarity of the question to every node and edge of a candidate graph:

* the ``topk`` most similar nodes get prizes ``topk, topk-1, ..., 1`` and all others 0;
* edges: the ``topk_e`` highest *distinct* similarity values are ranked; every edge sharing the
  value of rank k gets ``min((topk_e - k) / count, last)``, and ``last`` is then lowered to
  ``value * (1 - c)``, so a tie of many edges splits one prize and ranks stay strictly decreasing;
* ``cost_e`` is clamped to ``max edge prize * (1 - c/2)`` so that at least one edge pays for itself;
* an edge whose prize exceeds ``cost_e`` becomes a virtual node of prize ``prize - cost_e`` joined
  to both ends by zero-cost edges (PCST prizes live on nodes); the others cost ``cost_e - prize``;
* ``pcst_fast`` runs unrooted, one cluster, 'gw' pruning; the result is the chosen nodes plus the
  ends of the chosen edges (the real ones and those behind chosen virtual nodes).

Differences from the original that cannot change a selection: ties among equally similar nodes go
to the lower index (``torch.topk`` leaves that order unspecified), and arrays are numpy.
PyG's copy (``torch_geometric.llm.utils.backend_utils.retrieval_via_pcst``) caps each edge rank
at ``last - c`` where G-Retriever caps it at ``last``; we keep G-Retriever's rule
(``tests/test_pcst_parity.py`` compares both).

The first selection runs :func:`check_pcst_fast`: a wheel that returns wrong indices (``pcst_fast``
1.0.10 with numpy 2) or a broken build fails loudly instead of choosing nonsense subgraphs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pcst_fast import pcst_fast

from ..errors import MissingInput

C = 0.01  # G-Retriever's prize decay between edge ranks

_checked = False


def check_pcst_fast() -> None:
    """Solve a path 0-1-2-3 with a known answer once; raise :class:`GrNeo4jError` if pcst_fast
    gets it wrong. Prizes 5, 0, 5, 1 and edge costs 1, 1, 4: joining 0 and 2 (cost 2, prize 10)
    pays, reaching node 3 (cost 4, prize 1) does not, so nodes {0, 1, 2} and edges {0, 1}."""
    global _checked
    if _checked:
        return
    edges = np.array([[0, 1], [1, 2], [2, 3]], dtype=np.int64)
    try:
        vertices, chosen = pcst_fast(edges, np.array([5.0, 0.0, 5.0, 1.0]), np.array([1.0, 1.0, 4.0]), -1, 1, "gw", 0)
        got = (sorted(np.asarray(vertices).tolist()), sorted(np.asarray(chosen).tolist()))
    except Exception as exc:  # any failure of the extension is the same finding
        raise MissingInput(f"pcst_fast does not run ({type(exc).__name__}: {exc}); reinstall pcst-fast2") from exc
    if got != ([0, 1, 2], [0, 1]):
        raise MissingInput(
            f"pcst_fast is broken: a three-edge self-check chose nodes {got[0]} and edges {got[1]} instead of "
            "[0, 1, 2] and [0, 1]; install pcst-fast2 (pcst_fast 1.0.10 returns wrong indices with numpy 2)"
        )
    _checked = True


@dataclass(frozen=True)
class PCSTSelection:
    """What PCST chose, as indices into the candidate graph.

    nodes: ``[n]`` int64, sorted ascending.
    edges: ``[m]`` int64, in G-Retriever's order (edges chosen directly, then those behind chosen
        virtual nodes), which is also the row order of its textual description.
    """

    nodes: np.ndarray
    edges: np.ndarray


def node_prizes(scores: np.ndarray, topk: int) -> np.ndarray:
    """``[N]`` similarities -> ``[N]`` float32 prizes: topk..1 for the top-k nodes, 0 elsewhere."""
    prizes = np.zeros(len(scores), dtype=np.float32)
    topk = min(topk, len(scores))
    if topk > 0:
        order = np.argsort(-np.asarray(scores, dtype=np.float32), kind="stable")[:topk]
        prizes[order] = np.arange(topk, 0, -1, dtype=np.float32)
    return prizes


def edge_prizes(scores: np.ndarray, topk_e: int, c: float = C) -> np.ndarray:
    """``[E]`` similarities -> ``[E]`` float32 prizes of the top-k_e distinct values (see module doc).

    Works in place on one float32 array like the original, so a prize already given that happens
    to equal a lower similarity value is matched again, as there.
    """
    prizes = np.array(scores, dtype=np.float32, copy=True)
    if topk_e <= 0 or len(prizes) == 0:
        return np.zeros(len(prizes), dtype=np.float32)
    distinct = np.unique(prizes)[::-1]  # descending
    topk_e = min(topk_e, len(distinct))
    values = distinct[:topk_e]
    prizes[prizes < values[-1]] = 0.0
    last = np.float32(topk_e)
    for k in range(topk_e):
        tied = prizes == values[k]
        value = min(np.float32((topk_e - k) / np.count_nonzero(tied)), last)
        prizes[tied] = value
        last = np.float32(value * (1 - c))
    return prizes


def solve(num_nodes: int, edge_index: np.ndarray, n_prizes: np.ndarray, e_prizes: np.ndarray, cost_e: float) -> PCSTSelection:
    """Run pcst_fast with virtual nodes for profitable edges; ``edge_index`` is ``[2, E]``."""
    check_pcst_fast()
    src, dst = np.asarray(edge_index, dtype=np.int64).reshape(2, -1)
    cost = np.float32(cost_e)
    direct = np.flatnonzero(e_prizes <= cost)  # edges kept as edges, cost = cost_e - prize
    virtual = np.flatnonzero(e_prizes > cost)  # edges turned into virtual nodes
    virtual_ids = num_nodes + np.arange(len(virtual))
    # Same edge order as the original (it can break ties inside pcst_fast): the direct edges, then
    # for each virtual node its two half edges (head, v), (v, tail).
    halves = np.stack([np.stack([src[virtual], virtual_ids], 1), np.stack([virtual_ids, dst[virtual]], 1)], 1)
    edges = np.concatenate([np.stack([src[direct], dst[direct]], axis=1), halves.reshape(-1, 2)])
    costs = np.concatenate([(cost - e_prizes[direct]).astype(np.float64), np.zeros(2 * len(virtual))])
    prizes = np.concatenate([n_prizes, e_prizes[virtual] - cost]).astype(np.float64)
    vertices, chosen = pcst_fast(edges.astype(np.int64), prizes, costs, -1, 1, "gw", 0)
    vertices = np.asarray(vertices, dtype=np.int64)
    chosen = np.asarray(chosen, dtype=np.int64)
    chosen_edges = np.concatenate([direct[chosen[chosen < len(direct)]], virtual[vertices[vertices >= num_nodes] - num_nodes]])
    nodes = np.unique(np.concatenate([vertices[vertices < num_nodes], src[chosen_edges], dst[chosen_edges]]))
    return PCSTSelection(nodes=nodes.astype(np.int64), edges=chosen_edges.astype(np.int64))


def retrieval_pcst(
    node_scores: np.ndarray,
    edge_index: np.ndarray,
    edge_scores: np.ndarray,
    topk: int = 3,
    topk_e: int = 5,
    cost_e: float = 0.5,
    extra_node_prizes: np.ndarray | None = None,
) -> PCSTSelection:
    """G-Retriever's selection on a candidate graph.

    Args:
        node_scores: ``[N]`` cosine similarity of the question to each node.
        edge_index: ``[2, E]`` node indices (head, tail).
        edge_scores: ``[E]`` cosine similarity of the question to each edge.
        extra_node_prizes: ``[N]`` added to the node prizes (0 in the reference; topic entities in
            the ``triples`` mode).

    With no nodes or no edges, the whole graph is returned, as in G-Retriever.
    """
    num_nodes = len(node_scores)
    edge_index = np.asarray(edge_index, dtype=np.int64).reshape(2, -1)
    num_edges = edge_index.shape[1]
    if num_nodes == 0 or num_edges == 0:
        return PCSTSelection(nodes=np.arange(num_nodes, dtype=np.int64), edges=np.arange(num_edges, dtype=np.int64))
    n_prizes = node_prizes(node_scores, topk)
    if extra_node_prizes is not None:
        n_prizes = n_prizes + np.asarray(extra_node_prizes, dtype=np.float32)
    if topk_e > 0:
        e_prizes = edge_prizes(edge_scores, topk_e)
        cost_e = min(cost_e, float(e_prizes.max()) * (1 - C / 2))
    else:
        e_prizes = np.zeros(num_edges, dtype=np.float32)
    return solve(num_nodes, edge_index, n_prizes, e_prizes, cost_e)
