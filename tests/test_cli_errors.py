"""Bad input and faults end as one line on stderr and exit 1 (2 for usage errors), never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from conftest import make_settings, server_home
from neo4j import GraphDatabase
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.cli.errors import LINE_LIMIT, handles_errors, one_line
from gr_neo4j.connection import connect
from gr_neo4j.home.layout import layout_of
from gr_neo4j.server import process


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


def test_stopped_managed_server_is_said_at_once(stopped_home, server_checks):
    line = error_line(invoke(app, ["stats"], env_of(stopped_home)))
    assert line == f"error: the managed Neo4j in {stopped_home.home} is not running: run `gr-neo4j db start`"
    assert server_checks == []  # told from the pid file, not after 8 s of connection retries


def test_non_utf8_argument_is_a_usage_error(stopped_home):
    # A real command line: Python keeps the byte 0xff as a lone surrogate in sys.argv.
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("gr-neo4j")), "load", "triples", "--path", b"/tmp/caf\xff.tsv"],
        env={k: v for k, v in (os.environ | env_of(stopped_home)).items() if v is not None},
        capture_output=True,
        timeout=120,
        check=False,
    )
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "Traceback" not in err and proc.stdout == b""
    assert err.strip().splitlines() == ["error: argument '/tmp/caf\\xff.tsv' is not valid UTF-8"]


def test_non_utf8_question_is_a_usage_error(stopped_home):
    line = error_line(invoke(app, ["ask", "who directed caf\udce9?"], env_of(stopped_home)), code=2)
    assert line == "error: argument 'who directed caf\\xe9?' is not valid UTF-8"


def test_long_argument_is_cut_to_a_readable_line(stopped_home):
    long_path = "/tmp/" + "a" * 100_000 + "/triples.tsv"
    line = error_line(invoke(app, ["load", "triples", "--path", long_path], env_of(stopped_home)))
    assert len(line) <= LINE_LIMIT + len("error: ")
    assert "/tmp/aaaa" in line and "…" in line


def test_one_line_keeps_the_start_and_the_end():
    question = " ".join(["word"] * 30_000)
    line = one_line(f"no answer for '{question}' (log: /home/me/logs/neo4j.log)\nsecond line")
    assert len(line) <= LINE_LIMIT and "\n" not in line
    assert line.startswith("no answer for 'word word") and line.endswith("(log: /home/me/logs/neo4j.log) second line")


def test_markup_in_an_argument_is_printed_as_is(stopped_home):
    line = error_line(invoke(app, ["load", "triples", "--path", "/tmp/[/bold]x[red].tsv"], env_of(stopped_home)))
    assert "/tmp/[/bold]x[red].tsv" in line


def test_retrieve_out_that_is_a_directory_is_refused_first(stopped_home, tmp_path):
    line = error_line(invoke(app, ["retrieve", "-d", "metaqa", "-s", "dev", "--out", str(tmp_path)], env_of(stopped_home)))
    assert f"the output '{tmp_path}' is a directory; give a file name such as '{tmp_path}/metaqa_dev.pt'" in line


def _command(work) -> typer.Typer:
    """A one-command CLI with the error handling of every gr-neo4j command."""
    cli = typer.Typer()
    cli.command()(handles_errors(work))
    return cli


def test_file_errors_are_one_line_and_debug_shows_the_traceback(tmp_path):
    target = tmp_path / "samples.pt"
    target.mkdir()
    cli = _command(lambda: target.write_text("x"))
    assert error_line(invoke(cli, [], {})) == f"error: {target}: Is a directory (IsADirectoryError)"
    result = invoke(cli, [], {"GR_NEO4J_DEBUG": "1"})
    assert isinstance(result.exception, IsADirectoryError)


# --- a disk that fills up under the store --------------------------------------------------------


@pytest.fixture(scope="module")
def small_disk():
    """A managed server whose data/ is a 700 MB tmpfs: Neo4j preallocates 2 x 256 MB of
    transaction log, leaving under 200 MB for the store."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    settings = make_settings(server_home("small-disk"))
    data = layout_of(settings).data_dir
    data.mkdir(parents=True, mode=0o700)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=700m,mode=0700", "tmpfs", str(data)], capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        process.start(settings)
        yield settings
    finally:
        process.stop(settings)
        subprocess.run(["umount", str(data)], check=True)
        shutil.rmtree(settings.home, ignore_errors=True)


def test_disk_full_is_one_line_naming_the_store(small_disk):
    def fill() -> None:
        with connect(small_disk) as conn:
            for _ in range(100):  # 10 MB per transaction, far more than the disk holds
                conn.query("UNWIND range(1, 100) AS i CREATE (:Filler {text: $text})", {"text": "x" * 100_000})

    env = env_of(small_disk)
    line = error_line(invoke(_command(fill), [], env))
    store = layout_of(small_disk).data_dir
    assert line.startswith("error: Neo4j could not write (Neo.DatabaseError.Transaction.TransactionCommitFailed)")
    assert f"the disk of its store {store} is full; free space, restart Neo4j" in line
    # Every later command meets the same failed database and says the same.
    again = error_line(invoke(app, ["stats"], env))
    assert f"the disk of its store {store} is full" in again
