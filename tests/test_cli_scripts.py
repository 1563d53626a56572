"""The CLI in scripts: whole table cells on a pipe, --json on stdout alone, Ctrl-C exits 130,
`drop` asks first (or --yes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import typer
from conftest import free_port
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.cli.common import handles_errors

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


@pytest.mark.parametrize("after_s", [1.0, 3.0])
def test_sigint_exits_130_without_a_traceback(tmp_path, after_s):
    # `stats` against a port where nothing listens waits 8 s for Bolt: SIGINT lands while Python
    # imports the CLI (1 s, usually) or while the command waits (3 s); both end the same way.
    env = {**os.environ, "GR_NEO4J_HOME": str(tmp_path), "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}", "NEO4J_PASSWORD": "x"}
    child = subprocess.Popen([sys.executable, "-m", "gr_neo4j", "stats"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(after_s)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert err.strip() == "interrupted" and out == ""
