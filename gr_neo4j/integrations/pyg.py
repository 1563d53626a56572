"""A dataset in Neo4j as PyG's RAG backend: ``RAGQueryLoader`` over gr-neo4j's retrieval.

    from torch_geometric.llm import RAGQueryLoader
    from gr_neo4j.integrations.pyg import neo4j_rag_stores

    stores, local_filter = neo4j_rag_stores(dataset="metaqa")
    loader = RAGQueryLoader(stores, subgraph_filter=local_filter)
    data = loader.query("which movies did Christopher Nolan direct")   # a Data for PyG's GRetriever

``RAGQueryLoader.query`` runs three steps; here each is gr-neo4j's own:

1. :meth:`Neo4jFeatureStore.retrieve_seed_nodes` links the entities the question names and fetches
   them, the nodes and edges most similar to the question and their k-hop neighbourhood in one
   Cypher round trip (``Retriever.fetch``); the seeds are the topic entities (else the most similar
   nodes);
2. :meth:`Neo4jGraphStore.sample_subgraph` returns that neighbourhood as a ``SamplerOutput``: the
   k-hop sample was made in Cypher with the seeds, so nothing is sampled twice;
3. :meth:`Neo4jFeatureStore.load_subgraph` builds the candidate ``Data``: ``edge_index`` ``[2, E]``,
   ``edge_attr`` ``[E, D]`` (relation embeddings), ``node_sim`` ``[N]`` (cosine to the question),
   ``x`` ``[N, D]`` where the candidates carry their embeddings (per-sample graphs);
4. the local filter :class:`GRetrieverFilter` selects as ``Retriever.retrieve`` does (``paths`` or
   ``pcst``) and returns the same ``Data`` it builds: ``x`` ``[n, D]``, ``edge_index`` ``[2, m]``,
   ``edge_attr`` ``[m, D]``, with ``question``, ``desc`` (the textualized subgraph), ``node_keys``,
   ``n_id`` and ``e_id`` (global ids in the stores' numbering).

Node and edge ids are numbered by the feature store in the order it first meets them (the whole
graph is never materialised in Python); :meth:`Neo4jFeatureStore.element_ids` maps them back to
Neo4j element ids. The graph store's ``edge_index`` is therefore empty: its edges stay in Neo4j.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.sampler import SamplerOutput

from ..errors import UsageError
from ..retrieval import RetrievalParams, RetrievalResult, Retriever
from ..retrieval.retriever import Fetched
from ..settings import Settings, load_settings

CACHED_QUESTIONS = 64  # fetches kept for the filter to select from (RAGQueryLoader asks one at a time)


class Neo4jFeatureStore:
    """PyG's ``RAGFeatureStore`` protocol over a dataset loaded by gr-neo4j.

    ``config`` keys (all optional): ``dataset``, ``params`` (a :class:`RetrievalParams`),
    ``entities`` (the names to start from instead of linking them from the question).
    """

    def __init__(self, retriever: Retriever, dataset: str | None = None, params: RetrievalParams | None = None):
        self.retriever = retriever
        self._config: dict[str, Any] = {"dataset": dataset, "params": params or RetrievalParams(), "entities": ()}
        self._node_ids: dict[str, int] = {}
        self._edge_ids: dict[str, int] = {}
        self._fetched: OrderedDict[str, tuple[Fetched, Tensor, Tensor]] = OrderedDict()

    @property
    def config(self) -> dict[str, Any]:
        return self._config

    @config.setter
    def config(self, config: dict[str, Any] | None) -> None:
        # RAGQueryLoader sets its own config (None by default) on both stores.
        unknown = set(config or {}) - {"dataset", "params", "entities"}
        if unknown:
            raise UsageError(f"unknown Neo4jFeatureStore config keys: {', '.join(sorted(unknown))} (known: dataset, params, entities)")
        self._config = {**self._config, **(config or {})}

    def retrieve_seed_nodes(self, query: str, **kwargs: Any) -> tuple[Tensor, Tensor]:
        """Fetch ``query``'s candidate graph; return its seed nodes' global ids ``[S]`` and the
        question's embedding ``[D]``."""
        if not isinstance(query, str):
            raise UsageError("Neo4jFeatureStore answers one question (a str) per query")
        f = self.retriever.fetch(query, self._config["dataset"], None, tuple(self._config["entities"]), self._config["params"])
        c = f.candidates
        nodes, edges = self.node_numbers(c.node_ids), self.edge_numbers(c.edge_ids)
        self._fetched[query] = (f, nodes, edges)
        while len(self._fetched) > CACHED_QUESTIONS:
            self._fetched.popitem(last=False)
        # Topic entities where linked or named; else the nodes most similar to the question.
        seeds = c.topic if len(c.topic) else np.argsort(-f.scored.node)[: f.params.topk]
        return nodes[torch.as_tensor(np.asarray(seeds, dtype=np.int64))], torch.from_numpy(np.asarray(f.scored.q, dtype=np.float32))

    def retrieve_seed_edges(self, query: str, **kwargs: Any) -> Tensor:
        """The global ids ``[K]`` of the ``topk_e`` candidate edges most similar to ``query``."""
        f, _, edges = self.fetched(query)
        best = np.argsort(-f.scored.edge)[: f.params.topk_e or 0]
        return edges[torch.as_tensor(best.astype(np.int64))]

    def load_subgraph(self, sample: SamplerOutput) -> Data:
        """The candidate graph of ``sample`` (see the module docstring for its fields)."""
        question = sample.metadata
        f, _, _ = self.fetched(question)
        c = f.candidates
        data = Data(edge_index=torch.stack([sample.row, sample.col]), edge_attr=torch.from_numpy(c.rel_attr[c.edge_rel]),
                    node_sim=torch.from_numpy(np.asarray(f.scored.node, dtype=np.float32)), n_id=sample.node, e_id=sample.edge,
                    num_nodes=c.num_nodes)
        if c.x is not None:
            data.x = torch.from_numpy(c.x)
        data.question, data.node_keys, data.node_texts = question, list(c.node_keys), list(c.node_texts)
        return data

    def fetched(self, question: str) -> tuple[Fetched, Tensor, Tensor]:
        """The fetch of ``question`` and its nodes' and edges' global ids, as the seeds left them."""
        try:
            return self._fetched[question]
        except KeyError:
            raise UsageError(f"no seeds were retrieved for {question!r}: call retrieve_seed_nodes first") from None

    def sample_of(self, seed_nodes: Tensor) -> SamplerOutput:
        """The candidate graph that was fetched with ``seed_nodes`` (the latest question whose
        candidates hold them all), as a ``SamplerOutput`` whose ``metadata`` is the question."""
        wanted = set(seed_nodes.tolist())
        for question, (f, nodes, edges) in reversed(self._fetched.items()):
            if wanted <= set(nodes.tolist()):
                index = torch.from_numpy(np.asarray(f.candidates.edge_index, dtype=np.int64)).reshape(2, -1)
                return SamplerOutput(node=nodes, row=index[0], col=index[1], edge=edges, metadata=question)
        raise UsageError("these seeds come from no question the feature store retrieved: call retrieve_seed_nodes first")

    def element_ids(self, n_id: Tensor) -> list[str]:
        """The Neo4j element ids of global node ids."""
        names = list(self._node_ids)
        return [names[i] for i in n_id.tolist()]

    def node_numbers(self, element_ids: list[str]) -> Tensor:
        """The global ids ``[n]`` of nodes by Neo4j element id, numbering those met for the first time."""
        return _number(self._node_ids, element_ids)

    def edge_numbers(self, element_ids: list[str]) -> Tensor:
        """The global ids ``[m]`` of relationships by Neo4j element id, as :meth:`node_numbers`."""
        return _number(self._edge_ids, element_ids)


class Neo4jGraphStore:
    """PyG's ``RAGGraphStore`` protocol: the k-hop sample of the seeds, as Cypher fetched it."""

    def __init__(self) -> None:
        self.feature_store: Neo4jFeatureStore | None = None
        self._config: dict[str, Any] = {}

    @property
    def config(self) -> dict[str, Any]:
        return self._config

    @config.setter
    def config(self, config: dict[str, Any] | None) -> None:
        self._config = dict(config or {})

    @property
    def edge_index(self) -> Tensor:
        """Empty ``[2, 0]``: the graph's edges stay in Neo4j (RAGQueryLoader reads and re-sets this)."""
        return torch.empty(2, 0, dtype=torch.long)

    @edge_index.setter
    def edge_index(self, value: Tensor) -> None:
        pass

    def register_feature_store(self, feature_store: Neo4jFeatureStore) -> None:
        self.feature_store = feature_store

    def sample_subgraph(self, seed_nodes: Tensor, seed_edges: Tensor | None = None, **kwargs: Any) -> SamplerOutput:
        """The candidate graph fetched with ``seed_nodes``: ``node`` global ids ``[N]``, ``row``/``col``
        local indices ``[E]``, ``edge`` global ids ``[E]``; ``metadata`` is the question."""
        if self.feature_store is None:
            raise UsageError("no feature store registered: build the stores with neo4j_rag_stores()")
        return self.feature_store.sample_of(seed_nodes)


class GRetrieverFilter:
    """RAGQueryLoader's local filter: gr-neo4j's selection (``paths`` or ``pcst``, as the params
    say) on the candidate graph, returning the ``Data`` that ``Retriever.retrieve`` builds."""

    def __init__(self, feature_store: Neo4jFeatureStore):
        self.feature_store = feature_store

    def __call__(self, data: Data, query: str) -> Data:
        return self.select(query)[1]

    def select(self, query: str) -> tuple[RetrievalResult, Data]:
        """``Retriever.choose`` on ``query``'s fetch: the typed result and its ``Data`` with
        ``question``, ``desc``, ``node_keys`` and the global ``n_id`` ``[n]`` / ``e_id`` ``[m]``."""
        fs = self.feature_store
        f, _, _ = fs.fetched(query)
        result = fs.retriever.choose(f)
        data = result.data.clone()
        # The paths mode may complete its best paths with a second read: ids for what that adds too.
        data.n_id = fs.node_numbers([n.element_id for n in result.nodes])
        data.e_id = fs.edge_numbers([e.element_id for e in result.edges])
        data.question, data.desc, data.node_keys = result.question, result.desc, [n.key for n in result.nodes]
        return result, data


def _number(numbering: dict[str, int], element_ids: list[str]) -> Tensor:
    return torch.tensor([numbering.setdefault(e, len(numbering)) for e in element_ids], dtype=torch.long)


def neo4j_rag_stores(settings: Settings | None = None, dataset: str | None = None, params: RetrievalParams | None = None,
                     retriever: Retriever | None = None) -> tuple[tuple[Neo4jFeatureStore, Neo4jGraphStore], GRetrieverFilter]:
    """``((feature_store, graph_store), local_filter)`` for ``RAGQueryLoader`` over ``dataset``.

    ``retriever``: a gr-neo4j ``Retriever`` to use (its owner closes it); else one is opened on
    ``settings`` (default ``load_settings()``), closed by ``feature_store.retriever.close()``.
    """
    retriever = retriever or Retriever(settings or load_settings())
    fs, gs = Neo4jFeatureStore(retriever, dataset, params), Neo4jGraphStore()
    gs.register_feature_store(fs)
    return (fs, gs), GRetrieverFilter(fs)


__all__ = ["GRetrieverFilter", "Neo4jFeatureStore", "Neo4jGraphStore", "neo4j_rag_stores"]
