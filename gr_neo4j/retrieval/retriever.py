"""`retrieve()`: a question in, a small connected subgraph out (text + Data), nothing written.

Flow: embed the question; one read round trip fetches the candidate graph (on a knowledge graph
the k-hop neighbourhood as texts, ids and node similarities, the relation vectors being held by the
client; the whole sample graph with its embeddings otherwise); the selection runs in-process; a
second, small read fetches the embeddings of the chosen nodes; the subgraph is textualized and
turned into a PyG ``Data``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Self

import neo4j
import numpy as np
import torch

from ..connection import Connection, connect
from ..cypher_store import statement
from ..embedder import Embedder, load_embedder
from ..errors import GrNeo4jError
from ..ingest.records import entity_uid
from ..settings import Settings
from ..textualize import textualize, to_data
from .candidates import (
    MAX_HOPS,
    CandidateLimits,
    Candidates,
    RelationVocab,
    StaleVocabulary,
    graph_candidates,
    kg_candidates,
    load_vocab,
    node_embeddings,
)
from .modes import MODES, Scored, score, select
from .paths import PathScorer
from .result import RetrievalResult, RetrievedEdge, RetrievedNode, Timings

SCENE_GRAPH_DATASETS = ("gqa", "scene_graphs")
WHOLE_GRAPH_DATASETS = ("explagraphs",)


class RetrievalError(GrNeo4jError):
    """A question that cannot be answered from the database (unknown dataset, graph or entity...)."""


@dataclass(frozen=True)
class RetrievalParams:
    """Knobs of one retrieval; None means the default for the dataset.

    mode: see :mod:`gr_neo4j.retrieval.modes` (default: ``paths`` on knowledge graphs, ``whole``
        on ExplaGraphs, ``reference`` on other per-sample graphs).
    hops: expansion depth around the seeds on knowledge graphs (0..3).
    topk, topk_e, cost_e: G-Retriever's PCST parameters (3, 5 or 3 on scene graphs, 0.5).
    max_paths, node_budget: the ``paths`` mode keeps the ends of the ``max_paths`` relation paths
        most similar to the question, at most ``node_budget`` nodes in all.
    """

    mode: str | None = None
    hops: int = 2
    topk: int = 3
    topk_e: int | None = None
    cost_e: float = 0.5
    max_paths: int = 12
    node_budget: int = 30
    limits: CandidateLimits = CandidateLimits()

    def resolved(self, dataset: str, kind: str) -> RetrievalParams:
        mode = self.mode or ("paths" if kind == "knowledge-graph" else "whole" if dataset in WHOLE_GRAPH_DATASETS else "reference")
        if mode not in MODES:
            raise RetrievalError(f"unknown retrieval mode '{mode}' (one of {', '.join(MODES)})")
        if not 0 <= self.hops <= MAX_HOPS:
            raise RetrievalError(f"--hops must be between 0 and {MAX_HOPS}, got {self.hops}")
        if self.topk < 0 or (self.topk_e is not None and self.topk_e < 0) or self.cost_e < 0:
            raise RetrievalError("topk, topk_e and cost_e must not be negative")
        if self.max_paths < 1 or self.node_budget < 1:
            raise RetrievalError("max_paths and node_budget must be at least 1")
        topk_e = self.topk_e if self.topk_e is not None else (3 if dataset in SCENE_GRAPH_DATASETS else 5)
        limits = replace(self.limits, topk_nodes=self.topk, topk_edges=topk_e)
        return replace(self, mode=mode, topk_e=topk_e, limits=limits)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    kind: str
    embedder: str | None
    dimension: int | None


def kg_entity_uid(dataset: str, key: str) -> str:
    """The uid of a knowledge-graph entity (graph "" in the data model), escaped as the loader's."""
    return entity_uid(dataset, "", key)


class Retriever:
    """Retrieval with one connection, one read session and one embedder, reused across questions;
    it also keeps each dataset's relation vocabulary and the embeddings of relation-path texts."""

    def __init__(self, settings: Settings, conn: Connection | None = None, embedder: Embedder | None = None):
        self.settings = settings
        self._own_conn = conn is None
        self.conn = conn or connect(settings)
        self.embedder = embedder or load_embedder(settings)
        self._session: neo4j.Session | None = None
        self._datasets: dict[str, DatasetInfo] | None = None
        self._vocab: dict[str, RelationVocab] = {}
        self.paths = PathScorer(self.embed)

    # -- plumbing -------------------------------------------------------------------------------
    @property
    def session(self) -> neo4j.Session:
        if self._session is None or self._session.closed():
            self._session = self.conn.driver.session(database=self.conn.database, default_access_mode=neo4j.READ_ACCESS)
        return self._session

    def read(self, work):
        """Run ``work(tx)`` in a read transaction of the reused session."""
        return self.session.execute_read(work)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._own_conn:
            self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def datasets(self) -> dict[str, DatasetInfo]:
        if self._datasets is None:
            rows = self.read(lambda tx: list(tx.run(statement("retrieval_datasets"))))
            self._datasets = {r["name"]: DatasetInfo(r["name"], r["kind"], r["embedder"], r["dimension"]) for r in rows}
        return self._datasets

    def dataset(self, name: str | None) -> DatasetInfo:
        """The named dataset, or the only one loaded; checks it was embedded by our embedder."""
        known = self.datasets()
        if not known:
            raise RetrievalError("no dataset is loaded: load one first (`gr-neo4j load ...`)")
        if name is None:
            if len(known) > 1:
                raise RetrievalError(f"several datasets are loaded ({', '.join(known)}): choose one with --dataset")
            name = next(iter(known))
        info = known.get(name)
        if info is None:
            raise RetrievalError(f"no dataset '{name}' is loaded (loaded: {', '.join(known)})")
        if info.dimension is not None and info.dimension != self.embedder.dimension:
            raise RetrievalError(
                f"dataset '{name}' was embedded with {info.embedder} ({info.dimension}-d) but the configured "
                f"embedder {self.embedder.name} gives {self.embedder.dimension}-d vectors: set GR_NEO4J_EMBEDDER={info.embedder}"
            )
        return info

    def vocab(self, dataset: str, refresh: bool = False) -> RelationVocab:
        """The relation texts of a knowledge-graph dataset and their vectors, read once."""
        if refresh or dataset not in self._vocab:
            self._vocab[dataset] = self.read(lambda tx: load_vocab(tx, dataset))
        return self._vocab[dataset]

    def warm(self, dataset: str | None = None, hops: int = 0, max_path_texts: int = 2000) -> None:
        """Load what the first questions would otherwise pay for: the model, the session, the
        relation vocabulary and, when there are at most ``max_path_texts`` of them, the embeddings of
        every relation-path text up to ``hops`` relations (MetaQA: 9 + 81 + 729)."""
        info = self.dataset(dataset)
        self.embed(["warm up"])
        if info.kind != "knowledge-graph":
            return
        texts = self.vocab(info.name).texts
        if sum(len(texts) ** L for L in range(1, hops + 1)) <= max_path_texts:
            layer = [""]
            for _ in range(hops):
                layer = [f"{p} {t}".strip() for p in layer for t in texts]
                self.paths.vectors(layer)

    # -- retrieval ------------------------------------------------------------------------------
    def embed(self, questions: Sequence[str]) -> np.ndarray:
        """``[Q]`` questions -> ``[Q, D]`` unit vectors."""
        return self.embedder.encode(list(questions))

    def node_x(self, c: Candidates, nodes: np.ndarray) -> np.ndarray:
        """``[n, D]`` embeddings of the chosen nodes (fetched when the candidates came without them)."""
        if c.x is not None:
            return c.x[nodes]
        ids = [c.node_ids[n] for n in nodes]
        return self.read(lambda tx: node_embeddings(tx, ids, self.embedder.dimension))

    def candidates(
        self,
        info: DatasetInfo,
        q: np.ndarray,
        params: RetrievalParams,
        graph: str | None = None,
        entities: Sequence[str] = (),
        question_uid: str | None = None,
    ) -> Candidates:
        """The candidate graph (one read transaction); errors name what is unknown."""
        if info.kind == "per-sample":
            if graph is None:
                raise RetrievalError(f"dataset '{info.name}' holds one graph per sample: choose one with --graph ID")
            c = self.read(lambda tx: graph_candidates(tx, info.name, str(graph), q))
            if c.num_nodes == 0:
                raise RetrievalError(f"no graph '{graph}' in dataset '{info.name}'")
            return c
        if graph is not None:
            raise RetrievalError(f"dataset '{info.name}' is one knowledge graph: --graph does not apply (use --entity)")
        uids = [kg_entity_uid(info.name, e) for e in entities]
        try:
            vocab = self.vocab(info.name)
            c = self.read(lambda tx: kg_candidates(tx, info.name, q, params.hops, params.limits, vocab, uids, question_uid))
        except StaleVocabulary:  # relationships loaded since the vocabulary was read
            vocab = self.vocab(info.name, refresh=True)
            c = self.read(lambda tx: kg_candidates(tx, info.name, q, params.hops, params.limits, vocab, uids, question_uid))
        found = {c.node_keys[i] for i in c.topic}
        unknown = [e for e in entities if e not in found]
        if unknown:
            raise RetrievalError(f"unknown entit{'y' if len(unknown) == 1 else 'ies'} in dataset '{info.name}': " + ", ".join(repr(u) for u in unknown))
        if c.num_nodes == 0:
            raise RetrievalError(f"no candidates for this question in dataset '{info.name}' (is its vector index online?)")
        return c

    def retrieve(
        self,
        question: str,
        dataset: str | None = None,
        graph: str | None = None,
        entities: Sequence[str] = (),
        params: RetrievalParams = RetrievalParams(),
        question_uid: str | None = None,
        q: np.ndarray | None = None,
    ) -> RetrievalResult:
        """Retrieve the subgraph for ``question``; ``q`` (``[D]``) skips embedding when given."""
        if not question or not question.strip():
            raise RetrievalError("the question is empty")
        began = time.perf_counter()
        info = self.dataset(dataset)
        params = params.resolved(info.name, info.kind)
        if q is None:
            q = self.embed([question])[0]
        embedded = time.perf_counter()
        c = self.candidates(info, q, params, graph, entities, question_uid)
        fetched = time.perf_counter()
        s = score(c, q)
        nodes, edges = select(params.mode, c, s, params, self.paths)
        chosen = time.perf_counter()
        x = self.node_x(c, nodes)
        fetched_x = time.perf_counter()
        result = build_result(question, info.name, graph, params, c, s, nodes, edges, x)
        done = time.perf_counter()
        timings = Timings(
            embed_ms=1000 * (embedded - began),
            cypher_ms=1000 * (fetched - embedded + fetched_x - chosen),
            pcst_ms=1000 * (chosen - fetched),
            total_ms=1000 * (done - began),
        )
        return replace(result, timings=timings)


def build_result(
    question: str,
    dataset: str,
    graph: str | None,
    params: RetrievalParams,
    c: Candidates,
    s: Scored,
    nodes: np.ndarray,
    edges: np.ndarray,
    x: np.ndarray | None = None,
) -> RetrievalResult:
    """Assemble the typed result; node ids in ``desc`` are the sample's own indices on per-sample
    graphs (as G-Retriever writes them) and positions in the subgraph on knowledge graphs.
    ``x``: ``[n, D]`` embeddings of the chosen nodes; without them (and none in ``c``) ``data`` is None."""
    position = {int(n): i for i, n in enumerate(nodes)}
    topic = {int(t) for t in c.topic}
    out_nodes = [RetrievedNode(c.node_ids[n], c.node_keys[n], c.node_texts[n], float(s.node[n]), int(n) in topic) for n in nodes]
    edge_score = s.triple if params.mode in ("triples", "kaping") else s.edge
    out_edges = [
        RetrievedEdge(c.edge_ids[e], position[int(c.edge_index[0, e])], position[int(c.edge_index[1, e])], c.edge_texts[e], float(edge_score[e]))
        for e in edges
    ]
    if c.node_idx is not None:
        ids = [c.node_idx[n] for n in nodes]
        desc = textualize([n.text for n in out_nodes], [(ids[e.src], e.text, ids[e.dst]) for e in out_edges], node_ids=ids)
    else:
        desc = textualize([n.text for n in out_nodes], [(e.src, e.text, e.dst) for e in out_edges])
    edge_index = torch.tensor([[e.src for e in out_edges], [e.dst for e in out_edges]], dtype=torch.long).reshape(2, -1)
    if x is None and c.x is not None:
        x = c.x[nodes]
    data = None if x is None else to_data(torch.from_numpy(np.ascontiguousarray(x)), edge_index, torch.from_numpy(c.rel_attr[c.edge_rel[edges]]))
    return RetrievalResult(
        question=question,
        dataset=dataset,
        graph=graph,
        mode=params.mode,
        parameters=params.to_json(),
        nodes=out_nodes,
        edges=out_edges,
        desc=desc,
        data=data,
        timings=Timings(0, 0, 0, 0),
        candidates=(c.num_nodes, c.num_edges),
    )


def retrieve(
    settings: Settings,
    question: str,
    dataset: str | None = None,
    graph: str | None = None,
    entities: Sequence[str] = (),
    params: RetrievalParams = RetrievalParams(),
) -> RetrievalResult:
    """One-shot retrieval (opens and closes a connection); use :class:`Retriever` for many questions."""
    with Retriever(settings) as r:
        return r.retrieve(question, dataset, graph, entities, params)
