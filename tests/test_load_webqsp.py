"""WebQSP (RoG) loader: parquet shards and JSON lines merge into one KG; questions link to it."""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from test_load_support import counts, tiny_embedder, vector_sizes

from gr_neo4j.errors import MissingInput
from gr_neo4j.ingest import load_dataset


def _check(conn, report):
    # train: 5 + 4 triples, one repeated across questions -> 8; test: 3 triples; the last test question has an empty graph
    assert report.input_relationships == 11 and report.input_questions == 4
    # entities: Justin Bieber, m.0gxnnwc, Jaxon Bieber, Jeremy Bieber, Pop music, Natalie Portman, m.0k3qy8, Padmé Amidala,
    # Star Wars Episode I: The Phantom Menace, Jamaica, Jamaican English, Jamaican Creole English Language
    assert report.input_entities == 12
    c = counts(conn, "webqsp")
    assert c["entities"] == c["entity_vectors"] == 12 and c["rels"] == c["rel_vectors"] == 11
    assert c["graphs"] == 0 and c["questions"] == 4
    assert c["topic_links"] == 3  # 'Empty Graph' is no entity
    assert c["answer_links"] == 4
    assert vector_sizes(conn, "webqsp") == {384}
    e = conn.query("MATCH (e:Entity {uid: 'webqsp||Padmé Amidala'}) RETURN e.text AS t, e.key AS k")[0]
    assert (e["t"], e["k"]) == ("padmé amidala", "Padmé Amidala")  # lowercased text, key as in the data
    r = conn.query("MATCH (:Entity {key: 'Jamaica'})-[r:REL]->(:Entity {key: 'Jamaican English'}) RETURN collect(r.text) AS t")[0]["t"]
    assert sorted(r) == ["location.country.languages_spoken", "location.country.official_language"]
    q = conn.query(
        "MATCH (q:Question {uid: 'webqsp|WebQTest-0'})-[:TOPIC]->(t) OPTIONAL MATCH (q)-[:ANSWER]->(a) "
        "RETURN q.split AS s, q.text AS text, q.answers AS answers, t.key AS topic, count(a) AS n"
    )[0]
    assert (q["s"], q["topic"], q["n"]) == ("test", "Jamaica", 2)
    assert q["answers"] == ["Jamaican English", "Jamaican Creole English Language"]
    splits = {r["s"]: r["n"] for r in conn.query("MATCH (q:Question {dataset: 'webqsp'}) RETURN q.split AS s, count(*) AS n")}
    assert splits == {"train": 2, "test": 2}


def test_json_lines(server, conn):
    _check(conn, load_dataset(server, "webqsp", path=FIXTURES / "webqsp", embedder=tiny_embedder()))


def test_parquet_shards(server, conn):
    _check(conn, load_dataset(server, "webqsp", path=FIXTURES / "webqsp_parquet", embedder=tiny_embedder()))


def test_split_and_limit(server, conn):
    report = load_dataset(server, "webqsp", path=FIXTURES / "webqsp_parquet", split="train", limit=1, embedder=tiny_embedder())
    assert report.input_questions == 1 and report.input_relationships == 5


def test_offline_without_path_asks_for_one(server, conn, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(MissingInput, match="pass --path"):
        load_dataset(server, "webqsp", embedder=tiny_embedder())
