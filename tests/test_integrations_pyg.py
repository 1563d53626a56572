"""PyG's RAGQueryLoader over Neo4j: the same subgraphs as gr-neo4j's own retrieval, on real MetaQA,
and PyG's GRetriever taking a training step on them."""

from __future__ import annotations

import pytest
import torch
from conftest import SHARED_DATASETS
from test_load_support import tiny_embedder
from test_model_support import tiny_llm
from torch_geometric.llm import RAGQueryLoader

from gr_neo4j.connection import connect
from gr_neo4j.errors import UsageError
from gr_neo4j.ingest import load_dataset
from gr_neo4j.integrations.pyg import neo4j_rag_stores
from gr_neo4j.retrieval import Retriever

REAL = SHARED_DATASETS / "metaqa"
QUESTIONS = 100
pytestmark = pytest.mark.skipif(not (REAL / "kb.txt").is_file(), reason="shared MetaQA not present")


@pytest.fixture(scope="module")
def metaqa(server):
    """The whole MetaQA KB and its first 100 questions per file, embedded by a tiny random encoder
    (the comparison needs the same vectors on both sides, not good ones)."""
    with connect(server) as c:
        c.run_autocommit("MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 20000 ROWS")
        c.run_autocommit("MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF 20000 ROWS")
        embedder = tiny_embedder()
        load_dataset(server, "metaqa", path=REAL, limit=QUESTIONS, batch_size=10000, embedder=embedder)
        with Retriever(server, conn=c, embedder=embedder) as r:
            yield r


def questions(n: int = QUESTIONS) -> list[str]:
    lines = (REAL / "1-hop" / "qa_dev.txt").read_text(encoding="utf-8").splitlines()[:n]
    return [line.split("\t")[0].replace("[", "").replace("]", "") for line in lines]


def test_the_loader_gives_the_subgraphs_of_gr_neo4js_own_retrieval(metaqa):
    stores, local_filter = neo4j_rag_stores(dataset="metaqa", retriever=metaqa)
    loader = RAGQueryLoader(stores, subgraph_filter=local_filter)
    fs = stores[0]
    for question in questions():
        data = loader.query(question)
        own = metaqa.retrieve(question, "metaqa")
        assert data.node_keys == [n.key for n in own.nodes], question
        assert torch.equal(data.edge_index, own.data.edge_index) and torch.equal(data.x, own.data.x)
        assert torch.equal(data.edge_attr, own.data.edge_attr) and data.desc == own.desc
        assert fs.element_ids(data.n_id) == [n.element_id for n in own.nodes]


def test_the_stores_steps_one_by_one(metaqa):
    (fs, gs), _ = neo4j_rag_stores(dataset="metaqa", retriever=metaqa)
    question = questions(1)[0]
    seeds, q = fs.retrieve_seed_nodes(question)
    f, nodes, _ = fs.fetched(question)
    assert q.shape == (f.candidates.rel_attr.shape[1],) and set(seeds.tolist()) <= set(nodes.tolist())
    assert len(fs.retrieve_seed_edges(question)) <= f.params.topk_e
    sample = gs.sample_subgraph(seeds)
    data = fs.load_subgraph(sample)
    assert data.num_nodes == f.candidates.num_nodes and data.edge_index.shape == (2, f.candidates.num_edges)
    assert data.edge_attr.shape == (f.candidates.num_edges, q.shape[0]) and data.node_sim.shape == (data.num_nodes,)
    with pytest.raises(UsageError, match="no question the feature store retrieved"):
        gs.sample_subgraph(torch.tensor([10**9]))
    with pytest.raises(UsageError, match="unknown Neo4jFeatureStore config keys: k_nodes"):
        fs.config = {"k_nodes": 5}


def test_pygs_gretriever_takes_a_training_step_on_the_loaders_subgraphs(metaqa, tmp_path):
    from torch_geometric.llm.models import LLM, GRetriever
    from torch_geometric.loader import DataLoader
    from torch_geometric.nn.models import GAT

    model_dir = tmp_path / "tiny-llm"
    model, tokenizer = tiny_llm()
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    stores, local_filter = neo4j_rag_stores(dataset="metaqa", retriever=metaqa)
    loader = RAGQueryLoader(stores, subgraph_filter=local_filter)
    lines = (REAL / "1-hop" / "qa_dev.txt").read_text(encoding="utf-8").splitlines()[:4]
    graphs = []
    for line, question in zip(lines, questions(4)):
        data = loader.query(question)
        data.label = line.split("\t")[1]
        graphs.append(data)
    batch = next(iter(DataLoader(graphs, batch_size=4)))
    dim = batch.x.size(1)
    llm = LLM(model_name=str(model_dir), num_params=0, dtype=torch.float32)
    gnn = GAT(in_channels=dim, hidden_channels=16, out_channels=16, num_layers=1, heads=2, edge_dim=dim)
    g_retriever = GRetriever(llm=llm, gnn=gnn)
    trainable = [p for p in g_retriever.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-3)
    before = [p.detach().clone() for p in g_retriever.projector.parameters()]
    loss = g_retriever(batch.question, batch.x, batch.edge_index, batch.batch, batch.label, batch.edge_attr, batch.desc)
    loss.backward()
    opt.step()
    assert torch.isfinite(loss) and any(not torch.equal(a, b) for a, b in zip(before, g_retriever.projector.parameters()))
