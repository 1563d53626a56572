"""The managed Neo4j: install, start (twice), status, stop, and its failure modes."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import typer
from conftest import free_port, make_settings, server_home
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.cli.errors import handles_errors
from gr_neo4j.connection import connect
from gr_neo4j.errors import ConnectionFailed, ServerError
from gr_neo4j.home.layout import layout_of
from gr_neo4j.home.pid import is_server_of
from gr_neo4j.server import process
from gr_neo4j.server.install import install
from gr_neo4j.server.java import find_java


@pytest.fixture()
def imposter():
    """Start a harmless process whose command line looks like Neo4j's (but is no JVM)."""
    started = []

    def start(home: Path) -> subprocess.Popen:
        argv = [sys.executable, "-c", "import time; time.sleep(300)", "neo4j", "org.neo4j.server.CommunityEntryPoint", f"--home-dir={home}"]
        started.append(subprocess.Popen(argv))
        return started[-1]

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def _plain_bind_works(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def lifecycle_settings():
    settings = make_settings(server_home("lifecycle"))
    yield settings
    process.stop(settings)
    shutil.rmtree(settings.home, ignore_errors=True)


def test_second_install_is_a_no_op(lifecycle_settings):
    first = install(lifecycle_settings)
    again = install(lifecycle_settings)
    assert again.installed_now is False
    assert again.lib_dir == first.lib_dir
    assert first.version.startswith("5.26.")
    assert any(first.lib_dir.glob("neo4j-browser-*.jar"))


def test_start_twice_status_connect_stop(lifecycle_settings):
    s = lifecycle_settings
    info = process.start(s)
    assert info.running and not info.already_running
    assert info.bolt_uri == f"bolt://127.0.0.1:{s.bolt_port}"
    conf_before = (s.home / "conf" / "neo4j.conf").read_text()

    again = process.start(s)
    assert again.already_running and again.pid == info.pid
    assert (s.home / "conf" / "neo4j.conf").read_text() == conf_before

    status = process.status(s, with_counts=True)
    assert status.running and status.version.startswith("5.26.") and status.store_bytes > 0
    assert status.nodes == 0

    # The generated password works, is private, and never reaches the logs.
    password_file = s.home / "password"
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    password = password_file.read_text().strip()
    assert len(password) >= 24
    with connect(s) as conn:
        assert conn.version >= (5, 26)
        assert conn.query("RETURN 1 AS one")[0]["one"] == 1
    for log in (s.home / "logs").iterdir():
        assert password not in log.read_text(errors="replace"), log

    # Only the loopback interface is bound.
    assert "server.default_listen_address=127.0.0.1" in conf_before

    # The pid file names the real server: a JVM running Neo4j's entry point for this home.
    argv = Path(f"/proc/{info.pid}/cmdline").read_bytes().split(b"\0")
    assert is_server_of(argv, s.home) and not is_server_of(argv, s.home / "data")

    assert process.stop(s) is True
    assert process.status(s).running is False
    assert process.stop(s) is False


def test_stopped_server_gives_a_clear_error_at_once(lifecycle_settings, server_checks):
    assert not process.status(lifecycle_settings).running
    with pytest.raises(ConnectionFailed, match=f"the managed Neo4j in {lifecycle_settings.home} is not running: run `gr-neo4j db start`"):
        connect(lifecycle_settings)
    assert server_checks == []  # not the 8 s of retries against a port nothing will open


def test_start_makes_the_home_private_and_ignores_a_stale_pid(lifecycle_settings, imposter):
    """An older home left data/ and logs/ world-readable and a crash left a pid file whose number
    now belongs to an unrelated process: start fixes the first and neither trusts nor kills the second."""
    s = lifecycle_settings
    (s.home / "data").chmod(0o755)
    (s.home / "logs").chmod(0o755)
    next((s.home / "logs").glob("*.log")).chmod(0o644)
    proc = imposter(s.home)
    (s.home / "run" / "neo4j.pid").write_text(f"{proc.pid}\n")

    info = process.start(s)
    assert info.running and not info.already_running and info.pid != proc.pid
    assert proc.poll() is None
    exposed = [
        f"{oct(stat.S_IMODE(p.lstat().st_mode))} {p}"
        for d in ("data", "logs", "run", "conf")
        for p in [s.home / d, *(s.home / d).rglob("*")]
        if not p.is_symlink() and p.lstat().st_mode & 0o077
    ]
    assert exposed == []


def test_stop_then_start_at_once_on_the_same_ports(lifecycle_settings):
    s = lifecycle_settings
    assert process.status(s).running
    # A client still connected when the server stops: the server closes first, so its end of the
    # connection lingers in TIME_WAIT on the Bolt port, as after any `db stop` with open drivers.
    with socket.create_connection(("127.0.0.1", s.bolt_port)) as client:
        assert process.stop(s) is True
        client.settimeout(10)
        assert client.recv(1) == b""
    assert not _plain_bind_works(s.bolt_port)  # what the old probe saw: "port in use"
    began = time.monotonic()
    info = process.start(s)
    assert info.running and info.bolt_uri == f"bolt://127.0.0.1:{s.bolt_port}"
    assert time.monotonic() - began < 90
    with connect(s) as conn:
        assert conn.query("RETURN 1 AS one")[0]["one"] == 1


def test_a_start_that_fails_after_the_launch_leaves_no_server_behind(lifecycle_settings, monkeypatch):
    # As when the launcher times out after forking the server, or Bolt never answers in time.
    s = lifecycle_settings
    process.stop(s)

    def no_bolt(*args, **kwargs):
        raise ServerError("Bolt did not answer")

    monkeypatch.setattr(process, "_wait_for_bolt", no_bolt)
    with pytest.raises(ServerError, match="Bolt did not answer"):
        process.start(s)
    layout = layout_of(s)
    assert process.running_pid(layout) is None and not layout.pid_file.exists()
    assert not any(is_server_of(argv, s.home) for argv in _argvs())
    monkeypatch.undo()
    assert process.start(s).running


def _argvs() -> list[list[bytes]]:
    """The command line of every process (those gone while reading are skipped)."""
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                out.append((p / "cmdline").read_bytes().split(b"\0"))
            except OSError:
                pass
    return out


def test_server_killed_mid_command_is_one_line(lifecycle_settings, server_checks):
    """kill -9 of the server during a query: the command ends in one line (after the driver's
    retries), and the next command says at once that the server is not running."""
    s = lifecycle_settings
    pid = process.status(s).pid
    assert pid

    def long_query() -> None:
        with connect(s) as conn:
            threading.Timer(1.0, os.kill, (pid, signal.SIGKILL)).start()
            conn.query("UNWIND range(1, 2000000000) AS i WITH i WHERE i < 0 RETURN count(*) AS n")

    cli = typer.Typer()
    cli.command()(handles_errors(long_query))
    env = {"GR_NEO4J_HOME": str(s.home), "GR_NEO4J_DIST": str(s.dist_dir), "GR_NEO4J_DEBUG": None}
    result = CliRunner().invoke(cli, [], env=env)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith("error: Neo4j stopped or became unreachable during the command (ServiceUnavailable")
    assert lines[0].endswith("once it is up, run it again: loads resume where they stopped")

    server_checks.clear()
    result = CliRunner().invoke(app, ["stats"], env=env)
    assert result.exit_code == 1
    assert result.output.strip() == f"error: the managed Neo4j in {s.home} is not running: run `gr-neo4j db start`"
    assert server_checks == []  # told from the pid file, not after 8 s of connection retries


def test_port_probe_ignores_time_wait():
    port = free_port()
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = listener.accept()
            accepted.close()  # the server side closes first and keeps the TIME_WAIT
            assert client.recv(1) == b""
    assert not _plain_bind_works(port)
    assert process.port_is_free(port)


def test_stale_pid_file_never_kills_an_unrelated_process(tmp_path, imposter):
    settings = make_settings(tmp_path / "home")
    layout = layout_of(settings)
    layout.make_dirs()
    layout.create_password()
    proc = imposter(settings.home)
    layout.pid_file.write_text(f"{proc.pid}\n")
    env = {"GR_NEO4J_HOME": str(settings.home), "GR_NEO4J_DIST": str(settings.dist_dir)}

    result = CliRunner().invoke(app, ["db", "stop"], env=env)
    assert result.exit_code == 0 and "Neo4j is not running." in result.output
    assert process.status(settings).running is False
    with pytest.raises(ConnectionFailed, match="is not running: run `gr-neo4j db start`"):
        connect(settings)
    layout.pid_file.write_text(f"{proc.pid}\n")
    assert process.stop(settings) is False
    time.sleep(0.5)
    assert proc.poll() is None, "db stop killed a process that is not this home's Neo4j"


def test_only_a_jvm_running_the_server_of_this_home_counts(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    jvm = [b"/usr/lib/jvm/java-17/bin/java", b"-cp", b"/dist/lib/*", b"-XX:+UseG1GC", b"org.neo4j.server.CommunityEntryPoint",
           f"--home-dir={home}".encode(), f"--config-dir={home}/conf".encode()]
    assert is_server_of(jvm, home)
    assert not is_server_of(jvm, tmp_path / "another-home")
    assert not is_server_of([b"/usr/bin/python3", *jvm[1:]], home)  # the right words, not a JVM
    assert not is_server_of([b"/usr/bin/java", b"org.neo4j.server.startup.Neo4jCommand", b"start"], home)
    assert not is_server_of([b"/work/.venv/bin/python", b"/work/.venv/bin/gr-neo4j", b"db", b"stop"], home)


def test_wrong_password_gives_a_clear_error_quickly(server, server_checks):
    with pytest.raises(ConnectionFailed, match="rejected the credentials"):
        connect(server.with_(password="not-the-password"))
    assert len(server_checks) == 1  # a rejected password is final: no retries


def test_external_uri_variables(server, monkeypatch):
    password = (server.home / "password").read_text().strip()
    port = (process.status(server).bolt_uri or "").rsplit(":", 1)[1]
    for scheme in ("bolt", "neo4j"):
        monkeypatch.setenv("NEO4J_URI", f"{scheme}://127.0.0.1:{port}")
        monkeypatch.setenv("NEO4J_PASSWORD", password)
        monkeypatch.setenv("NEO4J_DATABASE", "neo4j")
        from gr_neo4j.settings import load_settings

        settings = load_settings(home=server.home)
        assert not settings.managed
        with connect(settings) as conn:
            assert conn.query("RETURN 2 AS two")[0]["two"] == 2


def test_unreachable_host_fails_fast(monkeypatch, tmp_path):
    monkeypatch.setenv("NEO4J_URI", f"bolt://127.0.0.1:{free_port()}")
    monkeypatch.setenv("NEO4J_PASSWORD", "whatever-password")
    from gr_neo4j.settings import load_settings

    began = time.monotonic()
    with pytest.raises(ConnectionFailed, match="unreachable after 8 s"):
        connect(load_settings(home=tmp_path))
    # Bounded by the 8 s retry budget plus one 3 s connection timeout; 60 s holds on a loaded machine.
    assert time.monotonic() - began < 60


def test_busy_port_is_refused_with_one_line(tmp_path):
    settings = make_settings(tmp_path / "home")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", settings.bolt_port))
        busy.listen()
        with pytest.raises(ServerError, match=f"port {settings.bolt_port} \\(Bolt\\).*already in use"):
            process.start(settings)
    assert not process.status(settings).running


def test_failed_start_names_the_log_without_a_traceback(tmp_path, monkeypatch):
    home = tmp_path / "home"
    settings = make_settings(home)
    monkeypatch.setenv("GR_NEO4J_HOME", str(home))
    monkeypatch.setenv("GR_NEO4J_BOLT_PORT", str(settings.bolt_port))
    monkeypatch.setenv("GR_NEO4J_HTTP_PORT", str(settings.http_port))
    monkeypatch.setenv("GR_NEO4J_DIST", str(settings.dist_dir))
    monkeypatch.setenv("GR_NEO4J_HEAP", "lots")  # not a memory size: Neo4j refuses to start
    result = CliRunner().invoke(app, ["db", "start"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "error:" in result.output and "log:" in result.output
    assert not process.status(settings).running


def test_missing_java_is_one_clear_line(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ServerError, match="Java 17 or 21 is needed.*not on PATH"):
        find_java()


def test_wrong_java_version_is_refused(monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "java"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho \'openjdk version "11.0.22" 2024-01-16\' >&2\n')
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(ServerError, match="Java 11"):
        find_java()
