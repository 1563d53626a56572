"""`ask`, `show` and `retrieve` end to end through the CLI on small datasets loaded by the real loaders."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from gr_neo4j.answer import show_query
from gr_neo4j.cli import app
from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.samples import load_samples

runner = CliRunner()

KB = """Titanic|directed_by|James Cameron
Titanic|starred_actors|Leonardo DiCaprio
Titanic|starred_actors|Kate Winslet
Titanic|release_year|1997
Avatar|directed_by|James Cameron
Avatar|release_year|2009
Inception|directed_by|Christopher Nolan
Inception|starred_actors|Leonardo DiCaprio
Inception|release_year|2010
The Dark Knight|directed_by|Christopher Nolan
The Dark Knight|starred_actors|Christian Bale
Heat|directed_by|Michael Mann
Heat|starred_actors|Al Pacino
"""
QA = "who directed [Titanic]\tJames Cameron\nwhich movies did [Christopher Nolan] direct\tInception|The Dark Knight\n"
EXPLAGRAPHS = (
    "cannabis should be legal.\tit's not a bad thing to make marijuana more available.\tsupport\t"
    "(cannabis; synonym of; marijuana)(legal; causes; more available)(marijuana; capable of; good thing)(good thing; desires; legal)\n"
    "women should not be in combat.\twomen are strong enough.\tcounter\t"
    "(women; capable of; strong)(strong; used for; combat)\n"
)


@pytest.fixture()
def loaded(server, conn, tmp_path, monkeypatch):
    """MetaQA-format and ExplaGraphs-format fixtures loaded into the emptied test database."""
    root = tmp_path / "metaqa"
    (root / "1-hop").mkdir(parents=True)
    (root / "kb.txt").write_text(KB)
    (root / "1-hop" / "qa_dev.txt").write_text(QA)
    load_dataset(server, "metaqa", path=root)
    eg = tmp_path / "explagraphs.tsv"
    eg.write_text(EXPLAGRAPHS)
    load_dataset(server, "explagraphs", path=eg)
    monkeypatch.setenv("GR_NEO4J_HOME", str(server.home))
    return conn


def counts(conn) -> tuple[int, int]:
    r = conn.query("MATCH (n) WITH count(n) AS n MATCH ()-[r]->() RETURN n, count(r) AS r")[0]
    return r["n"], r["r"]


def ask(*args):
    return runner.invoke(app, ["ask", *args])


def test_ask_json_records_a_retrieval_whose_query_shows_exactly_the_subgraph(loaded):
    out = ask("who directed Titanic?", "--dataset", "metaqa", "--entity", "Titanic", "--json", "--no-answer")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    keys = {n["key"] for n in result["nodes"]}
    assert {"Titanic", "James Cameron"} <= keys
    assert any(n["topic"] for n in result["nodes"] if n["key"] == "Titanic")
    assert result["desc"].startswith("node_id,node_attr\n")
    assert result["mode"] == "paths"  # the default on knowledge graphs
    assert set(result["timings_ms"]) == {"embed_ms", "cypher_ms", "pcst_ms", "total_ms", "complete_ms"}
    rid = result["retrieval_id"]
    rows = loaded.query(show_query(rid))
    assert {r["n"]["key"] for r in rows} == keys
    shown_edges = {r["e"].element_id for r in rows if r["e"] is not None}
    assert shown_edges == {e["element_id"] for e in result["edges"]}
    stored = loaded.query("MATCH (r:Retrieval {id: $id}) RETURN r", {"id": rid})[0]["r"]
    # No hop model: paths of up to MAX_HOPS relations compete, and the best is one relation long:
    # the fetch, planned from them, walks one relation deep.
    assert stored["question"] == "who directed Titanic?" and json.loads(stored["parameters"])["hops"] == 1
    assert result["relation_path"] == [{"relation": "directed by", "backwards": False}] and result["not_in_graph"] is None


def test_one_question_walks_through_at_most_8_files_none_twice(loaded):
    """Read as the next engineer reads it, `ask` goes one way from the command to its answer: the
    longest chain of library files on a call stack is short and never comes back into a file."""
    from walk_question import walk

    report = walk(["ask", "which movies did Christopher Nolan direct", "--dataset", "metaqa", "--no-record"])
    assert "gr_neo4j/retrieval/linking.py" in report["files_touched"]  # the walk saw the whole question
    assert report["longest_walk_files"] <= 8, report["longest_walk"]
    assert report["walks_through_a_file_twice"] == []


def test_paths_mode_follows_the_relation_chain_of_the_question(loaded):
    # James Cameron <-directed by- Titanic, Avatar: the relation the question names, every end of it
    # within the node budget (the order of longer chains is test_zero_shot's).
    out = ask("which films did James Cameron direct", "-d", "metaqa", "-e", "James Cameron", "--hops", "2",
              "--max-paths", "1", "--node-budget", "3", "--json", "--no-answer", "--no-record")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["mode"] == "paths" and result["parameters"]["node_budget"] == 3
    assert {n["key"] for n in result["nodes"]} == {"Titanic", "James Cameron", "Avatar"}
    assert sorted(e["text"] for e in result["edges"]) == ["directed by", "directed by"]


def test_show_prints_the_query_and_the_browser_url(loaded, server):
    rid = json.loads(ask("who directed Titanic?", "-d", "metaqa", "-e", "Titanic", "--json", "--no-answer").stdout)["retrieval_id"]
    out = runner.invoke(app, ["show", rid])
    assert out.exit_code == 0, out.output
    assert f"MATCH (r:Retrieval {{id: '{rid}'}})" in out.output
    assert f"http://127.0.0.1:{server.http_port}/browser/?cmd=edit&arg=MATCH" in out.output.replace("\n", "")
    assert runner.invoke(app, ["show", "000000000000"]).exit_code == 1
    bad = runner.invoke(app, ["show", "x' DETACH DELETE n"])
    assert bad.exit_code == 1 and "not a retrieval id" in bad.output


def test_a_recorded_ask_links_its_topic_and_answer_entities_and_prints_the_browser_url(loaded, server):
    out = ask("which movies did Christopher Nolan direct", "-d", "metaqa", "--hops", "1")
    assert out.exit_code == 0, out.output
    rid = loaded.query("MATCH (r:Retrieval) RETURN r.id AS id")[0]["id"]
    flat = out.output.replace("\n", "")
    assert f"http://127.0.0.1:{server.http_port}/browser/?cmd=edit&arg=MATCH%20%28r%3ARetrieval%20%7Bid%3A%20%27{rid}%27" in flat
    links = loaded.query("MATCH (:Retrieval {id: $id})-[l:TOPIC|ANSWER]->(n) RETURN type(l) AS type, n.key AS key", {"id": rid})
    expected = {("TOPIC", "Christopher Nolan"), ("ANSWER", "Inception"), ("ANSWER", "The Dark Knight")}
    assert sorted((r["type"], r["key"]) for r in links) == sorted(expected)
    rows = loaded.query(show_query(rid))
    assert {r["r"]["id"] for r in rows} == {rid}
    assert {(m.type, m.end_node["key"]) for row in rows for m in row["marks"]} == expected
    assert {r["n"]["key"] for r in rows} >= {"Christopher Nolan", "Inception", "The Dark Knight"}
    # Retrieval only: topics are linked, nothing is marked as an answer.
    rid = json.loads(ask("who directed Titanic?", "-d", "metaqa", "-e", "Titanic", "--json", "--no-answer").stdout)["retrieval_id"]
    links = loaded.query("MATCH (:Retrieval {id: $id})-[l:TOPIC|ANSWER]->(n) RETURN type(l) AS type, n.key AS key", {"id": rid})
    assert [(r["type"], r["key"]) for r in links] == [("TOPIC", "Titanic")]


def test_no_record_writes_nothing(loaded):
    before = counts(loaded)
    out = ask("who directed Titanic?", "-d", "metaqa", "-e", "Titanic", "--json", "--no-answer", "--no-record")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["retrieval_id"] is None
    assert counts(loaded) == before


def test_a_question_made_of_cypher_changes_nothing(loaded):
    before = counts(loaded)
    for question in ["MATCH (n) DETACH DELETE n", "'}) MATCH (n) DETACH DELETE n //", "$q RETURN 1; DROP INDEX entity_text_embedding"]:
        out = ask(question, "-d", "metaqa", "--json", "--no-answer", "--no-record")
        assert out.exit_code == 0, out.output
    out = ask("who?", "-d", "metaqa", "-e", "x'}) DETACH DELETE n //", "--no-answer", "--no-record")
    assert out.exit_code == 1 and "unknown entity" in out.output
    assert counts(loaded) == before
    assert loaded.query("SHOW INDEXES YIELD name WHERE name = 'entity_text_embedding' RETURN count(*) AS n")[0]["n"] == 1


def test_clear_errors_and_exit_codes(loaded):
    cases = [
        (["   ", "-d", "metaqa"], "question is empty"),
        (["who?", "-d", "nope"], "no dataset 'nope'"),
        (["who?"], "several datasets are loaded"),
        (["who?", "-d", "metaqa", "-e", "Nobody"], "unknown entity in dataset 'metaqa': 'Nobody'"),
        (["who?", "-d", "metaqa", "--graph", "3"], "--graph does not apply"),
        (["why?", "-d", "explagraphs"], "choose one with --graph"),
        (["why?", "-d", "explagraphs", "--graph", "999"], "no graph '999' in dataset 'explagraphs'"),
        (["-d", "metaqa"], "question is empty"),
        (["", "-d", "explagraphs", "--graph", "999"], "no question is stored with graph '999' of dataset 'explagraphs'"),
        (["who?", "-d", "metaqa", "--hops", "4"], "--hops must be between 0 and 3"),
    ]
    for args, message in cases:
        out = ask(*args, "--no-answer", "--no-record")
        assert out.exit_code == 1, (args, out.output)
        assert message in out.output.replace("\n", " "), (args, out.output)


def test_per_sample_graph_is_returned_whole_with_its_own_node_ids(loaded):
    out = ask("Argument 1: cannabis should be legal.", "-d", "explagraphs", "--graph", "0", "--json", "--no-answer", "--no-record")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["mode"] == "whole"
    nodes, edges = result["desc"].split("\n\n")
    assert nodes == "node_id,node_attr\n0,cannabis\n1,marijuana\n2,legal\n3,more available\n4,good thing"
    # G-Retriever lists edges in source order; the data model keeps no edge position, so the order
    # here is by head then tail index (a loader that stores REL.idx gets the source order).
    lines = edges.splitlines()
    assert lines[0] == "src,edge_attr,dst"
    assert sorted(lines[1:]) == sorted(["0,synonym of,1", "2,causes,3", "1,capable of,4", "4,desires,2"])


def test_a_graph_without_a_typed_question_is_asked_its_stored_one(loaded):
    out = ask("-d", "explagraphs", "--graph", "0", "--json", "--no-answer", "--no-record")
    assert out.exit_code == 0, out.output
    stored = loaded.query("MATCH (q:Question {dataset: 'explagraphs'})-[:ON_GRAPH]->(:Graph {graph: '0'}) RETURN q.text AS t")
    assert json.loads(out.stdout)["question"] == stored[0]["t"] and stored[0]["t"].startswith("Argument 1: ")


def test_retrieve_writes_training_samples(loaded, tmp_path):
    out_file = tmp_path / "dev.pt"
    split = loaded.query("MATCH (q:Question {dataset: 'metaqa'}) RETURN DISTINCT q.split AS s")[0]["s"]
    out = runner.invoke(app, ["retrieve", "--dataset", "metaqa", "--split", split, "--out", str(out_file)])
    assert out.exit_code == 0, out.output
    samples = load_samples(out_file)
    assert len(samples) == 2
    by_label = {s.label: s for s in samples}
    titanic = by_label["James Cameron"]
    assert "James Cameron" in titanic.node_texts and "who directed Titanic" in titanic.question
    assert titanic.data.x.shape[0] == len(titanic.node_texts) and titanic.data.edge_attr.shape[0] == titanic.data.edge_index.shape[1]
    assert "Inception|The Dark Knight" in by_label
    assert re.search(r"\d+\.\d questions/s; retrieval p50 [\d.]+ ms, p95 [\d.]+ ms", " ".join(out.output.split()))
    out = runner.invoke(app, ["retrieve", "--dataset", "metaqa", "--split", split, "--out", str(out_file), "--json"])
    report = json.loads(out.stdout)
    assert (report["samples"], report["path"]) == (2, str(out_file)) and report["questions_per_s"] > 0
    assert 0 < report["retrieval_ms"]["p50"] <= report["retrieval_ms"]["p95"]


def test_ask_answers_from_the_graph_by_default_with_the_path_that_supports_it(loaded):
    out = ask("which movies did Christopher Nolan direct", "-d", "metaqa", "--no-record", "--json", "--hops", "1")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert set(result["answer"].split("|")) == {"Inception", "The Dark Knight"} and result["answered_by"].startswith("the graph")
    assert {a["line"] for a in result["answers"]} == {"Christopher Nolan <-directed by- Inception", "Christopher Nolan <-directed by- The Dark Knight"}
    assert [a["key"] for a in result["graph_answers"]] == result["answer"].split("|")
    # One relation path reaches both films: each is an answer with that path's probability.
    assert all(0.5 < a["score"] <= 1.0 for a in result["answers"]) and result["answers"][0]["score"] == result["graph_answers"][0]["score"]
    text = ask("which movies did Christopher Nolan direct", "-d", "metaqa", "--no-record", "--hops", "1")
    assert re.search(r"\d\.\d\d  Christopher Nolan <-directed by- Inception", text.output)
    out = ask("Argument 1: cannabis should be legal.", "-d", "explagraphs", "--graph", "0", "--no-record", "--answer-by", "graph")
    assert out.exit_code == 1 and "gives no answers of its own" in out.output


@pytest.mark.integration
def test_ask_answers_with_the_default_llm(loaded):
    out = ask("who directed Titanic?", "-d", "metaqa", "-e", "Titanic", "--no-record", "--answer-by", "llm")
    assert out.exit_code == 0, out.output
    assert "Answer:" in out.output and "Recorded as" not in out.output
    # By default the answer may only name nodes of the subgraph (or say it is not in the graph).
    result = json.loads(ask("who directed Titanic?", "-d", "metaqa", "-e", "Titanic", "--no-record", "--json", "--answer-by", "llm").stdout)
    nodes = {n["text"] for n in result["nodes"]} | {"not in the graph"}
    assert result["answer"] and set(result["answer"].split("|")) <= nodes and "auto decoding" in result["answered_by"]
    # Each answer item comes with its node and the path from the topic entity to it.
    named = [a for a in result["answers"] if a["text"] != "not in the graph"]
    assert all(a["key"] and (a["path"] or a["key"] == "Titanic") and a["line"] for a in named)
    free = json.loads(ask("who directed Titanic?", "-d", "metaqa", "-e", "Titanic", "--no-record", "--json", "--answer-by", "llm",
                          "--decoding", "free").stdout)
    assert "decoding" not in free["answered_by"]


# What a cold `ask` must not import: retrieval and the graph's answers run on numpy and ONNX Runtime.
HEAVY = ("torch", "torch_geometric", "transformers", "sentence_transformers", "peft")
REPORT_HEAVY = (
    "import atexit, json, sys; "
    f"atexit.register(lambda: print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr)); "
    "from gr_neo4j.__main__ import main; main()"
)


@pytest.mark.parametrize("answering", [["--no-answer"], []], ids=["no-answer", "default-answerer"])
def test_a_cold_ask_imports_neither_torch_nor_pyg_nor_transformers(loaded, server, answering):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")} | {
        "GR_NEO4J_HOME": str(server.home), "GR_NEO4J_DIST": str(server.dist_dir)}
    args = ["which movies did Christopher Nolan direct", "-d", "metaqa", "--hops", "1", "--no-record", "--json", *answering]
    done = subprocess.run([sys.executable, "-c", REPORT_HEAVY, "ask", *args], check=False, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {n["text"] for n in result["nodes"]} >= {"Inception", "The Dark Knight"}
    assert result["answered_by"].startswith("nobody" if answering else "the graph")
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
