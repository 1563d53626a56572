"""ExplaGraphs loader: both layouts, G-Retriever's textualization, the 60/20/20 split, the real file."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import FIXTURES, SHARED_DATASETS
from gr_neo4j.loaders.explagraphs import parse_graph
from test_load_support import counts, tiny_embedder, vector_sizes

from gr_neo4j.ingest import load_dataset, paper_split
from gr_neo4j.ingest.split import train_test

FIXTURE = FIXTURES / "explagraphs" / "three_rows.tsv"
HEADERED = FIXTURES / "explagraphs" / "train_dev_headered.tsv"


def test_parse_graph_lowercases_and_numbers_nodes_in_first_appearance_order():
    nodes, edges = parse_graph("(Cannabis; synonym of; marijuana)(legal; Causes; more available)(marijuana; capable of; legal)")
    assert nodes == ["cannabis", "marijuana", "legal", "more available"]
    assert edges == [(0, "synonym of", 1), (2, "causes", 3), (1, "capable of", 2)]


@pytest.mark.parametrize(
    "graph, reason",
    [
        ("", "empty graph"),
        ("(a; b)", "unparsable graph string"),
        ("(a; b; c; d)", "unparsable graph string"),
        ("(a; ; c)", "unparsable graph string"),
        ("(a; b; c) trailing", "unparsable graph string"),
    ],
)
def test_parse_graph_rejects_malformed_strings(graph, reason):
    with pytest.raises(ValueError, match=reason):
        parse_graph(graph)


def test_paper_split_is_60_20_20_disjoint_and_deterministic():
    split = paper_split(2368)
    assert [len(split[k]) for k in ("train", "val", "test")] == [1420, 474, 474]
    assert sorted(split["train"] + split["val"] + split["test"]) == list(range(2368))
    assert split == paper_split(2368)
    # the example of scikit-learn's train_test_split documentation: 5 rows, test_size=0.33, random_state=42
    train, test = train_test(np.arange(5), 0.33, 42)
    assert (train.tolist(), test.tolist()) == ([2, 0, 3], [1, 4])


def test_fixture_counts_texts_links_and_embeddings(server, conn):
    report = load_dataset(server, "explagraphs", path=FIXTURE, embedder=tiny_embedder())
    # row 0: 5 nodes, 4 edges; row 1: 4 nodes, 3 edges; row 2: 'Prayer' and 'prayer' are one node -> 3 nodes, 2 edges
    assert (report.input_graphs, report.input_entities, report.input_relationships, report.input_questions) == (3, 12, 9, 3)
    c = counts(conn, "explagraphs")
    assert c == {
        "entities": 12, "entity_vectors": 12, "rels": 9, "rel_vectors": 9, "graphs": 3, "questions": 3,
        "topic_links": 0, "answer_links": 0, "graph_links": 3, "dataset_nodes": 1,
    }
    assert vector_sizes(conn, "explagraphs") == {384}
    nodes = conn.query("MATCH (n:Entity {dataset: 'explagraphs', graph: '0'}) RETURN n.idx AS idx, n.key AS key, n.text AS text, n.uid AS uid ORDER BY idx")
    assert [r["text"] for r in nodes] == ["cannabis", "marijuana", "legal", "more available", "good thing"]
    assert [r["key"] for r in nodes] == ["0", "1", "2", "3", "4"]
    assert nodes[0]["uid"] == "explagraphs|0|0"
    rels = conn.query(
        "MATCH (h:Entity {dataset: 'explagraphs', graph: '2'})-[r:REL]->(t) RETURN h.idx AS h, r.text AS text, t.idx AS t, r.uid AS uid ORDER BY h"
    )
    assert [(r["h"], r["text"], r["t"]) for r in rels] == [(0, "is a", 1), (1, "has property", 2)]
    assert rels[0]["uid"] == "explagraphs|2|0|is a|1"
    # edges keep their source order (G-Retriever textualizes them in it), which is not head order
    ordered = conn.query(
        "MATCH (h:Entity {dataset: 'explagraphs', graph: '0'})-[r:REL]->(t) RETURN h.idx AS h, r.text AS text, t.idx AS t ORDER BY r.idx"
    )
    assert [(r["h"], r["text"], r["t"]) for r in ordered] == [(0, "synonym of", 1), (2, "causes", 3), (1, "capable of", 4), (4, "desires", 2)]
    q = conn.query(
        "MATCH (q:Question {uid: 'explagraphs|1'})-[:ON_GRAPH]->(g:Graph) RETURN q.text AS text, q.answers AS answers, q.split AS split, g.label AS label, g.uid AS g"
    )[0]
    assert q["text"] == "Argument 1: Women should not be in combat.\nArgument 2: Women and men have the same rights."
    assert q["answers"] == ["counter"] and q["label"] == "counter" and q["g"] == "explagraphs|1"
    assert q["split"] in {"train", "val", "test"}
    dataset = conn.query("MATCH (d:Dataset {name: 'explagraphs'}) RETURN d.kind AS kind, d.dimension AS dim, d.status AS status")[0]
    assert (dataset["kind"], dataset["dim"], dataset["status"]) == ("per-sample", 384, "complete")


def test_headered_layout_gives_the_same_graphs(server, conn):
    load_dataset(server, "explagraphs", path=FIXTURE, embedder=tiny_embedder())
    before = counts(conn, "explagraphs")
    texts = conn.query("MATCH (n:Entity {dataset: 'explagraphs'}) RETURN collect(n.uid + '=' + n.text) AS t")[0]["t"]
    report = load_dataset(server, "explagraphs", path=HEADERED, embedder=tiny_embedder())
    assert report.input_graphs == 3 and report.written_entities == 0 and report.written_relationships == 0
    assert counts(conn, "explagraphs") == before
    again = conn.query("MATCH (n:Entity {dataset: 'explagraphs'}) RETURN collect(n.uid + '=' + n.text) AS t")[0]["t"]
    assert sorted(again) == sorted(texts)


def test_split_option_keeps_only_that_split(server, conn):
    report = load_dataset(server, "explagraphs", path=FIXTURE, split="train", embedder=tiny_embedder())
    expected = len(paper_split(3)["train"])
    assert report.input_questions == expected
    assert conn.query("MATCH (q:Question {dataset: 'explagraphs'}) RETURN collect(DISTINCT q.split) AS s")[0]["s"] == ["train"]


@pytest.mark.skipif(not (SHARED_DATASETS / "explagraphs" / "train.tsv").is_file(), reason="shared ExplaGraphs not present")
def test_real_train_file(server, conn):
    path = SHARED_DATASETS / "explagraphs" / "train.tsv"
    # independent count of what G-Retriever's textualize_graph produces
    n_nodes = n_edges = rows = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        rows += 1
        triples = [t.split(";") for t in re.findall(r"\((.*?)\)", line.split("\t")[3])]
        n_nodes += len({p.lower().strip() for t in triples for p in (t[0], t[2])})
        n_edges += len({(t[0].lower().strip(), t[1].lower().strip(), t[2].lower().strip()) for t in triples})
    report = load_dataset(server, "explagraphs", path=path, embedder=tiny_embedder())
    assert rows == 2368
    c = counts(conn, "explagraphs")
    assert (c["graphs"], c["questions"], c["graph_links"]) == (2368, 2368, 2368)
    assert (c["entities"], c["rels"]) == (n_nodes, n_edges)
    assert c["entity_vectors"] == n_nodes and c["rel_vectors"] == n_edges
    assert report.skipped == 0
    by_split = {r["s"]: r["n"] for r in conn.query("MATCH (q:Question {dataset: 'explagraphs'}) RETURN q.split AS s, count(*) AS n")}
    assert by_split == {"train": 1420, "val": 474, "test": 474}


def test_paper_split_equals_scikit_learns_train_test_split():
    # scikit-learn is in the `test` extra (not a runtime dependency): a missing install fails here
    # instead of skipping the only check that our split is G-Retriever's.
    from sklearn.model_selection import train_test_split

    for n in (5, 101, 2368, 2766):
        train, rest = train_test_split(np.arange(n), test_size=0.4, random_state=42)
        val, test = train_test_split(rest, test_size=0.5, random_state=42)
        assert paper_split(n) == {"train": train.tolist(), "val": val.tolist(), "test": test.tolist()}
