"""The CLI in scripts: whole table cells on a pipe, --json on stdout alone, Ctrl-C exits 130,
`drop` asks first (or --yes)."""

from __future__ import annotations

from typer.testing import CliRunner

from gr_neo4j.cli import app

runner = CliRunner()


def test_tables_are_whole_when_stdout_is_not_a_terminal(tmp_path):
    # `db status` of a server that is not running prints its table without Neo4j (exit 3).
    home = tmp_path / ("a-very-long-directory-name-" * 8) / "home"
    result = runner.invoke(app, ["db", "status"], env={"GR_NEO4J_HOME": str(home), "NEO4J_URI": None, "COLUMNS": "80"})
    assert result.exit_code == 3, result.output
    assert str(home) in result.stdout  # one piece, on one line, not cut to 80 columns
