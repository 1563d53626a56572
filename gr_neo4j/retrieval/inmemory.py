"""The whole knowledge graph held in Python: the baseline the Neo4j pipeline is measured against.

`InMemoryKG` is a :class:`~gr_neo4j.retrieval.candidates.CandidateSource`: give it to
``Retriever(settings, source=kg)`` and the same pipeline (selection, text, Data) runs on it. It keeps every entity embedding ``[N, D]``, the relation-text embeddings (one row per
distinct text) and a CSR adjacency, and builds the same candidate graph as
``cypher/retrieve_kg_candidates.cypher``: exact top-k entities and relationships, then up to
``hops`` hops from the seeds, at most ``fanout`` relationships per node, rows kept in the same
order (topic before vector hit, hub detours last, relation relevance, low degree) under the same
exact caps. Only the order in which a node's relationships are met can differ
(Neo4j's storage order), which matters only for nodes above the fan-out cap.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from ..ingest.records import entity_uid
from .candidates import CandidateLimits, CandidateQuery, Candidates, RelationVocab

DUMP_PAGE = 20000


def _paged(conn, name: str, dataset: str):
    """Every row of a dump statement, read in pages of DUMP_PAGE ordered by uid (keyset paging:
    each page starts after the last uid of the one before). The knowledge graph's uids start with
    the loader's escaped ``dataset||`` (a dataset name may hold ``|``)."""
    last, prefix = "", entity_uid(dataset, "", "")
    while rows := conn.read(name, prefix=prefix, after=last, page=DUMP_PAGE):
        yield from rows
        last = rows[-1]["uid"]


@dataclass
class InMemoryKG:
    """Parallel arrays of one knowledge-graph dataset (N entities, E relationships, R relation texts)."""

    keys: list[str]
    texts: list[str]
    x: np.ndarray  # [N, D]
    heads: np.ndarray  # [E]
    tails: np.ndarray  # [E]
    rel_of_edge: np.ndarray  # [E] index into rel_texts
    rel_texts: list[str]
    rel_x: np.ndarray  # [R, D]
    indptr: np.ndarray  # [N + 1] CSR over incident edges (both directions)
    incident: np.ndarray  # [2E] edge ids

    @classmethod
    def from_arrays(cls, keys, texts, x, heads, tails, rel_of_edge, rel_texts, rel_x) -> InMemoryKG:
        heads, tails = np.asarray(heads, dtype=np.int64), np.asarray(tails, dtype=np.int64)
        ends = np.concatenate([heads, tails])
        edge_ids = np.concatenate([np.arange(len(heads)), np.arange(len(tails))])
        order = np.argsort(ends, kind="stable")
        indptr = np.zeros(len(keys) + 1, dtype=np.int64)
        np.add.at(indptr, ends + 1, 1)
        return cls(list(keys), list(texts), np.asarray(x, dtype=np.float32), heads, tails, np.asarray(rel_of_edge, dtype=np.int64),
                   list(rel_texts), np.asarray(rel_x, dtype=np.float32), np.cumsum(indptr), edge_ids[order])

    @classmethod
    def from_neo4j(cls, conn, dataset: str) -> InMemoryKG:
        """Read the whole dataset (entities with embeddings, relationships) out of Neo4j, page by page."""
        keys, texts, vecs, page = [], [], [], []
        for r in _paged(conn, "retrieval_dump_entities", dataset):
            keys.append(r["key"])
            texts.append(r["text"])
            page.append(r["embedding"])
            if len(page) == DUMP_PAGE:  # float32 per page: lists of Python floats take 8x the memory
                vecs.append(np.asarray(page, dtype=np.float32))
                page = []
        vecs.append(np.asarray(page, dtype=np.float32).reshape(len(page), -1))
        index = {k: i for i, k in enumerate(keys)}
        rel_rows = conn.read("retrieval_dump_rel_texts", dataset=dataset)
        rel_index = {r["text"]: i for i, r in enumerate(rel_rows)}
        rel_vecs = [r["embedding"] for r in rel_rows]
        heads, tails, rels = [], [], []
        for r in _paged(conn, "retrieval_dump_rels", dataset):
            heads.append(index[r["head"]])
            tails.append(index[r["tail"]])
            rels.append(rel_index[r["text"]])
        x = np.concatenate([v for v in vecs if len(v)]) if keys else np.zeros((0, 0), dtype=np.float32)
        return cls.from_arrays(keys, texts, x, heads, tails, rels, list(rel_index), np.asarray(rel_vecs, dtype=np.float32))

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.x, self.heads, self.tails, self.rel_of_edge, self.rel_x, self.indptr, self.incident))

    @cached_property
    def key_index(self) -> dict[str, int]:
        """Entity key -> row, built once (not per question: at 1M entities that is 0.2 s)."""
        return {k: i for i, k in enumerate(self.keys)}

    def degree(self, n: int) -> int:
        return int(self.indptr[n + 1] - self.indptr[n])

    def vocab(self, dataset: str | None = None) -> RelationVocab:
        """The relation texts and their vectors (one dataset is held: ``dataset`` is not used)."""
        return RelationVocab.of(self.rel_texts, self.rel_x)

    # -- CandidateSource ----------------------------------------------------------------------------
    def fetch(self, query: CandidateQuery) -> Candidates:
        """The candidate graph of ``query`` (topic entities by key: stored questions are not held
        here, so ``question_uid`` is refused rather than ignored)."""
        if query.question_uid is not None:
            raise ValueError("the in-memory graph holds no questions: pass the topic entities by key")
        if query.dataset.kind != "knowledge-graph":
            raise ValueError(f"the in-memory graph holds a knowledge graph, not {query.dataset.kind} dataset {query.dataset.name!r}")
        return self.candidates(query.q, query.hops, query.limits, query.topic_keys, query.allowed)

    def node_embeddings(self, c: Candidates, nodes: np.ndarray) -> np.ndarray:
        return c.x[nodes]

    def path_ends(self, c: Candidates, roots: np.ndarray, paths: list[list[tuple[str, bool]]], q: np.ndarray, max_rows: int) -> Candidates:
        """Every walk along ``paths`` from the ``roots`` (see :meth:`CandidateSource.path_ends`)."""
        rel_index = {t: i for i, t in enumerate(self.rel_texts)}
        start = [int(c.node_ids[i]) for i in roots]
        root_set = set(start)
        edges: dict[int, None] = {}
        for steps in paths:
            front = list(dict.fromkeys(start))
            for text, forward in steps:
                rel, rows, nxt = rel_index.get(text, -1), 0, {}
                for a in front:
                    for e in self.incident[self.indptr[a] : self.indptr[a + 1]].tolist():
                        if self.rel_of_edge[e] != rel or (int(self.heads[e]) == a) != forward or rows >= max_rows:
                            continue
                        b = int(self.tails[e] if forward else self.heads[e])
                        if b in root_set:
                            continue
                        edges[e] = None
                        nxt[b] = None
                        rows += 1
                front = list(nxt)
        e = np.asarray(list(edges), dtype=np.int64)
        nodes = list(dict.fromkeys(np.concatenate([self.heads[e], self.tails[e]]).tolist()))
        local = {n: i for i, n in enumerate(nodes)}
        return replace(
            c,
            node_ids=[str(n) for n in nodes],
            node_keys=[self.keys[n] for n in nodes],
            node_texts=[self.texts[n] for n in nodes],
            node_sim=(self.x[nodes] @ q).astype(np.float32) if nodes else np.zeros(0, dtype=np.float32),
            x=self.x[nodes] if nodes else np.zeros((0, self.x.shape[1]), dtype=np.float32),
            edge_ids=[str(i) for i in edges],
            edge_index=np.array([[local[int(h)] for h in self.heads[e]], [local[int(t)] for t in self.tails[e]]], dtype=np.int64).reshape(2, -1),
            edge_rel=self.rel_of_edge[e],
            topic=np.zeros(0, dtype=np.int64),
        )

    def candidates(self, q: np.ndarray, hops: int, limits: CandidateLimits, topic_keys=(), allowed=None) -> Candidates:
        """The candidate graph of question vector ``q`` ``[D]`` (see the module doc); ``allowed``:
        per hop, the relation texts a walk from the topics may follow (None: every seed expands
        along every relation; see :class:`~.candidates.CandidateQuery`)."""
        index = self.key_index if topic_keys else {}
        topics = list(dict.fromkeys(index[k] for k in topic_keys if k in index))
        node_sim = self.x @ q
        top_nodes = np.argsort(-node_sim, kind="stable")[: limits.topk_nodes].tolist()
        edge_sim = (self.rel_x @ q)[self.rel_of_edge]
        top_edges = np.argsort(-edge_sim, kind="stable")[: limits.topk_edges].tolist()
        rel_scores = self.vocab().scores(q)
        rel_score = np.array([rel_scores.get(t, 0.0) for t in self.rel_texts], dtype=np.float64)
        seeds = list(dict.fromkeys(topics + top_nodes + [int(self.heads[e]) for e in top_edges] + [int(self.tails[e]) for e in top_edges]))
        topic_set = set(topics)
        seen = dict.fromkeys(seeds if allowed is None else topics)  # planned: from the topics only
        held = len(seeds) - len(seen)  # vector hits added after a planned walk
        taken = list(top_edges)
        front = [(s, 0 if s in topic_set else 1, 0, 0.0) for s in seen]
        for depth in range(hops):
            rows = []
            follow = None if allowed is None else np.isin(self.rel_texts, list(allowed[depth]))  # [R]
            order = sorted((origin, 1 if via or self.degree(a) > limits.fanout else 0, -relevance, self.degree(a), i, a) for i, (a, origin, via, relevance) in enumerate(front))
            for origin, via_hub, neg, _, _, a in order:
                incident = self.incident[self.indptr[a] : self.indptr[a + 1]]
                if follow is not None:
                    incident = incident[follow[self.rel_of_edge[incident]]]
                for e in incident[: limits.fanout].tolist():
                    b = int(self.tails[e] if self.heads[e] == a else self.heads[e])
                    rows.append((origin, via_hub, neg - rel_score[self.rel_of_edge[e]], e, b))
                if len(rows) >= limits.max_edges:
                    break
            rows = rows[: limits.max_edges][: max(0, limits.max_nodes - held - len(seen))][: max(0, limits.max_edges - len(taken))]
            taken.extend(r[3] for r in rows)
            best = {}
            for origin, via_hub, neg, _, b in rows:
                if b not in seen and b not in best:
                    best[b] = (b, origin, via_hub, -neg)
            seen.update(dict.fromkeys(best))
            front = list(best.values())
        seen.update(dict.fromkeys(seeds))
        nodes = list(seen)
        local = {n: i for i, n in enumerate(nodes)}
        edges = list(dict.fromkeys(taken))
        e = np.asarray(edges, dtype=np.int64)
        return Candidates(
            kind="knowledge-graph",
            embedder=None,
            dimension=self.x.shape[1],
            node_ids=[str(n) for n in nodes],
            node_keys=[self.keys[n] for n in nodes],
            node_texts=[self.texts[n] for n in nodes],
            node_sim=node_sim[nodes].astype(np.float32),
            x=self.x[nodes],
            edge_ids=[str(i) for i in edges],
            edge_index=np.array([[local[int(h)] for h in self.heads[e]], [local[int(t)] for t in self.tails[e]]], dtype=np.int64).reshape(2, -1),
            edge_rel=self.rel_of_edge[e],
            rel_texts=self.rel_texts,
            rel_attr=self.rel_x,
            topic=np.array([local[t] for t in topics], dtype=np.int64),
        )
