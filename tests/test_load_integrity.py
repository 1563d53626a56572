"""Nothing lost, nothing corrupted (issue #9): uids that cannot collide."""

from __future__ import annotations

from test_load_support import counts, tiny_embedder

from gr_neo4j.ingest import load_dataset
from gr_neo4j.ingest.records import entity_uid, make_uid
from gr_neo4j.retrieval.retriever import kg_entity_uid


def write(path, text: str | bytes):
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def load(server, dataset, path, **kw):
    return load_dataset(server, dataset, path=path, embedder=tiny_embedder(), **kw)


# --- uids -------------------------------------------------------------------------------------


def test_uids_escape_the_separator_so_they_never_collide():
    assert make_uid("a|b", "c") != make_uid("a", "b|c")
    assert make_uid("a\\", "|b") != make_uid("a\\|", "b")
    assert make_uid("metaqa", "", "Tom Hanks") == "metaqa||Tom Hanks"  # keys without | or \ are unchanged


def test_triples_differing_only_in_where_the_bar_is_are_two_relationships(server, conn, tmp_path):
    report = load(server, "triples", write(tmp_path / "x.tsv", "a|b\tc\td\na\tb|c\td\n"))
    assert (report.input_relationships, report.written_relationships, report.skipped) == (2, 2, 0)
    assert counts(conn, "triples")["rels"] == 2
    uid = conn.query("MATCH (n:Entity {dataset: 'triples', key: 'a|b'}) RETURN n.uid AS uid")[0]["uid"]
    assert uid == entity_uid("triples", "", "a|b") == kg_entity_uid("triples", "a|b") == "triples||a\\|b"
