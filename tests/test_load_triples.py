"""Plain triples loader: TSV/CSV/JSON lines, as one knowledge graph or as per-sample graphs."""

from __future__ import annotations

from conftest import FIXTURES
from test_load_support import counts, tiny_embedder, vector_sizes

from gr_neo4j.ingest import load_dataset

TRIPLES = FIXTURES / "triples"


def test_tsv_with_header_is_one_deduplicated_graph(server, conn):
    report = load_dataset(server, "triples", path=TRIPLES / "kg.tsv", embedder=tiny_embedder())
    assert (report.kind, report.input_entities, report.input_relationships) == ("knowledge-graph", 3, 3)  # one row repeats
    c = counts(conn, "triples")
    assert (c["entities"], c["entity_vectors"], c["rels"], c["rel_vectors"], c["graphs"]) == (3, 3, 3, 3, 0)
    assert vector_sizes(conn, "triples") == {384}
    rel = conn.query("MATCH (h:Entity {uid: 'triples||Ada Lovelace'})-[r:REL]->(t {key: 'Analytical Engine'}) RETURN r.text AS r, h.text AS h")[0]
    assert (rel["r"], rel["h"]) == ("wrote about", "Ada Lovelace")


def test_csv_without_header_quoted_fields_merge_with_the_tsv(server, conn):
    load_dataset(server, "triples", path=TRIPLES / "kg.tsv", embedder=tiny_embedder())
    report = load_dataset(server, "triples", path=TRIPLES / "kg.csv", embedder=tiny_embedder())
    assert report.written_entities == 3  # Lord Byron, 'Babbage, Charles', London; Ada Lovelace already there
    c = counts(conn, "triples")
    assert (c["entities"], c["rels"]) == (6, 5)
    assert conn.query("MATCH (e:Entity {uid: 'triples||Babbage, Charles'}) RETURN count(e) AS n")[0]["n"] == 1


def test_jsonl_with_graph_ids_makes_per_sample_graphs(server, conn):
    report = load_dataset(server, "triples", path=TRIPLES / "graphs.jsonl", embedder=tiny_embedder())
    assert report.kind == "per-sample"
    c = counts(conn, "triples")
    assert (c["graphs"], c["entities"], c["rels"]) == (2, 4, 4)
    nodes = conn.query("MATCH (n:Entity {dataset: 'triples', graph: 'g2'}) RETURN n.idx AS i, n.text AS t, n.key AS k ORDER BY i")
    assert [(r["i"], r["t"], r["k"]) for r in nodes] == [(0, "moon", "0"), (1, "earth", "1")]
    assert conn.query("MATCH (d:Dataset {name: 'triples'}) RETURN d.kind AS k")[0]["k"] == "per-sample"
