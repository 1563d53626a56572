"""Helpers of the loader tests: a tiny randomly initialised 384-d sentence embedder and counts.

The tiny embedder has the default model's dimension (384), so the vector indexes that other test
modules create in the same Neo4j stay compatible, but encodes in microseconds: the loader tests
check parsing, writing and linking, not embedding quality (test_load_metaqa has one integration
test with the real all-MiniLM-L6-v2).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from gr_neo4j.connection import Connection
from gr_neo4j.embedder import Embedder, embedder_source
from gr_neo4j.model_source import ModelSource
from gr_neo4j.settings import load_settings

DIMENSION = 384


@lru_cache(maxsize=1)
def tiny_embedder_path() -> Path:
    """Build (once per process) a 1-layer random BERT with MiniLM's tokenizer, saved as a sentence-transformer."""
    import tempfile

    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    minilm = embedder_source(load_settings()).location
    tokenizer = AutoTokenizer.from_pretrained(minilm)
    root = Path(tempfile.mkdtemp(prefix="tiny-embedder-"))
    bert_dir = root / "bert"
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=DIMENSION, num_hidden_layers=1, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(bert_dir)
    tokenizer.save_pretrained(bert_dir)
    word = models.Transformer(str(bert_dir), max_seq_length=64)
    model = SentenceTransformer(modules=[word, models.Pooling(DIMENSION, "mean"), models.Normalize()], device="cpu")
    out = root / "sentence-transformer"
    model.save(str(out))
    return out


@lru_cache(maxsize=1)
def tiny_embedder() -> Embedder:
    path = str(tiny_embedder_path())
    return Embedder(ModelSource(path, path, "local path"), device="cpu")


def quiet_query(conn: Connection, cypher: str, params: dict) -> list:
    """A read whose 'unknown relationship type' notices (on an empty database) are not logged."""
    with conn.session(read=True, notifications_min_severity="OFF") as session:
        return list(session.run(cypher, params))


def counts(conn: Connection, dataset: str) -> dict[str, int]:
    """Every kind of node and relationship of one dataset, for exact before/after comparisons."""
    record = quiet_query(
        conn,
        """
        CALL () { MATCH (n:Entity {dataset: $d}) RETURN count(n) AS entities, count(n.embedding) AS entity_vectors }
        CALL () { MATCH ()-[r:REL {dataset: $d}]->() RETURN count(r) AS rels, count(r.embedding) AS rel_vectors }
        CALL () { MATCH (g:Graph {dataset: $d}) RETURN count(g) AS graphs }
        CALL () { MATCH (q:Question {dataset: $d}) RETURN count(q) AS questions }
        CALL () { MATCH (:Question {dataset: $d})-[t:TOPIC]->() RETURN count(t) AS topic_links }
        CALL () { MATCH (:Question {dataset: $d})-[a:ANSWER]->() RETURN count(a) AS answer_links }
        CALL () { MATCH (:Question {dataset: $d})-[o:ON_GRAPH]->() RETURN count(o) AS graph_links }
        CALL () { MATCH (x:Dataset {name: $d}) RETURN count(x) AS dataset_nodes }
        RETURN *
        """,
        {"d": dataset},
    )[0]
    return dict(record)


def vector_sizes(conn: Connection, dataset: str) -> set[int]:
    """The distinct lengths of the embeddings of a dataset's nodes and relationships."""
    rows = conn.query(
        """
        CALL () { MATCH (n:Entity {dataset: $d}) RETURN size(n.embedding) AS s
                  UNION ALL MATCH ()-[r:REL {dataset: $d}]->() RETURN size(r.embedding) AS s }
        RETURN collect(DISTINCT s) AS sizes
        """,
        {"d": dataset},
    )
    return set(rows[0]["sizes"])
