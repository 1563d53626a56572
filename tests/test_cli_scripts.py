"""The CLI in scripts: whole table cells on a pipe, --json on stdout alone, Ctrl-C exits 130,
`drop` asks first (or --yes)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
import typer
from conftest import metaqa_fixture
from test_load_support import tiny_embedder, tiny_embedder_path
from test_model_support import tiny_llm
from typer.testing import CliRunner

from gr_neo4j.cli import app, data
from gr_neo4j.cli.errors import handles_errors
from gr_neo4j.ingest import load_dataset

runner = CliRunner()


def test_tables_are_whole_when_stdout_is_not_a_terminal(tmp_path):
    # `db status` of a server that is not running prints its table without Neo4j (exit 3).
    home = tmp_path / ("a-very-long-directory-name-" * 8) / "home"
    result = runner.invoke(app, ["db", "status"], env={"GR_NEO4J_HOME": str(home), "NEO4J_URI": None, "COLUMNS": "80"})
    assert result.exit_code == 3, result.output
    assert str(home) in result.stdout  # one piece, on one line, not cut to 80 columns


def test_ctrl_c_in_a_command_is_one_line_and_exit_130():
    interrupted = typer.Typer()

    @interrupted.command()
    @handles_errors
    def wait() -> None:
        raise KeyboardInterrupt

    result = runner.invoke(interrupted, [])
    assert result.exit_code == 130, result.output
    assert result.stderr.strip() == "interrupted" and result.stdout == ""


def _maps_numpy(pid: int) -> bool:
    with open(f"/proc/{pid}/maps") as maps:
        return "_multiarray_umath" in maps.read()


@pytest.mark.parametrize("moment", ["importing", "waiting"])
def test_sigint_exits_130_without_a_traceback(tmp_path, moment):
    # SIGINT lands while Python imports the CLI (numpy's extension, which only the CLI's imports
    # load, is mapped) or while `stats` waits for Bolt on a port that accepts and never answers
    # (the child's connection is accepted); both end the same way. Each moment is waited for as
    # an event, not a delay, so a loaded machine cannot move the signal to another moment.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        env = {**os.environ, "GR_NEO4J_HOME": str(tmp_path), "NEO4J_URI": f"bolt://127.0.0.1:{silent.getsockname()[1]}", "NEO4J_PASSWORD": "x"}
        child = subprocess.Popen([sys.executable, "-m", "gr_neo4j", "stats"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if moment == "importing":
            while child.poll() is None and not _maps_numpy(child.pid):
                time.sleep(0.005)
        else:
            silent.settimeout(300)
            connection, _ = silent.accept()  # held open, unanswered, until the child has ended
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
        if moment == "waiting":
            connection.close()
    assert child.returncode == 130, err
    assert err.strip() == "interrupted" and out == ""


def test_json_goes_alone_to_stdout_without_neo4j(tmp_path):
    result = runner.invoke(app, ["db", "status", "--json"], env={"GR_NEO4J_HOME": str(tmp_path), "NEO4J_URI": None})
    assert result.exit_code == 3, result.output  # stopped: the same status as without --json
    status = json.loads(result.stdout)
    assert status["running"] is False and status["home"] == str(tmp_path) and status["nodes"] is None

    llm_dir = tmp_path / "tiny-llm"
    model, tokenizer = tiny_llm()
    model.save_pretrained(llm_dir)
    tokenizer.save_pretrained(llm_dir)
    env = {"GR_NEO4J_HOME": str(tmp_path), "GR_NEO4J_EMBEDDER": str(tiny_embedder_path()), "GR_NEO4J_LLM": str(llm_dir)}
    result = runner.invoke(app, ["models", "--json"], env=env)
    assert result.exit_code == 0, result.output
    embedder, llm = json.loads(result.stdout)["models"]
    assert (embedder["role"], embedder["location"], embedder["available"]) == ("embedder", str(tiny_embedder_path()), True)
    assert (llm["role"], llm["location"], llm["architecture"]) == ("llm", str(llm_dir), "LlamaForCausalLM")
    assert llm["parameters"] > 0


def test_json_of_stats_status_and_eval_retrieval(server, conn, env, tmp_path):
    load_dataset(server, "metaqa", path=metaqa_fixture(), embedder=tiny_embedder())
    result = runner.invoke(app, ["stats", "--json"], env=env)
    assert result.exit_code == 0, result.output
    (metaqa,) = json.loads(result.stdout)["datasets"]
    assert (metaqa["name"], metaqa["kind"], metaqa["status"]) == ("metaqa", "knowledge-graph", "complete")
    assert (metaqa["entities"], metaqa["relationships"], metaqa["questions"]) == (12, 13, 5)

    result = runner.invoke(app, ["db", "status", "--json"], env=env)
    assert result.exit_code == 0, result.output
    status = json.loads(result.stdout)
    assert status["running"] is True and status["nodes"] >= 12 and status["bolt_uri"].startswith("bolt://")

    figures = tmp_path / "figures.json"
    args = ["eval-retrieval", "-d", "metaqa", "--hops", "1", "--limit", "3", "--mode", "paths", "--json", "--json-out", str(figures)]
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)  # the tables and the note on --json-out are not on stdout
    assert report == json.loads(figures.read_text())
    assert report["dataset"] == "metaqa" and set(report["hops"]["1"]["modes"]) == {"paths"}
    # both figures are rounded to 0.01, so the rate must lie where some unrounded time puts it
    seconds, rate = report["seconds"], report["questions_per_s"]
    assert rate > 0 and 3 / (seconds + 0.005) - 0.005 <= rate <= 3 / max(seconds - 0.005, 1e-9) + 0.005
    text = runner.invoke(app, args[:-3], env=env)  # the tables, and the rate under them
    assert text.exit_code == 0, text.output
    assert re.search(r"^3 questions in [\d.]+ s: [\d.]+ questions/s, each through 1 mode$", text.stdout, re.MULTILINE), text.stdout
    assert f"figures written to {figures}" in " ".join(result.stderr.split())


def test_drop_asks_on_a_terminal_and_refuses_elsewhere_without_yes(server, conn, env, monkeypatch):
    load_dataset(server, "metaqa", path=metaqa_fixture(), embedder=tiny_embedder())
    holds = "12 nodes, 13 relationships, 0 graphs, 5 questions"
    result = runner.invoke(app, ["drop", "metaqa"], env=env)  # CliRunner's stdin is not a terminal
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"error: not dropping metaqa ({holds}) without confirmation: stdin is not a terminal; add --yes"

    monkeypatch.setattr(data, "stdin_is_terminal", lambda: True)
    result = runner.invoke(app, ["drop", "metaqa"], env=env, input="\n")  # the default is no
    assert result.exit_code == 1, result.output
    assert f"Drop metaqa ({holds})? [y/N]" in result.stderr and "Nothing dropped." in result.stderr and result.stdout == ""
    assert [s["name"] for s in json.loads(runner.invoke(app, ["stats", "--json"], env=env).stdout)["datasets"]] == ["metaqa"]

    result = runner.invoke(app, ["drop", "metaqa"], env=env, input="y\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"Dropped metaqa: {holds}."
    assert json.loads(runner.invoke(app, ["stats", "--json"], env=env).stdout)["datasets"] == []
