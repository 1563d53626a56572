"""MetaQA loader: the KB as one deduplicated graph, questions linked to topic and answer entities."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED_DATASETS, metaqa_fixture
from gr_neo4j.loaders.metaqa import TOPIC
from test_load_support import counts, tiny_embedder, vector_sizes

from gr_neo4j.embedder import load_embedder
from gr_neo4j.ingest import drop_from, load_dataset

FIXTURE = metaqa_fixture()
REAL = SHARED_DATASETS / "metaqa"


def test_fixture_kb_and_questions(server, conn):
    report = load_dataset(server, "metaqa", path=FIXTURE, embedder=tiny_embedder())
    # 13 triples over 12 distinct names: 3 films, 2 directors, 1 writer, 1 actress, 2 years, Drama, German, and the tag
    # 'otto van deren', a different name from the director 'Otto van Deren'
    assert (report.input_entities, report.input_relationships, report.input_questions) == (12, 13, 5)
    c = counts(conn, "metaqa")
    assert c["entities"] == c["entity_vectors"] == 12
    assert c["rels"] == c["rel_vectors"] == 13
    assert c["graphs"] == 0 and c["graph_links"] == 0
    assert c["questions"] == 5 and c["topic_links"] == 5
    # answers present in the KB: 1 + 3 + 1 + 2 + 1 ('Nonexistent Film' is not an entity)
    assert c["answer_links"] == 8
    assert vector_sizes(conn, "metaqa") == {384}
    # a KB entity: keyed by its name, graph "" and no idx
    e = conn.query("MATCH (e:Entity {uid: 'metaqa||Ilse Varga'}) RETURN e.graph AS g, e.key AS k, e.idx AS i, e.text AS t")[0]
    assert (e["g"], e["k"], e["i"], e["t"]) == ("", "Ilse Varga", None, "Ilse Varga")
    rel = conn.query("MATCH (:Entity {key: 'Velvet Harbor'})-[r:REL]->(:Entity {key: 'Ada Morrow'}) RETURN r.text AS t, r.uid AS uid")[0]
    assert rel["t"] == "directed by" and rel["uid"] == "metaqa||Velvet Harbor|directed_by|Ada Morrow"
    q = conn.query(
        """MATCH (q:Question {uid: 'metaqa|2-hop/dev/2'})-[:TOPIC]->(t:Entity)
           OPTIONAL MATCH (q)-[:ANSWER]->(a:Entity)
           RETURN q.text AS text, q.answers AS answers, q.split AS split, q.hops AS hops, t.key AS topic, collect(a.key) AS linked"""
    )[0]
    assert q["text"] == "which films share the director of Salt Road"
    assert q["answers"] == ["Glass Orchard", "Nonexistent Film"] and q["linked"] == ["Glass Orchard"]
    assert (q["split"], q["hops"], q["topic"]) == ("dev", 2, "Salt Road")


def test_limit_caps_questions_per_file_but_loads_the_whole_kb(server, conn):
    report = load_dataset(server, "metaqa", path=FIXTURE, limit=1, embedder=tiny_embedder())
    assert report.input_relationships == 13 and report.input_questions == 2


def test_wrong_path_is_one_clear_error(server, conn, tmp_path):
    from gr_neo4j.errors import MissingInput

    with pytest.raises(MissingInput, match="kb.txt does not exist"):
        load_dataset(server, "metaqa", path=tmp_path, embedder=tiny_embedder())
    with pytest.raises(MissingInput, match="does not exist"):
        load_dataset(server, "metaqa", path=tmp_path / "nope", embedder=tiny_embedder())
    assert counts(conn, "metaqa")["dataset_nodes"] == 0


@pytest.mark.integration
def test_real_model_vectors_are_the_embedders_own(server, conn):
    """With the default all-MiniLM-L6-v2, a stored vector is the model's float32 encoding of the text."""
    embedder = load_embedder(server)
    load_dataset(server, "metaqa", path=FIXTURE, embedder=embedder)
    row = conn.query("MATCH (e:Entity {uid: 'metaqa||Velvet Harbor'})-[r:REL {text: 'directed by'}]->() RETURN e.embedding AS e, r.embedding AS r")[0]
    expected = embedder.encode(["Velvet Harbor", "directed by"])
    np.testing.assert_allclose(np.array([row["e"], row["r"]], dtype=np.float32), expected, atol=1e-6)
    assert conn.query("MATCH (d:Dataset {name: 'metaqa'}) RETURN d.embedder AS e")[0]["e"] == embedder.name


@pytest.mark.skipif(not (REAL / "kb.txt").is_file(), reason="shared MetaQA not present")
def test_real_kb_whole_and_a_slice_of_questions(server, conn):
    names, triples = set(), set()
    for line in (REAL / "kb.txt").read_text(encoding="utf-8").splitlines():
        h, r, t = line.split("|")
        names.update((h, t))
        triples.add((h, r, t))
    topics = answers = 0
    for hops in (1, 2, 3):
        for line in (REAL / f"{hops}-hop" / "qa_dev.txt").read_text(encoding="utf-8").splitlines()[:200]:
            question, answer_field = line.split("\t")
            topics += sum(t in names for t in TOPIC.findall(question))
            answers += len({a for a in answer_field.split("|") if a in names})
    report = load_dataset(server, "metaqa", path=REAL, limit=200, batch_size=10000, embedder=tiny_embedder())
    assert report.skipped == 0
    # 9 relation names, each embedded once; every distinct name once
    assert report.texts_embedded == len(names) + 9
    c = counts(conn, "metaqa")
    assert c["entities"] == c["entity_vectors"] == len(names)  # 42,777 distinct names in the rebuilt KB
    assert c["rels"] == c["rel_vectors"] == len(triples) == 129233
    assert c["questions"] == 600  # 200 from each of 1-hop, 2-hop, 3-hop qa_dev.txt
    # links only to entities of the KB (the rebuilt KB lacks a few topics and answers)
    assert (c["topic_links"], c["answer_links"]) == (topics, answers)
    # re-loading finds everything in place: nothing embedded, nothing written, same counts
    again = load_dataset(server, "metaqa", path=REAL, limit=200, batch_size=10000, embedder=tiny_embedder())
    assert again.texts_embedded == 0 and again.written_relationships == 0 and again.written_questions == 0
    assert counts(conn, "metaqa") == c
    # drop deletes relationships first, in batches: the session's cleanup (DETACH DELETE of 10,000 nodes a
    # transaction) can exceed the 1 GB test server's transaction memory on MetaQA's dense nodes
    drop_from(conn, "metaqa")
    assert set(counts(conn, "metaqa").values()) == {0}
