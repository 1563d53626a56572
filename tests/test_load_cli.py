"""`gr-neo4j load`, `stats`, `drop` through the CLI: tables, one-line errors, dropping one dataset only."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, metaqa_fixture
from test_load_support import counts, tiny_embedder
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.ingest import dataset_stats, drop_dataset, load_dataset

runner = CliRunner()


def test_load_prints_the_table_and_stats_lists_the_dataset(conn, env):
    result = runner.invoke(app, ["load", "metaqa", "--path", str(metaqa_fixture())], env=env)
    assert result.exit_code == 0, result.output
    for word in ("nodes", "relationships", "questions", "skipped records", "time", "triples/s"):
        assert word in result.output
    result = runner.invoke(app, ["stats"], env=env)
    assert result.exit_code == 0, result.output
    assert "metaqa" in result.output and "KG" in result.output and "questions dev 5" in result.output


def test_skip_prints_how_many_and_why(conn, env):
    result = runner.invoke(app, ["load", "triples", "--path", str(FIXTURES / "triples_bad" / "bad_columns.csv"), "--on-error", "skip"], env=env)
    assert result.exit_code == 0, result.output
    assert "skipped 1 malformed record(s): 1 × wrong column count" in result.output
    assert "bad_columns.csv:2" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["load", "metaqa", "--path", "/no/such/dir"], "/no/such/dir does not exist"),
        (["load", "nosuch"], "unknown dataset 'nosuch'"),
        (["load", "explagraphs", "--path", str(FIXTURES / "explagraphs" / "bad_graph.tsv")], "bad_graph.tsv:2: unparsable graph string"),
        (["load", "metaqa", "--path", str(metaqa_fixture()), "--split", "val"], "metaqa has no split val"),
        (["drop", "nosuch"], "no dataset named 'nosuch'"),
    ],
)
def test_errors_are_one_line(conn, env, args, message):
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert "Traceback" not in result.output
    if args[0] == "drop" or "--path" not in args or "/no/such/dir" in args:
        assert len([line for line in result.output.splitlines() if line.strip()]) == 1  # nothing before it either


def test_drop_removes_one_dataset_and_nothing_else(server, conn, env):
    load_dataset(server, "metaqa", path=metaqa_fixture(), embedder=tiny_embedder())
    load_dataset(server, "explagraphs", path=FIXTURES / "explagraphs" / "three_rows.tsv", embedder=tiny_embedder())
    load_dataset(server, "triples", path=FIXTURES / "triples" / "graphs.jsonl", embedder=tiny_embedder())
    explagraphs, triples = counts(conn, "explagraphs"), counts(conn, "triples")
    result = runner.invoke(app, ["drop", "metaqa", "--yes"], env=env)
    assert result.exit_code == 0, result.output
    assert "Dropped metaqa: 12 nodes, 13 relationships, 0 graphs, 5 questions" in result.output
    assert set(counts(conn, "metaqa").values()) == {0}
    assert counts(conn, "explagraphs") == explagraphs and counts(conn, "triples") == triples
    assert [s.name for s in dataset_stats(server)] == ["explagraphs", "triples"]
    # per-sample datasets drop their Graph nodes too
    drop_dataset(server, "explagraphs")
    assert set(counts(conn, "explagraphs").values()) == {0}
    assert counts(conn, "triples") == triples
