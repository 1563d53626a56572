"""Starting, stopping and inspecting the managed Neo4j.

The server is run by Neo4j's own launcher class (`org.neo4j.server.startup.Neo4jCommand`, what the
official `bin/neo4j` script calls), so JVM options, pid file and shutdown behave as in a normal
installation. `NEO4J_HOME`/`NEO4J_CONF` point the launcher at GR_NEO4J_HOME.

This module sits above `gr_neo4j.connection` (it waits for Bolt and counts through it), which in
turn needs only the lower `home.layout` and `home.pid`: the imports form no cycle.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from ..connection import Target, connect, open_driver
from ..errors import ConnectionFailed, ServerError
from ..home.layout import ServerLayout, layout_of
from ..home.pid import pid_is_server_of, running_pid
from ..progress import Progress
from ..settings import Settings
from .conf import render_conf
from .install import Installation, find_installation, install
from .java import find_java

LAUNCHER = "org.neo4j.server.startup.Neo4jCommand"
START_TIMEOUT_S = 120.0
FULL_DISK_BYTES = 16 << 20  # less free space than this on the store's disk: a write failed for want of it
DEBUG_LOG_TAIL = 4 << 20  # bytes of debug.log searched for the cause of a server-side failure


@dataclass(frozen=True)
class ServerInfo:
    """What `db start` and `db status` report."""

    running: bool
    home: Path
    version: str | None = None
    pid: int | None = None
    bolt_uri: str | None = None
    browser_url: str | None = None
    store_bytes: int = 0
    nodes: int | None = None
    relationships: int | None = None
    already_running: bool = False
    start_seconds: float | None = None

    def to_json(self) -> dict:
        """The fields, paths as text (`gr-neo4j db status --json`)."""
        return {**asdict(self), "home": str(self.home)}


def start(settings: Settings, progress: Progress | None = None) -> ServerInfo:
    """Install if needed, write neo4j.conf, start in the background and wait until Bolt answers.

    `progress` shows the first install's Maven download (see `install.install`).
    """
    layout = layout_of(settings)
    pid = running_pid(layout)
    if pid:
        return _describe(settings, layout, pid, already_running=True)
    began = time.monotonic()
    installation = install(settings, progress)
    java = find_java()
    for port, what, flag in ((settings.bolt_port, "Bolt", "--bolt-port"), (settings.http_port, "HTTP", "--http-port")):
        if not port_is_free(port):
            raise ServerError(f"port {port} ({what}) on 127.0.0.1 is already in use; choose another with {flag}")
    layout.make_dirs()
    layout.write_private(layout.conf_file, render_conf(settings, layout, installation.lib_dir))
    password = layout.read_password() or layout.create_password()
    # A pid file left by a crash may name a live, unrelated process; the launcher would take it
    # for a running Neo4j and refuse to start.
    layout.pid_file.unlink(missing_ok=True)
    try:
        # The launcher is a JVM of its own: on two loaded cores it has taken over 60 s to return.
        _launch(java, installation, layout, "start", timeout=180)
        layout.write_state(bolt_port=settings.bolt_port, http_port=settings.http_port, version=installation.version)
        _wait_for_bolt(settings, layout, password)
    except BaseException:
        # The server may be up although the start failed (the launcher timed out after forking
        # it): a failed start must not leave a server behind that nothing will stop.
        _kill(layout)
        raise
    info = _describe(settings, layout, running_pid(layout))
    return ServerInfo(**{**info.__dict__, "start_seconds": time.monotonic() - began})


def stop(settings: Settings) -> bool:
    """Stop the managed server; False when it was not running."""
    layout = layout_of(settings)
    if not running_pid(layout):
        # Never signal a stale pid: the number may now belong to an unrelated process.
        layout.pid_file.unlink(missing_ok=True)
        layout.state_file.unlink(missing_ok=True)
        return False
    installation = find_installation(settings)
    if installation is None:
        raise ServerError(f"a server runs from {settings.home} but no installation is recorded in {settings.dist_dir}")
    _launch(find_java(), installation, layout, "stop", timeout=180)
    layout.state_file.unlink(missing_ok=True)
    return True


def _kill(layout: ServerLayout, grace_s: float = 30.0) -> None:
    """Stop this home's server process, if one runs, by signal (TERM, then KILL after
    ``grace_s``), and forget its pid and state files."""
    pid = running_pid(layout)
    if pid:
        os.kill(pid, signal.SIGTERM)
        if not _gone(pid, layout, grace_s):
            os.kill(pid, signal.SIGKILL)
            # A killed JVM lives on while the kernel frees its heap: wait, or the next start
            # finds it still holding the store lock and the ports.
            _gone(pid, layout, 30.0)
    layout.pid_file.unlink(missing_ok=True)
    layout.state_file.unlink(missing_ok=True)


def _gone(pid: int, layout: ServerLayout, within_s: float) -> bool:
    """Wait up to ``within_s`` for process ``pid`` to end; True once it has.

    The process is watched, not the pid file: Neo4j deletes that file while it shuts down,
    a second or more before the JVM exits."""
    deadline = time.monotonic() + within_s
    while pid_is_server_of(pid, layout.home) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not pid_is_server_of(pid, layout.home)


def status(settings: Settings, with_counts: bool = False) -> ServerInfo:
    """Running or not, version, store size; with_counts adds node and relationship counts."""
    layout = layout_of(settings)
    info = _describe(settings, layout, running_pid(layout))
    if not (with_counts and info.running):
        return info
    with connect(settings) as conn:
        counts = conn.read("db_counts")[0]
    return ServerInfo(**{**info.__dict__, "nodes": counts["nodes"], "relationships": counts["relationships"]})


def tail_log(settings: Settings, lines: int = 50, debug: bool = False) -> tuple[Path, list[str]]:
    """The last lines of neo4j.log (or debug.log)."""
    layout = layout_of(settings)
    path = layout.logs_dir / ("debug.log" if debug else "neo4j.log")
    if not path.is_file():
        raise ServerError(f"no log yet at {path}: the managed server has never started in {settings.home}")
    with path.open(errors="replace") as f:
        return path, f.read().splitlines()[-lines:]


def out_of_disk_space(settings: Settings) -> Path | None:
    """The store directory when the running server's debug.log reports a full disk since it started.

    Neo4j answers a full disk with a generic TransactionCommitFailed, then refuses every
    transaction; only its debug.log names the cause (OutOfDiskSpaceException). When the logs share
    the full disk that line cannot be written, so a store disk with (almost) no room left counts too.
    """
    layout = layout_of(settings)
    try:
        if shutil.disk_usage(layout.data_dir).free < FULL_DISK_BYTES:
            return layout.data_dir
    except OSError:
        pass
    path = layout.logs_dir / "debug.log"
    try:
        with path.open("rb") as f:
            f.seek(max(path.stat().st_size - DEBUG_LOG_TAIL, 0))
            tail = f.read()
    except OSError:
        return None
    full = max(tail.rfind(marker) for marker in (b"OutOfDiskSpaceException", b"No space left on device"))
    return layout.data_dir if full > tail.rfind(b"======== Neo4j ") else None


def port_is_free(port: int) -> bool:
    """Whether Neo4j could listen on 127.0.0.1:port.

    SO_REUSEADDR, as the JVM sets on its server sockets: connections of a server that just stopped
    linger in TIME_WAIT for a minute, which blocks a plain bind but not Neo4j's listen.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, for a temporary server (tests, benchmarks)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(java: Path, installation: Installation, layout: ServerLayout, command: str, timeout: float = 60) -> None:
    env = {**os.environ, "NEO4J_HOME": str(layout.home), "NEO4J_CONF": str(layout.conf_dir)}
    env.pop("NEO4J_PASSWORD", None)  # the launcher does not need it; keep it out of the child's environment
    cmd = [str(java), "-cp", f"{installation.lib_dir}/*", LAUNCHER, command]
    fd = os.open(layout.launcher_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as log:
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} neo4j {command}\n")
        log.flush()
        try:
            # umask 077: the store, logs and pid file the server writes are its owner's only.
            proc = subprocess.run(
                cmd, check=False, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=timeout, cwd=layout.home, umask=0o077
            )
        except subprocess.TimeoutExpired:
            raise ServerError(f"`neo4j {command}` did not finish within {timeout:.0f} s", layout.launcher_log) from None
    if proc.returncode != 0:
        raise ServerError(f"Neo4j {command} failed: {_last_problem(layout)}", _log_to_show(layout))


def _wait_for_bolt(settings: Settings, layout: ServerLayout, password: str) -> None:
    """Wait until Bolt accepts our password; on a fresh store, replace the initial one first."""
    deadline = time.monotonic() + START_TIMEOUT_S
    uri = f"bolt://127.0.0.1:{settings.bolt_port}"
    while time.monotonic() < deadline:
        if not running_pid(layout):
            raise ServerError(f"Neo4j exited while starting: {_last_problem(layout)}", _log_to_show(layout))
        if _port_open(settings.bolt_port):
            break
        time.sleep(0.5)
    else:
        raise ServerError(f"Bolt did not open on 127.0.0.1:{settings.bolt_port} within {START_TIMEOUT_S:.0f} s", layout.neo4j_log)
    remaining = max(deadline - time.monotonic(), 5.0)
    target = Target(uri, "neo4j", password, "system", managed=True)
    try:
        driver, _ = open_driver(target, wait_s=remaining)
        driver.close()
        return
    except ConnectionFailed as exc:
        if "rejected the credentials" not in exc.message:
            raise ServerError(f"Neo4j started but Bolt does not answer: {exc.message}", layout.neo4j_log) from None
    _set_initial_password(uri, password, layout)


def _set_initial_password(uri: str, password: str, layout: ServerLayout) -> None:
    """A fresh store has user neo4j/neo4j with a password change required: change it over Bolt.

    Done over Bolt rather than with `neo4j-admin dbms set-initial-password` so that the password never
    appears on a command line.
    """
    with GraphDatabase.driver(uri, auth=("neo4j", "neo4j"), connection_timeout=5.0) as driver:
        try:
            driver.execute_query(
                "ALTER CURRENT USER SET PASSWORD FROM $old TO $new", old="neo4j", new=password, database_="system"
            )
        except AuthError:
            raise ServerError(
                f"the server in {layout.home} rejects both the stored password and the initial one; "
                f"restore {layout.password_file} or remove {layout.data_dir} to start afresh"
            ) from None


def _describe(settings: Settings, layout: ServerLayout, pid: int | None, already_running: bool = False) -> ServerInfo:
    state = layout.read_state() or {}
    installation = find_installation(settings)
    version = state.get("version") or (installation.version if installation else None)
    store = _dir_size(layout.data_dir)
    if not pid:
        return ServerInfo(running=False, home=settings.home, version=version, store_bytes=store)
    bolt, http = state.get("bolt_port", settings.bolt_port), state.get("http_port", settings.http_port)
    return ServerInfo(
        running=True,
        home=settings.home,
        version=version,
        pid=pid,
        bolt_uri=f"bolt://127.0.0.1:{bolt}",
        browser_url=f"http://127.0.0.1:{http}/browser/",
        store_bytes=store,
        already_running=already_running,
    )


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _dir_size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def _log_to_show(layout: ServerLayout) -> Path:
    return layout.neo4j_log if layout.neo4j_log.is_file() else layout.launcher_log


def _last_problem(layout: ServerLayout) -> str:
    """The most telling line: the last ERROR of neo4j.log, else the launcher's last words."""
    for path, marker in ((layout.neo4j_log, " ERROR "), (layout.launcher_log, "")):
        if path.is_file():
            lines = [l.strip() for l in path.read_text(errors="replace").splitlines() if l.strip() and not l.startswith("---")]
            hits = [l for l in lines if marker in l] if marker else lines[-3:]
            if hits:
                return hits[-1][:300]
    return "no log output"
