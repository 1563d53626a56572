"""Every command's --help renders; `db` commands work through the CLI."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from gr_neo4j.cli import app

runner = CliRunner()


def command_paths(typer_app, prefix=()):
    import typer.main

    group = typer.main.get_command(typer_app)
    stack = [(prefix, group)]
    while stack:
        path, cmd = stack.pop()
        yield path
        for name, sub in getattr(cmd, "commands", {}).items():
            stack.append((path + (name,), sub))


@pytest.mark.parametrize("path", sorted(command_paths(app)), ids=lambda p: " ".join(p) or "root")
def test_help_renders(path):
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
    # rich swallows "[...]" in help texts as markup and leaves "word ." behind
    assert not re.search(r"\w \.(\s|│)", result.output), result.output


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("gr-neo4j ")


def test_db_status_and_init_through_the_cli(server, monkeypatch):
    monkeypatch.setenv("GR_NEO4J_HOME", str(server.home))
    status = runner.invoke(app, ["db", "status"])
    assert status.exit_code == 0, status.output
    assert "running" in status.output and "yes" in status.output
    assert f"127.0.0.1:{server.bolt_port}" in status.output
    init = runner.invoke(app, ["db", "init"])
    assert init.exit_code == 0, init.output
    assert "vector dimension 384" in init.output
