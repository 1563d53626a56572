"""Stage 1 of a retrieval, the candidate graph: its types, the `CandidateSource` protocol and
the Neo4j source, which fetches it in one read-only round trip.

A backend is one class with ``fetch``, ``node_embeddings`` and ``vocab`` (:class:`CandidateSource`):
:class:`Neo4jSource` here, :class:`~gr_neo4j.retrieval.inmemory.InMemoryKG` (the whole graph held
in numpy, the benchmark's baseline). The retriever checks the request against the dataset before it
asks the source and the candidates after, so a source only fetches.

Knowledge graphs: the k-hop neighbourhood (capped) of the topic entities and of the entities and
relationships most similar to the question (``cypher/retrieve_kg_candidates.cypher``). Only
texts, ids and each node's similarity to the question travel: the client keeps the few distinct
relation texts of the dataset and their embeddings (:class:`RelationVocab`), and fetches the
embeddings of the nodes it finally chose (for the ``Data``) in the same read transaction.
Per-sample graphs: the whole graph of one sample with its embeddings (``cypher/retrieve_graph.cypher``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeVar

import neo4j
import numpy as np

from ..connection import Connection
from ..cypher_store import statement
from ..errors import StaleVocabulary
from ..ingest.records import entity_uid
from ..schema import ENTITY_VECTOR_INDEX, REL_VECTOR_INDEX
from .fetch_plan import StepSchema
from .params import MAX_HOPS, CandidateLimits
from .zero_shot import EndType

T = TypeVar("T")
# The zero-shot scorer's end types (:mod:`.zero_shot`): END_TYPE_SAMPLE distinct end nodes, evenly
# spaced by uid, averaged per relation text and direction, among the first END_TYPE_SCAN
# relationships with that text (every one of MetaQA's; a larger text is sampled from the part the
# store gives first). Kept on the Dataset node as END_TYPES_FACT; the name changes with the way
# they are sampled, so a fact sampled the old way is not read.
END_TYPE_SAMPLE = 200
END_TYPE_SCAN = 200_000
END_TYPES_FACT = "end_types_by_uid"
KG_STATEMENT = "retrieve_kg_candidates"  # MAX_HOPS (params.py) is how often its hop block repeats
# A knowledge graph of at most this many entities (relationships) is searched exactly, not through
# the vector index all datasets share: a few milliseconds, and its seeds the same whatever else is
# loaded (the index's over-fetch can be all another dataset's, and it breaks ties its own way).
EXACT_SEARCH_MAX = 5000
# Relationships of a topic entity read for its relation steps (the fetch plan's starts); a hub
# with more is fetched unplanned.
TOPIC_STEP_SCAN = 5000


@dataclass(frozen=True)
class RelationVocab:
    """The distinct relation texts of a dataset and their embeddings ``[R, D]``, held by the client
    so that candidate graphs travel without embeddings."""

    texts: list[str]
    x: np.ndarray
    index: dict[str, int]

    @classmethod
    def of(cls, texts: list[str], x: np.ndarray) -> RelationVocab:
        return cls(list(texts), np.asarray(x, dtype=np.float32).reshape(len(texts), -1), {t: i for i, t in enumerate(texts)})

    def scores(self, q: np.ndarray, keep: int = 256) -> dict[str, float]:
        """Question similarity of the ``keep`` most similar relation texts (the expansion order)."""
        if not self.texts:
            return {}
        sims = self.x @ q
        top = np.argsort(-sims, kind="stable")[:keep]
        return {self.texts[i]: float(sims[i]) for i in top}


def load_vocab(tx: neo4j.ManagedTransaction, dataset: str) -> RelationVocab:
    """Every distinct relation text of ``dataset`` with its embedding (``retrieval_dump_rel_texts``)."""
    rows = list(tx.run(statement("retrieval_dump_rel_texts"), dataset=dataset))
    return RelationVocab.of([r["text"] for r in rows], np.asarray([r["embedding"] for r in rows], dtype=np.float32))


@dataclass(frozen=True)
class Candidates:
    """A candidate graph as parallel arrays (N nodes, E edges, R relation texts, D dimension).

    node_sim: ``[N]`` float32 cosine similarity of each node text to the question; x: ``[N, D]``
    node text embeddings when they came with the graph (per-sample graphs; None for knowledge
    graphs, whose chosen nodes' embeddings are fetched after the selection);
    edge_index: ``[2, E]`` int64 local node indices (head, tail); edge_rel: ``[E]`` index into
    ``rel_texts`` / ``rel_attr`` ``[R, D]``; topic: ``[T]`` local indices of the topic entities;
    node_idx: the node index inside a per-sample graph (None for knowledge graphs).
    """

    kind: str | None
    embedder: str | None
    dimension: int | None
    node_ids: list[str]
    node_keys: list[str]
    node_texts: list[str]
    node_sim: np.ndarray
    x: np.ndarray | None
    edge_ids: list[str]
    edge_index: np.ndarray
    edge_rel: np.ndarray
    rel_texts: list[str]
    rel_attr: np.ndarray
    topic: np.ndarray
    node_idx: list[int] | None = None
    # Results derived from this graph alone (e.g. its walks), kept so stages share them; a graph
    # made from this one by ``replace`` starts empty.
    memo: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def num_nodes(self) -> int:
        return len(self.node_ids)

    @property
    def num_edges(self) -> int:
        return len(self.edge_ids)

    @property
    def edge_texts(self) -> list[str]:
        return [self.rel_texts[i] for i in self.edge_rel]

    @property
    def edge_attr(self) -> np.ndarray:
        """``[E, D]`` relation text embedding of every edge."""
        return self.rel_attr[self.edge_rel]


@dataclass(frozen=True)
class DatasetInfo:
    """A loaded dataset as its ``Dataset`` node describes it."""

    name: str
    kind: str  # 'knowledge-graph' | 'per-sample'
    embedder: str | None
    dimension: int | None


@dataclass(frozen=True)
class CandidateQuery:
    """What a source needs to build one question's candidate graph.

    q: ``[D]`` unit question vector. graph: the sample of a per-sample dataset. topic_keys: topic
    entities by key; question_uid: a stored question whose ``TOPIC`` links add topic entities.
    allowed: a zero-shot :class:`~.fetch_plan.FetchPlan`'s relation texts per hop: the expansion
    starts from the topic entities only, hop ``d`` along ``allowed[d]``; None: from every seed,
    along every relation.
    """

    dataset: DatasetInfo
    q: np.ndarray
    hops: int
    limits: CandidateLimits
    graph: str | None = None
    topic_keys: Sequence[str] = ()
    question_uid: str | None = None
    allowed: tuple[tuple[str, ...], ...] | None = None


class CandidateSource(Protocol):
    """Where candidate graphs come from (a backend). ``fetch`` is one round trip at most."""

    def fetch(self, query: CandidateQuery) -> Candidates:
        """The candidate graph of ``query``; empty (no nodes) when nothing matches."""
        ...

    def node_embeddings(self, c: Candidates, nodes: np.ndarray) -> np.ndarray:
        """``[n, D]`` embeddings of the chosen ``nodes`` of ``c`` (called only when ``c.x`` is None)."""
        ...

    def vocab(self, dataset: str) -> RelationVocab:
        """The relation texts of a knowledge-graph dataset and their vectors."""
        ...

    def path_ends(self, c: Candidates, roots: np.ndarray, paths: list[list[tuple[str, bool]]], q: np.ndarray, max_rows: int) -> Candidates:
        """Every walk from the ``roots`` (indices into ``c``) along each relation path of ``paths``
        ([relation text, forward] steps), at most ``max_rows`` relationships per path and step, as a
        candidate graph in ``c``'s vocabulary (merge it with :func:`merge`). One round trip."""
        ...


class Neo4jSource:
    """Candidates from Neo4j (:class:`CandidateSource`), through one reused read session.

    The session takes the driver's ``execute_query`` bookmark manager, so a read here sees every
    write made through ``execute_query`` (the loader, ``ask``'s record) even on a ``neo4j://``
    cluster, whose read replicas may lag. It also keeps each dataset's relation vocabulary.
    """

    def __init__(self, conn: Connection):
        self.conn = conn
        self._session: neo4j.Session | None = None
        self._vocab: dict[str, RelationVocab] = {}
        self._exact: dict[str, tuple[bool, bool]] = {}
        self._end_types: dict[str, tuple[str | None, dict[tuple[str, bool], EndType | None]]] = {}  # with the load they are of
        self._schemas: dict[str, StepSchema] = {}
        self._datasets: dict[str, DatasetInfo] | None = None

    @property
    def session(self) -> neo4j.Session:
        if self._session is None or self._session.closed():
            driver = self.conn.driver
            self._session = driver.session(
                database=self.conn.database,
                default_access_mode=neo4j.READ_ACCESS,
                bookmark_manager=driver.execute_query_bookmark_manager,
            )
        return self._session

    def read(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        """Run ``work(tx)`` in a read transaction of the reused session."""
        return self.session.execute_read(work)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def datasets(self) -> dict[str, DatasetInfo]:
        """Every loaded dataset by name (read once)."""
        if self._datasets is None:
            rows = self.read(lambda tx: list(tx.run(statement("retrieval_datasets"))))
            self._datasets = {r["name"]: DatasetInfo(r["name"], r["kind"], r["embedder"], r["dimension"]) for r in rows}
        return self._datasets

    def graph_question(self, dataset: str, graph: str) -> str | None:
        """The question text stored with one graph of a per-sample dataset (None if there is none)."""
        rows = self.read(lambda tx: list(tx.run(statement("retrieval_graph_question"), dataset=dataset, graph=graph)))
        return rows[0]["text"] if rows else None

    def end_types(self, dataset: str, texts: Sequence[str]) -> dict[tuple[str, bool], EndType]:
        """(relation text, backwards) -> the :class:`~.zero_shot.EndType` of up to
        :data:`END_TYPE_SAMPLE` distinct nodes a step along that relation of ``dataset`` ends at:
        its tails forwards, its heads backwards. Computed once per text and kept on the Dataset
        node until its next load (the scan takes a second or two: every cold ``ask`` would pay it)."""
        if dataset not in self._end_types:
            stored, loaded_at = self.fact(dataset, END_TYPES_FACT)
            self._end_types[dataset] = loaded_at, {} if stored is None else {
                (t, bool(b)): None if e is None else EndType(np.asarray(e["vector"], dtype=np.float32), int(e["nodes"])) for t, b, e in stored}
        loaded_at, known = self._end_types[dataset]
        missing = [t for t in dict.fromkeys(texts) if (t, False) not in known]
        if missing:
            rows = self.read(lambda tx: list(tx.run(
                statement("retrieval_end_types"), dataset=dataset, texts=missing, sample=END_TYPE_SAMPLE, scan=END_TYPE_SCAN)))
            for row in rows:
                if row["vectors"]:
                    v = np.asarray(row["vectors"], dtype=np.float32).mean(0)
                    known[(row["text"], row["backwards"])] = EndType(v / max(float(np.linalg.norm(v)), 1e-12), len(row["vectors"]))
            for t in missing:
                known.setdefault((t, False), None)  # read, even when the text had no relationship
            self.keep_fact(dataset, END_TYPES_FACT, loaded_at, [
                [t, b, None if e is None else {"vector": e.vector.round(6).tolist(), "nodes": e.nodes}] for (t, b), e in known.items()])
        return {k: v for k in ((t, b) for t in texts for b in (False, True)) if (v := known.get(k)) is not None}

    def step_schema(self, dataset: str) -> StepSchema:
        """Which relation steps of knowledge-graph ``dataset`` can follow which
        (:class:`~.fetch_plan.StepSchema`): read once per process, and kept on the Dataset node
        until its next load (the read scans every relationship)."""
        if dataset not in self._schemas:
            stored, loaded_at = self.fact(dataset, "step_schema")
            if stored is not None:
                self._schemas[dataset] = StepSchema.from_json(stored)
            else:
                rows = self.read(lambda tx: list(tx.run(statement("retrieval_step_schema"), dataset=dataset)))
                self._schemas[dataset] = StepSchema.of([(r["ins"], r["outs"], r["entities"]) for r in rows])
                self.keep_fact(dataset, "step_schema", loaded_at, self._schemas[dataset].to_json())
        return self._schemas[dataset]

    def topic_steps(self, uids: Sequence[str]) -> dict[str, frozenset[tuple[str, bool]] | None]:
        """uid -> the (relation text, backwards) steps the entity has; None for one with more than
        :data:`TOPIC_STEP_SCAN` relationships (only some were read). An unknown uid is left out."""
        rows = self.read(lambda tx: list(tx.run(statement("retrieval_topic_steps"), uids=list(uids), scan=TOPIC_STEP_SCAN)))
        return {r["uid"]: None if r["read"] >= TOPIC_STEP_SCAN else frozenset((t, not forward) for t, forward in r["steps"]) for r in rows}

    def fact(self, dataset: str, key: str) -> tuple[object | None, str | None]:
        """The fact ``key`` kept on ``dataset`` (parsed JSON; None when absent or computed before
        the dataset's last load) and the load time a fact computed now is for."""
        row = self.read(lambda tx: tx.run(statement("retrieval_fact_get"), dataset=dataset, key=key).single())
        if row is None:
            return None, None
        kept = json.loads(row["fact"]) if row["fact"] else None
        fresh = isinstance(kept, dict) and kept.get("loaded_at") == row["loaded_at"]
        return (kept["value"] if fresh else None), row["loaded_at"]

    def keep_fact(self, dataset: str, key: str, loaded_at: str | None, value: object) -> None:
        """Keep ``value`` (JSON-ready) as fact ``key`` of ``dataset``, computed for its load at
        ``loaded_at``; nothing is kept where the user may not write or the dataset was loaded since."""
        if loaded_at is None:
            return
        try:
            self.conn.write("retrieval_fact_put", dataset=dataset, loaded_at=loaded_at,
                            fact={key: json.dumps({"loaded_at": loaded_at, "value": value})})
        except neo4j.exceptions.Neo4jError:
            pass  # a read-only user: computed again by the next process, nothing lost

    def exact_search(self, dataset: str) -> tuple[bool, bool]:
        """Whether ``dataset`` is small enough (:data:`EXACT_SEARCH_MAX`) to score its entities,
        relationships exactly; read once per dataset (a dataset that grows meanwhile is still right:
        the exact scan is slower, never wrong)."""
        if dataset not in self._exact:
            row = self.read(lambda tx: tx.run(statement("retrieval_dataset_small"), dataset=dataset, exact_max=EXACT_SEARCH_MAX).single(strict=True))
            self._exact[dataset] = (bool(row["exact_nodes"]), bool(row["exact_rels"]))
        return self._exact[dataset]

    def vocab(self, dataset: str, refresh: bool = False) -> RelationVocab:
        if refresh or dataset not in self._vocab:
            self._vocab[dataset] = self.read(lambda tx: load_vocab(tx, dataset))
        return self._vocab[dataset]

    def fetch(self, query: CandidateQuery) -> Candidates:
        info = query.dataset
        if info.kind == "per-sample":
            return self.read(lambda tx: graph_candidates(tx, info.name, str(query.graph), query.q))
        uids = [entity_uid(info.name, "", k) for k in query.topic_keys]

        def run(vocab: RelationVocab) -> Candidates:
            exact = self.exact_search(info.name)
            return self.read(lambda tx: kg_candidates(tx, info.name, query.q, query.hops, query.limits, vocab, uids, query.question_uid, exact, query.allowed))

        try:
            return run(self.vocab(info.name))
        except StaleVocabulary:  # relationships loaded since the vocabulary was read
            return run(self.vocab(info.name, refresh=True))

    def path_ends(self, c: Candidates, roots: np.ndarray, paths: list[list[tuple[str, bool]]], q: np.ndarray, max_rows: int) -> Candidates:
        params = {
            "roots": [c.node_ids[i] for i in roots],
            "paths": [[[text, forward] for text, forward in steps] for steps in paths],
            "max_rows": max_rows,
            "q": [float(v) for v in q],
        }
        r = self.read(lambda tx: tx.run(statement("retrieve_path_ends"), params).single(strict=True))
        texts = list(c.rel_texts)
        index = {t: i for i, t in enumerate(texts)}
        keep = [i for i, t in enumerate(r["edge_texts"]) if t in index]  # a text loaded since: not in c's vocabulary
        local = {eid: i for i, eid in enumerate(r["node_ids"])}
        return replace(
            c,
            node_ids=r["node_ids"],
            node_keys=r["node_keys"],
            node_texts=r["node_texts"],
            node_sim=(2 * np.asarray(r["node_sims"], dtype=np.float32) - 1).astype(np.float32),
            edge_ids=[r["edge_ids"][i] for i in keep],
            edge_index=_edge_index(local, [r["edge_heads"][i] for i in keep], [r["edge_tails"][i] for i in keep]),
            edge_rel=np.array([index[r["edge_texts"][i]] for i in keep], dtype=np.int64),
            topic=np.zeros(0, dtype=np.int64),
        )

    def node_embeddings(self, c: Candidates, nodes: np.ndarray) -> np.ndarray:
        ids = [c.node_ids[n] for n in nodes]
        return self.read(lambda tx: node_embeddings(tx, ids, c.dimension or 0))


def kg_candidates(
    tx: neo4j.ManagedTransaction,
    dataset: str,
    q: np.ndarray,
    hops: int,
    limits: CandidateLimits,
    vocab: RelationVocab,
    topic_uids: list[str] = (),
    question_uid: str | None = None,
    exact: tuple[bool, bool] = (False, False),
    allowed: Sequence[Sequence[str]] | None = None,
) -> Candidates:
    """Run ``retrieve_kg_candidates`` in ``tx`` (a read transaction); ``q`` is the ``[D]`` question
    vector; ``exact``: score the dataset's entities, relationships exactly rather than through the
    shared vector indexes (a small dataset, :meth:`Neo4jSource.exact_search`); ``allowed``: per
    hop, the relation texts a walk from the topics may follow (:class:`CandidateQuery`). Raises
    :class:`StaleVocabulary` when an edge text is missing from ``vocab``."""
    if not 0 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be between 0 and {MAX_HOPS}, got {hops}")
    if allowed is not None and len(allowed) < hops:
        raise ValueError(f"{hops} hops need as many lists of allowed relation texts, got {len(allowed)}")
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
        rel_scores=vocab.scores(q),
        entity_index=ENTITY_VECTOR_INDEX,
        rel_index=REL_VECTOR_INDEX,
        exact_nodes=exact[0],
        exact_rels=exact[1],
        topic_uids=list(topic_uids),
        question_uid=question_uid,
        allowed=None if allowed is None else [list(texts) for texts in allowed],
    )
    r = tx.run(statement(KG_STATEMENT), params).single(strict=True)
    node_ids = r["node_ids"]
    local = {eid: i for i, eid in enumerate(node_ids)}
    try:
        edge_rel = np.array([vocab.index[t] for t in r["edge_texts"]], dtype=np.int64)
    except KeyError as exc:
        raise StaleVocabulary(exc.args[0]) from None
    # vector.similarity.cosine is (1 + cos) / 2; back to the cosine the selections use.
    node_sim = 2 * np.asarray(r["node_sims"], dtype=np.float32) - 1
    return Candidates(
        kind=r["kind"],
        embedder=r["embedder"],
        dimension=r["dimension"],
        node_ids=node_ids,
        node_keys=r["node_keys"],
        node_texts=r["node_texts"],
        node_sim=node_sim.astype(np.float32),
        x=None,
        edge_ids=r["edge_ids"],
        edge_index=_edge_index(local, r["edge_heads"], r["edge_tails"]),
        edge_rel=edge_rel,
        rel_texts=vocab.texts,
        rel_attr=vocab.x,
        topic=np.array([local[t] for t in r["topic_ids"] if t in local], dtype=np.int64),
    )


def merge(c: Candidates, extra: Candidates) -> Candidates:
    """``c`` with the nodes and edges of ``extra`` that it lacks (ids say which; both in the same
    relation vocabulary). ``c``'s indices are kept; new nodes and edges come after."""
    local = {nid: i for i, nid in enumerate(c.node_ids)}
    new_nodes = [i for i, nid in enumerate(extra.node_ids) if nid not in local]
    for i in new_nodes:
        local[extra.node_ids[i]] = len(local)
    known = set(c.edge_ids)
    new_edges = [e for e, eid in enumerate(extra.edge_ids) if eid not in known]
    if not new_nodes and not new_edges:
        return c
    heads = [local[extra.node_ids[h]] for h in extra.edge_index[0, new_edges]]
    tails = [local[extra.node_ids[t]] for t in extra.edge_index[1, new_edges]]
    x = None
    if c.x is not None and extra.x is not None:
        x = np.concatenate([c.x, extra.x[new_nodes]])
    return replace(
        c,
        node_ids=c.node_ids + [extra.node_ids[i] for i in new_nodes],
        node_keys=c.node_keys + [extra.node_keys[i] for i in new_nodes],
        node_texts=c.node_texts + [extra.node_texts[i] for i in new_nodes],
        node_sim=np.concatenate([c.node_sim, extra.node_sim[new_nodes]]).astype(np.float32),
        x=x,
        edge_ids=c.edge_ids + [extra.edge_ids[e] for e in new_edges],
        edge_index=np.concatenate([c.edge_index, np.array([heads, tails], dtype=np.int64).reshape(2, -1)], axis=1),
        edge_rel=np.concatenate([c.edge_rel, extra.edge_rel[new_edges]]).astype(np.int64),
    )


def node_embeddings(tx: neo4j.ManagedTransaction, element_ids: list[str], dim: int) -> np.ndarray:
    """``[n, D]`` embeddings of the given nodes, in order (``retrieval_node_embeddings``)."""
    if not element_ids:
        return np.zeros((0, dim), dtype=np.float32)
    rows = {r["i"]: r["embedding"] for r in tx.run(statement("retrieval_node_embeddings"), ids=list(element_ids))}
    return np.asarray([rows[i] for i in range(len(element_ids))], dtype=np.float32)


def graph_candidates(tx: neo4j.ManagedTransaction, dataset: str, graph: str, q: np.ndarray) -> Candidates:
    """Run ``retrieve_graph`` in ``tx``: every node and relationship of one per-sample graph, with
    embeddings (small graphs; scored exactly in-process against ``q`` ``[D]``)."""
    r = tx.run(statement("retrieve_graph"), dataset=dataset, graph=graph).single(strict=True)
    node_ids = r["node_ids"]
    local = {eid: i for i, eid in enumerate(node_ids)}
    dim = r["dimension"]
    x = _matrix(r["node_embeddings"], dim)
    edge_x = _matrix(r["edge_embeddings"], dim or x.shape[1])
    texts = r["edge_texts"]
    first = {}
    for i, t in enumerate(texts):
        first.setdefault(t, i)
    rel_texts = list(first)
    rel_attr = edge_x[list(first.values())] if rel_texts else np.zeros((0, edge_x.shape[1]), dtype=np.float32)
    index = {t: i for i, t in enumerate(rel_texts)}
    return Candidates(
        kind=r["kind"],
        embedder=r["embedder"],
        dimension=dim,
        node_ids=node_ids,
        node_keys=r["node_keys"],
        node_texts=r["node_texts"],
        node_sim=(x @ q).astype(np.float32) if len(node_ids) else np.zeros(0, dtype=np.float32),
        x=x,
        edge_ids=r["edge_ids"],
        edge_index=_edge_index(local, r["edge_heads"], r["edge_tails"]),
        edge_rel=np.array([index[t] for t in texts], dtype=np.int64),
        rel_texts=rel_texts,
        rel_attr=rel_attr,
        topic=np.zeros(0, dtype=np.int64),
        node_idx=r["node_idx"],
    )


def _matrix(rows: list, dim: int | None) -> np.ndarray:
    if not rows:
        return np.zeros((0, dim or 0), dtype=np.float32)
    return np.asarray(rows, dtype=np.float32)


def _edge_index(local: dict[str, int], heads: list[str], tails: list[str]) -> np.ndarray:
    return np.array([[local[h] for h in heads], [local[t] for t in tails]], dtype=np.int64).reshape(2, -1)
