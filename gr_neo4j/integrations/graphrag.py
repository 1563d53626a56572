"""gr-neo4j's retrieval as a neo4j-graphrag ``Retriever`` (``pip install gr-neo4j[graphrag]``).

    from neo4j_graphrag.generation import GraphRAG
    from gr_neo4j.integrations.graphrag import GRetrieverRetriever

    with GRetrieverRetriever(dataset="metaqa") as retriever:
        rag = GraphRAG(retriever=retriever, llm=my_llm)
        reply = rag.search("who directed Heat", return_context=True)

Each search returns one item per answer the graph gives (``content`` its supporting path), one
with the textualized subgraph, or one saying the question is not in the graph; the result's
metadata holds the Retrieval id and the Cypher that shows it in Neo4j Browser.
"""

from __future__ import annotations

from typing import Self

import neo4j
from neo4j_graphrag.retrievers.base import Retriever as GraphRagRetriever
from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem

from ..retrieval import RetrievalParams, Retriever
from ..settings import Settings, load_settings
from .context import graph_context


class GRetrieverRetriever(GraphRagRetriever):
    """A neo4j-graphrag retriever over a dataset loaded by gr-neo4j.

    Args:
        settings: where Neo4j is (default: ``load_settings()``, the usual NEO4J_* variables).
        dataset: the loaded dataset to ask (default: the only one loaded).
        params: retrieval parameters (mode, hops, top-k...; default: the dataset's).
        record: record each search as a Retrieval node that Neo4j Browser shows.
        retriever: a gr-neo4j ``Retriever`` to share (its owner closes it); else one is opened.
    """

    def __init__(self, settings: Settings | None = None, dataset: str | None = None, params: RetrievalParams | None = None,
                 record: bool = True, retriever: Retriever | None = None):
        self._own = retriever is None
        self.retriever = retriever or Retriever(settings or load_settings())
        self.dataset, self.params, self.record = dataset, params, record
        super().__init__(self.retriever.conn.driver, self.retriever.conn.database)

    def get_search_results(self, query_text: str, entities: list[str] | None = None, graph: str | None = None) -> RawSearchResult:
        """Retrieve the subgraph of ``query_text`` (``entities``: the entity names it asks about,
        instead of linking them from the question; ``graph``: the graph of a per-sample dataset to
        ask) and return its answers and textualized graph."""
        context = graph_context(self.retriever, query_text, self.dataset, entities or (), self.params, self.record, graph)
        records = [neo4j.Record({"content": item.content, "metadata": item.metadata}) for item in context.items]
        return RawSearchResult(records=records, metadata=context.metadata)

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        return RetrieverResultItem(content=record["content"], metadata=record["metadata"])

    def close(self) -> None:
        if self._own:
            self.retriever.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
