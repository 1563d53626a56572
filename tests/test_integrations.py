"""neo4j-graphrag and LangChain over gr-neo4j's retrieval, against the real server (their packages
come with the test command's extras)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.llm import LLMInterface, LLMResponse
from test_ask import EXPLAGRAPHS, KB, QA

from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.integrations.graphrag import GRetrieverRetriever
from gr_neo4j.integrations.langchain import GRetrieverLangChain
from gr_neo4j.retrieval import RetrievalParams

NOLAN = "which movies did Christopher Nolan direct"
NOLAN_PATHS = {"Christopher Nolan <-directed by- Inception", "Christopher Nolan <-directed by- The Dark Knight"}
ONE_HOP = RetrievalParams(hops=1)


@pytest.fixture()
def movies(server, conn, tmp_path):
    root = tmp_path / "metaqa"
    (root / "1-hop").mkdir(parents=True)
    (root / "kb.txt").write_text(KB)
    (root / "1-hop" / "qa_dev.txt").write_text(QA)
    load_dataset(server, "metaqa", path=root)
    return conn


class EchoLLM(LLMInterface):
    """neo4j-graphrag's LLM interface, answering with the prompt it is given (what it was told)."""

    def invoke(self, input, message_history=None, system_instruction=None) -> LLMResponse:
        return LLMResponse(content=input)

    async def ainvoke(self, input, message_history=None, system_instruction=None) -> LLMResponse:
        return self.invoke(input)


def test_graphrag_items_are_the_answers_with_their_paths_and_the_subgraph(server, movies):
    with GRetrieverRetriever(server, dataset="metaqa", params=ONE_HOP) as retriever:
        result = retriever.search(query_text=NOLAN)
    kinds = [item.metadata["kind"] for item in result.items]
    assert kinds == ["answer", "answer", "subgraph"]
    assert {item.content for item in result.items[:2]} == NOLAN_PATHS
    assert {item.metadata["answer"] for item in result.items[:2]} == {"Inception", "The Dark Knight"}
    assert all(0.5 < item.metadata["score"] <= 1.0 and item.metadata["path"] for item in result.items[:2])
    assert "Christopher Nolan" in result.items[2].content
    rid = result.metadata["retrieval_id"]
    assert rid and rid in result.metadata["browser_query"] and result.metadata["__retriever"] == "GRetrieverRetriever"
    stored = movies.query("MATCH (r:Retrieval {id: $id})-[:ANSWER]->(n) RETURN collect(n.text) AS answers", {"id": rid})
    assert set(stored[0]["answers"]) == {"Inception", "The Dark Knight"}


def test_graphrag_pipeline_puts_the_paths_in_the_llm_prompt(server, movies):
    with GRetrieverRetriever(server, dataset="metaqa", params=ONE_HOP, record=False) as retriever:
        reply = GraphRAG(retriever=retriever, llm=EchoLLM(model_name="echo")).search(NOLAN, return_context=True)
    assert all(path in reply.answer for path in NOLAN_PATHS)
    assert reply.retriever_result.metadata["retrieval_id"] is None


def test_a_question_outside_the_graph_is_one_item_that_says_so(server, movies):
    with GRetrieverRetriever(server, dataset="metaqa", record=False) as retriever:
        result = retriever.search(query_text="what is the capital of France")
    assert [item.metadata["kind"] for item in result.items][:1] == ["not_in_graph"]
    assert result.items[0].content.startswith("not in the graph: ") and result.metadata["answer"] is None


def test_langchain_documents_carry_paths_scores_and_the_browser_query(server, movies):
    with GRetrieverLangChain(settings=server, dataset="metaqa", params=ONE_HOP) as retriever:
        docs = retriever.invoke(NOLAN)
    assert all(isinstance(d, Document) for d in docs)
    assert {d.page_content for d in docs if d.metadata["kind"] == "answer"} == NOLAN_PATHS
    assert docs[-1].metadata["kind"] == "subgraph" and docs[-1].metadata["nodes"] >= 3
    rid = docs[0].metadata["retrieval_id"]
    assert rid and all(d.metadata["retrieval_id"] == rid and rid in d.metadata["browser_query"] for d in docs)


def test_per_sample_graphs_give_the_subgraph_alone(server, conn, tmp_path):
    # ExplaGraphs' pcst selection answers nothing itself: the framework's LLM gets the graph.
    eg = tmp_path / "explagraphs.tsv"
    eg.write_text(EXPLAGRAPHS)
    load_dataset(server, "explagraphs", path=eg)
    with GRetrieverLangChain(settings=server, dataset="explagraphs", graph="0", record=False) as retriever:
        docs = retriever.invoke("cannabis should be legal")
    assert [d.metadata["kind"] for d in docs] == ["subgraph"] and "marijuana" in docs[0].page_content
