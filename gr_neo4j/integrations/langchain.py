"""gr-neo4j's retrieval as a LangChain ``BaseRetriever`` (``pip install gr-neo4j[langchain]``).

    from gr_neo4j.integrations.langchain import GRetrieverLangChain

    retriever = GRetrieverLangChain(dataset="metaqa")
    docs = retriever.invoke("who directed Heat")
    retriever.close()

One ``Document`` per answer the graph gives (``page_content`` its supporting path, metadata its
score, node key and steps), one with the textualized subgraph, or one saying the question is not
in the graph; every document's metadata holds the Retrieval id and the Cypher that shows it in
Neo4j Browser.
"""

from __future__ import annotations

from typing import Self

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, PrivateAttr

from ..retrieval import RetrievalParams, Retriever
from ..settings import Settings, load_settings
from .context import graph_context


class GRetrieverLangChain(BaseRetriever):
    """A LangChain retriever over a dataset loaded by gr-neo4j.

    Fields: ``dataset`` (default: the only one loaded), ``graph`` (the graph of a per-sample
    dataset to ask, e.g. one ExplaGraphs sample), ``params`` (retrieval parameters), ``record``
    (record each question as a Retrieval node), ``settings`` (default: ``load_settings()``) and
    ``retriever`` (a gr-neo4j ``Retriever`` to share; its owner closes it).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    dataset: str | None = None
    graph: str | None = None
    params: RetrievalParams | None = None
    record: bool = True
    settings: Settings | None = None
    retriever: Retriever | None = None
    _opened: Retriever | None = PrivateAttr(default=None)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        context = graph_context(self._retriever(), query, self.dataset, (), self.params, self.record, self.graph)
        browser = {"browser_query": context.metadata["browser_query"]}
        return [Document(page_content=item.content, metadata={**item.metadata, **browser}) for item in context.items]

    def _retriever(self) -> Retriever:
        if self.retriever is not None:
            return self.retriever
        if self._opened is None:
            self._opened = Retriever(self.settings or load_settings())
        return self._opened

    def close(self) -> None:
        """Close the connection this retriever opened (not a shared ``retriever``)."""
        if self._opened is not None:
            self._opened.close()
            self._opened = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
