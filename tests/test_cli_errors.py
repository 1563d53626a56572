"""Bad input and faults end as one line on stderr and exit 1 (2 for usage errors), never a traceback."""

from __future__ import annotations

import time

import pytest
from conftest import make_settings
from neo4j import GraphDatabase
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.server import process
from gr_neo4j.server.layout import layout_of


def env_of(settings, **extra) -> dict:
    """The environment of a CLI run against the managed server of `settings`."""
    env = {"GR_NEO4J_HOME": str(settings.home), "GR_NEO4J_DIST": str(settings.dist_dir)}
    env |= {var: None for var in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE", "GR_NEO4J_DEBUG")}
    return env | extra


def invoke(target, args: list[str], env: dict):
    return CliRunner().invoke(target, args, env=env)


def error_line(result, code: int = 1) -> str:
    """The one line a failed command printed; asserts that it is one line and no traceback."""
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)  # not an uncaught error
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.fixture()
def stopped_home(tmp_path):
    """The home of a managed server that was started once (it has a password) and is not running."""
    settings = make_settings(tmp_path / "home")
    layout_of(settings).make_dirs()
    layout_of(settings).create_password()
    return settings


def test_http_uri_says_use_bolt(stopped_home):
    env = env_of(stopped_home, NEO4J_URI="http://127.0.0.1:7474", NEO4J_PASSWORD="secret")
    line = error_line(invoke(app, ["stats"], env))
    assert "NEO4J_URI='http://127.0.0.1:7474' is an HTTP address and gr-neo4j talks Bolt: use bolt:// or neo4j:// (+s for TLS" in line
    assert "7474 is Neo4j's HTTP port, Bolt is 7687" in line


def test_unknown_database_is_named(server):
    line = error_line(invoke(app, ["stats"], env_of(server, NEO4J_DATABASE="no_such_db")))
    assert "database 'no_such_db' does not exist on Neo4j at bolt://127.0.0.1:" in line
    assert "(it has: neo4j, system); set NEO4J_DATABASE" in line


def test_auth_rate_limit_says_wait_and_check_the_password(server):
    password = (server.home / "password").read_text().strip()
    uri = process.status(server).bolt_uri
    # A user of its own: the lock that wrong passwords cause must not hit the session's neo4j user.
    with GraphDatabase.driver(uri, auth=("neo4j", password)) as admin:
        admin.execute_query("CREATE OR REPLACE USER locked_out SET PASSWORD 'right-password' CHANGE NOT REQUIRED", database_="system")
        try:
            env = env_of(server, NEO4J_USERNAME="locked_out", NEO4J_PASSWORD="wrong-password")
            lines = [error_line(invoke(app, ["stats"], env)) for _ in range(4)]  # Neo4j allows 3 failures
            assert "rejected the credentials of user 'locked_out'" in lines[0]
            assert "refuses user 'locked_out' for now: too many failed logins; wait a few seconds and check the password" in lines[-1]
        finally:
            admin.execute_query("DROP USER locked_out IF EXISTS", database_="system")


def test_stopped_managed_server_is_said_at_once(stopped_home):
    began = time.monotonic()
    line = error_line(invoke(app, ["stats"], env_of(stopped_home)))
    assert line == f"error: the managed Neo4j in {stopped_home.home} is not running: run `gr-neo4j db start`"
    assert time.monotonic() - began < 2
