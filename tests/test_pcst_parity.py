"""`retrieval/pcst.py` against G-Retriever's `retrieval_via_pcst` as PyG ships it, on random graphs.

PyG 2.8 (`torch_geometric.llm.utils.backend_utils.retrieval_via_pcst`) is the maintained copy of
G-Retriever's selection. One difference is intended: PyG caps edge rank k at ``last - c``, where
G-Retriever's own `retrieval.py` (and ours) caps it at ``last``. The parity runs therefore give our
selection PyG's edge-prize rule (`pyg_edge_prizes`, which differs in that cap only) and compare
everything else exactly: node prizes, the cost clamp, virtual nodes, the edge order handed to
pcst_fast, and the chosen nodes and edges. `test_the_intended_difference` pins the cap itself.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.retrieval import pcst

backend_utils = pytest.importorskip("torch_geometric.llm.utils.backend_utils")

CASES = 50


class Rows:
    """The two DataFrame features retrieval_via_pcst uses (`iloc[...]`, `to_csv`), so the test
    needs no pandas; the rows it picks are the selection's indices."""

    def __init__(self, rows=None):
        self.rows = rows

    @property
    def iloc(self):
        return self

    def __getitem__(self, rows):
        return Rows(np.asarray(rows).tolist())

    def to_csv(self, **kwargs) -> str:
        return ""


def pyg_edge_prizes(scores: np.ndarray, topk_e: int, c: float = pcst.C) -> np.ndarray:
    """Our `edge_prizes` with PyG's cap ``last - c`` (the only change)."""
    prizes = np.array(scores, dtype=np.float32, copy=True)
    if topk_e <= 0 or len(prizes) == 0:
        return np.zeros(len(prizes), dtype=np.float32)
    distinct = np.unique(prizes)[::-1]
    topk_e = min(topk_e, len(distinct))
    values = distinct[:topk_e]
    prizes[prizes < values[-1]] = 0.0
    last = np.float32(topk_e)
    for k in range(topk_e):
        tied = prizes == values[k]
        value = min(np.float32((topk_e - k) / np.count_nonzero(tied)), np.float32(last - c))
        prizes[tied] = value
        last = np.float32(value * (1 - c))
    return prizes


def random_case(seed: int):
    """A random graph: unit node vectors, edge vectors from a small relation vocabulary on half
    the cases (ties, as on knowledge graphs) and all distinct on the others."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    e = int(rng.integers(n, 3 * n))
    dim = 8
    src = rng.integers(0, n, e)
    dst = (src + rng.integers(1, n, e)) % n  # no self-loops
    x = rng.normal(size=(n, dim)).astype(np.float32)
    if seed % 2:
        vocab = rng.normal(size=(int(rng.integers(2, 8)), dim)).astype(np.float32)
        edge_attr = vocab[rng.integers(0, len(vocab), e)]
    else:
        edge_attr = rng.normal(size=(e, dim)).astype(np.float32)
    q = rng.normal(size=dim).astype(np.float32)
    knobs = dict(topk=int(rng.integers(0, 6)), topk_e=int(rng.integers(0, 7)), cost_e=float(rng.uniform(0.05, 1.5)))
    data = Data(x=torch.from_numpy(x), edge_index=torch.from_numpy(np.stack([src, dst])).long(), edge_attr=torch.from_numpy(edge_attr), num_nodes=n)
    data.node_idx, data.edge_idx = np.arange(n), np.arange(e)
    return data, torch.from_numpy(q), knobs


def spy_on_pcst_fast(monkeypatch):
    """Record every pcst_fast call (edges, prizes, costs) of both implementations."""
    import pcst_fast as module

    real, calls = module.pcst_fast, []

    def spy(edges, prizes, costs, *rest):
        calls.append((np.asarray(edges, dtype=np.int64).reshape(-1, 2), np.asarray(prizes, dtype=np.float64), np.asarray(costs, dtype=np.float64)))
        return real(edges, prizes, costs, *rest)

    monkeypatch.setattr(module, "pcst_fast", spy)  # PyG imports it inside the function
    monkeypatch.setattr(pcst, "pcst_fast", spy)
    return calls


@pytest.mark.parametrize("seed", range(CASES))
def test_same_selection_as_pyg(seed, monkeypatch):
    data, q, knobs = random_case(seed)
    pcst.check_pcst_fast()  # before the spy: its own call is not part of the comparison
    calls = spy_on_pcst_fast(monkeypatch)
    theirs, _ = backend_utils.retrieval_via_pcst(data, q, Rows(), Rows(), **knobs)
    # The same cosine similarities PyG computes, so both sides see the same float32 values.
    node_scores = torch.nn.CosineSimilarity(dim=-1)(q, data.x).numpy()
    edge_scores = torch.nn.CosineSimilarity(dim=-1)(q, data.edge_attr).numpy()
    monkeypatch.setattr(pcst, "edge_prizes", pyg_edge_prizes)
    ours = pcst.retrieval_pcst(node_scores, data.edge_index.numpy(), edge_scores, **knobs)

    assert len(calls) == 2
    (e1, p1, c1), (e2, p2, c2) = calls
    np.testing.assert_array_equal(e2, e1)
    np.testing.assert_allclose(p2, p1, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(c2, c1, rtol=1e-6, atol=1e-7)
    assert ours.nodes.tolist() == np.asarray(theirs.node_idx).tolist()
    assert ours.edges.tolist() == np.asarray(theirs.edge_idx).tolist()


def test_the_intended_difference():
    # One edge above the others: G-Retriever gives rank 0 the full topk_e, PyG topk_e - c.
    scores = np.array([0.9, 0.5, 0.1], dtype=np.float32)
    assert pcst.edge_prizes(scores, 2).tolist()[0] == 2.0
    assert pyg_edge_prizes(scores, 2).tolist()[0] == pytest.approx(2 - pcst.C)


def test_selections_mostly_agree_even_with_the_cap_difference():
    # Without the substitution the two rules still pick the same subgraph on most random graphs:
    # the cap moves prizes by c = 0.01 only.
    same = 0
    for seed in range(CASES):
        data, q, knobs = random_case(seed)
        theirs, _ = backend_utils.retrieval_via_pcst(data, q, Rows(), Rows(), **knobs)
        node_scores = torch.nn.CosineSimilarity(dim=-1)(q, data.x).numpy()
        edge_scores = torch.nn.CosineSimilarity(dim=-1)(q, data.edge_attr).numpy()
        ours = pcst.retrieval_pcst(node_scores, data.edge_index.numpy(), edge_scores, **knobs)
        same += ours.nodes.tolist() == np.asarray(theirs.node_idx).tolist()
    assert same >= 0.8 * CASES


def test_a_broken_pcst_fast_fails_loudly(monkeypatch):
    # pcst_fast 1.0.10 under numpy 2 returns all-zero indices: the self-check must refuse it.
    monkeypatch.setattr(pcst, "_checked", False)
    monkeypatch.setattr(pcst, "pcst_fast", lambda edges, prizes, *rest: (np.zeros(len(prizes), dtype=np.int64), np.zeros(len(edges), dtype=np.int64)))
    with pytest.raises(GrNeo4jError, match="pcst_fast is broken"):
        pcst.retrieval_pcst(np.array([0.9, 0.1]), np.array([[0], [1]]), np.array([0.5]))
    monkeypatch.setattr(pcst, "pcst_fast", lambda *args: (_ for _ in ()).throw(RuntimeError("bad build")))
    with pytest.raises(GrNeo4jError, match="does not run"):
        pcst.check_pcst_fast()
