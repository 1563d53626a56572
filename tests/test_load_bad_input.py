"""Malformed input: file, line (or key) and reason in the message; 'fail' writes nothing, 'skip' the rest."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, metaqa_fixture
from test_load_support import counts, tiny_embedder

from gr_neo4j.errors import BadInput
from gr_neo4j.ingest import load_dataset
from loaders import explagraphs, metaqa, triples

# dataset, file (or MetaQA directory), where the bad record is, reason, a Cypher count that must be 0 after 'skip' (the bad record's data),
# and the number of graphs or questions the good records give
CASES = [
    ("explagraphs", FIXTURES / "explagraphs/bad_columns.tsv", "bad_columns.tsv:2", "wrong column count",
     "MATCH (g:Graph {dataset: 'explagraphs', graph: '1'}) RETURN count(g) AS n", ("graphs", 2)),
    ("explagraphs", FIXTURES / "explagraphs/bad_graph.tsv", "bad_graph.tsv:2", "unparsable graph string",
     "MATCH (n:Entity {dataset: 'explagraphs', text: 'women'}) RETURN count(n) AS n", ("graphs", 2)),
    ("explagraphs", FIXTURES / "explagraphs/empty_graph.tsv", "empty_graph.tsv:2", "empty graph",
     "MATCH (q:Question {uid: 'explagraphs|1'}) RETURN count(q) AS n", ("graphs", 2)),
    ("metaqa", metaqa_fixture("metaqa_bad"), "kb.txt:6", "wrong column count",
     "MATCH (q:Question {uid: 'metaqa|1-hop/dev/2'}) RETURN count(q) AS n", ("questions", 1)),
    ("triples", FIXTURES / "triples_bad/bad_json.jsonl", "bad_json.jsonl:2", "bad JSON",
     "MATCH ()-[r:REL {dataset: 'triples'}]->() WHERE r.uid STARTS WITH 'triples||earth|orbits' RETURN count(r) AS n", ("rels", 2)),
    ("triples", FIXTURES / "triples_bad/bad_columns.csv", "bad_columns.csv:2", "wrong column count",
     "MATCH (n:Entity {uid: 'triples||b'})-[r]->() RETURN count(r) AS n", ("rels", 2)),
    ("webqsp", FIXTURES / "webqsp_bad/train_bad_json.jsonl", "train_bad_json.jsonl:2", "bad JSON",
     "MATCH (q:Question {uid: 'webqsp|WebQTrn-1'}) RETURN count(q) AS n", ("questions", 1)),
    ("webqsp", FIXTURES / "webqsp_bad/train_bad_triple.jsonl", "train_bad_triple.jsonl:2", "bad triple graph[4]",
     "MATCH (n:Entity {uid: 'webqsp||Natalie Portman'}) RETURN count(n) AS n", ("questions", 1)),
    ("scene_graphs", FIXTURES / "scene_graphs_bad/missing_object_sceneGraphs.json", "image 2354786", "relation to a missing object",
     "MATCH (g:Graph {uid: 'scene_graphs|2354786'}) RETURN count(g) AS n", ("graphs", 2)),
    ("scene_graphs", FIXTURES / "scene_graphs_bad/empty_sceneGraphs.json", "image 2354786", "empty graph",
     "MATCH (g:Graph {uid: 'scene_graphs|2354786'}) RETURN count(g) AS n", ("graphs", 2)),
]
IDS = [f"{c[0]}-{c[3].split()[0]}-{c[1].name}" for c in CASES]


@pytest.mark.parametrize("dataset, path, where, reason, bad_query, good", CASES, ids=IDS)
def test_fail_names_file_line_reason_and_writes_nothing(server, conn, dataset, path, where, reason, bad_query, good):
    with pytest.raises(BadInput) as info:
        load_dataset(server, dataset, path=path, embedder=tiny_embedder())
    message = str(info.value)
    assert where in message and reason in message and "nothing was written" in message
    assert str(path) in message  # the full file path
    assert set(counts(conn, dataset).values()) == {0}


@pytest.mark.parametrize("dataset, path, where, reason, bad_query, good", CASES, ids=IDS)
def test_skip_writes_the_rest_and_reports_the_skipped(server, conn, dataset, path, where, reason, bad_query, good):
    report = load_dataset(server, dataset, path=path, on_error="skip", embedder=tiny_embedder())
    assert report.skipped >= 1
    assert any(where in e and reason in e for e in report.skipped_examples)
    assert sum(report.skipped_reasons.values()) == report.skipped
    assert conn.query(bad_query)[0]["n"] == 0
    key, expected = good
    assert counts(conn, dataset)[key] == expected


def test_limit_counts_good_records_only(tmp_path):
    # Every loader means the same by --limit: that many good records; a bad one does not use it up.
    def kinds(fragments) -> list[str]:
        return [type(f).__name__ for f in fragments]

    good_row = "Cannabis should be legal.\tMarijuana is fine.\tsupport\t(cannabis; synonym of; marijuana)\n"
    (tmp_path / "train.tsv").write_text("two\tcolumns\n" + good_row * 2)
    assert kinds(explagraphs.read(tmp_path, limit=1)) == ["BadRecord", "Fragment"]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"head": "a"\n' + '{"head": "a", "relation": "r", "tail": "b"}\n' * 2)
    assert kinds(triples.read(jsonl, limit=1)) == ["BadRecord", "Fragment"]
    questions = tmp_path / "qa_dev.txt"
    questions.write_text("no topic\tx\nwho directed [Heat]\tMichael Mann\nwho wrote [Heat]\tMichael Mann\n")
    assert kinds(metaqa.read_questions(questions, 1, "dev", limit=1)) == ["BadRecord", "Fragment"]
    assert kinds(metaqa.read_questions(questions, 1, "dev", limit=None)) == ["BadRecord", "Fragment", "Fragment"]


def test_truncated_json_file_is_reported_with_line_and_column(server, conn):
    with pytest.raises(BadInput, match=r"truncated_sceneGraphs.json:\d+:\d+: bad JSON"):
        load_dataset(server, "scene_graphs", path=FIXTURES / "scene_graphs_bad" / "truncated_sceneGraphs.json", embedder=tiny_embedder())
    assert set(counts(conn, "scene_graphs").values()) == {0}


def test_several_bad_records_are_counted(server, conn):
    # metaqa_bad has a bad KB line and a question without [topic]: the message names the first and counts the other
    with pytest.raises(BadInput, match=r"kb.txt:6: wrong column count.*\(1 more bad records"):
        load_dataset(server, "metaqa", path=metaqa_fixture("metaqa_bad"), embedder=tiny_embedder())
    report = load_dataset(server, "metaqa", path=metaqa_fixture("metaqa_bad"), on_error="skip", embedder=tiny_embedder())
    assert report.skipped_reasons == {"wrong column count": 1, "no topic entity": 1}
