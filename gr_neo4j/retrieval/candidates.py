"""Candidate graphs fetched from Neo4j in one read-only round trip.

Knowledge graphs: the k-hop neighbourhood (capped) of the topic entities and of the entities and
relationships most similar to the question (``cypher/retrieve_kg_candidates.cypher``).
Per-sample graphs: the whole graph of one sample (``cypher/retrieve_graph.cypher``).
The embeddings come back with the graph, so similarities and PCST run in-process.
"""

from __future__ import annotations

from dataclasses import dataclass

import neo4j
import numpy as np

from ..cypher_store import statement

MAX_HOPS = 3  # the candidate statement unrolls three expansion hops


@dataclass(frozen=True)
class CandidateLimits:
    """How much the candidate statement may fetch.

    overfetch: the vector indexes cover every dataset, so ``overfetch * k`` hits are asked for and
        filtered to the dataset; fewer than k remain when other datasets crowd the question.
    fanout: relationships followed per node and hop (a hub such as a genre keeps only that many).
    max_nodes, max_edges: exact caps on the whole candidate graph.
    """

    topk_nodes: int = 3
    topk_edges: int = 5
    overfetch: int = 10
    fanout: int = 100
    max_nodes: int = 1000
    max_edges: int = 2000


@dataclass(frozen=True)
class Candidates:
    """A candidate graph as parallel arrays (N nodes, E edges, D embedding dimension).

    x: ``[N, D]`` float32 node text embeddings; edge_attr: ``[E, D]`` relation text embeddings;
    edge_index: ``[2, E]`` int64 local node indices (head, tail); topic: ``[T]`` local indices of the
    topic entities; node_idx: the node index inside a per-sample graph (None for knowledge graphs).
    """

    kind: str | None
    embedder: str | None
    dimension: int | None
    node_ids: list[str]
    node_keys: list[str]
    node_texts: list[str]
    x: np.ndarray
    edge_ids: list[str]
    edge_texts: list[str]
    edge_index: np.ndarray
    edge_attr: np.ndarray
    topic: np.ndarray
    node_idx: list[int] | None = None

    @property
    def num_nodes(self) -> int:
        return len(self.node_ids)

    @property
    def num_edges(self) -> int:
        return len(self.edge_ids)


def kg_candidates(
    tx: neo4j.ManagedTransaction,
    dataset: str,
    q: np.ndarray,
    hops: int,
    limits: CandidateLimits,
    topic_uids: list[str] = (),
    question_uid: str | None = None,
) -> Candidates:
    """Run ``retrieve_kg_candidates`` in ``tx`` (a read transaction); ``q`` is the ``[D]`` question vector."""
    if not 0 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be between 0 and {MAX_HOPS}, got {hops}")
    params = dict(
        dataset=dataset,
        q=[float(v) for v in q],
        hops=hops,
        topk_nodes=limits.topk_nodes,
        topk_edges=limits.topk_edges,
        fetch_nodes=max(1, limits.topk_nodes * limits.overfetch),
        fetch_edges=max(1, limits.topk_edges * limits.overfetch),
        fanout=limits.fanout,
        max_nodes=limits.max_nodes,
        max_edges=limits.max_edges,
        topic_uids=list(topic_uids),
        question_uid=question_uid,
    )
    record = tx.run(statement("retrieve_kg_candidates"), params).single(strict=True)
    return _from_record(record)


def graph_candidates(tx: neo4j.ManagedTransaction, dataset: str, graph: str) -> Candidates:
    """Run ``retrieve_graph`` in ``tx``: every node and relationship of one per-sample graph."""
    record = tx.run(statement("retrieve_graph"), dataset=dataset, graph=graph).single(strict=True)
    return _from_record(record)


def _matrix(rows: list, dim: int | None) -> np.ndarray:
    if not rows:
        return np.zeros((0, dim or 0), dtype=np.float32)
    return np.asarray(rows, dtype=np.float32)


def _from_record(r: neo4j.Record) -> Candidates:
    node_ids = r["node_ids"]
    local = {eid: i for i, eid in enumerate(node_ids)}
    dim = r["dimension"]
    x = _matrix(r["node_embeddings"], dim)
    edge_attr = _matrix(r["edge_embeddings"], dim or x.shape[1])
    edge_index = np.array([[local[h] for h in r["edge_heads"]], [local[t] for t in r["edge_tails"]]], dtype=np.int64).reshape(2, -1)
    keys = r.keys()
    return Candidates(
        kind=r["kind"],
        embedder=r["embedder"],
        dimension=dim,
        node_ids=node_ids,
        node_keys=r["node_keys"],
        node_texts=r["node_texts"],
        x=x,
        edge_ids=r["edge_ids"],
        edge_texts=r["edge_texts"],
        edge_index=edge_index,
        edge_attr=edge_attr,
        topic=np.array([local[t] for t in r["topic_ids"] if t in local], dtype=np.int64),
        node_idx=r["node_idx"] if "node_idx" in keys else None,
    )
