"""Is the pid in run/neo4j.pid this home's Neo4j server?

A pid file outlives its process (a crash, a kill -9, a reboot) and the number is then reused by any
process. Before `db stop` signals it or a command trusts it, the process must be a JVM running
Neo4j's server main class for this very home: the launcher starts it as
``java ... org.neo4j.server.CommunityEntryPoint --home-dir=HOME --config-dir=HOME/conf``.
"""

from __future__ import annotations

import os
from pathlib import Path

from .layout import ServerLayout

# The server main classes that Neo4j's launcher (Neo4jCommand) starts.
ENTRY_POINTS = ("org.neo4j.server.CommunityEntryPoint", "org.neo4j.server.enterprise.EnterpriseEntryPoint")


def running_pid(layout: ServerLayout) -> int | None:
    """The pid from neo4j.pid if that process is alive and is the Neo4j server of this home."""
    try:
        pid = int(layout.pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if pid > 0 and pid_is_server_of(pid, layout.home) else None


def pid_is_server_of(pid: int, home: Path) -> bool:
    """True while process ``pid`` is this home's server (False once gone, or a zombie)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:  # gone, or a process we may not inspect: not ours to stop
        return False
    return is_server_of(argv, home)


def is_server_of(argv: list[bytes], home: Path) -> bool:
    """True when argv is a JVM running a Neo4j entry point with --home-dir=home."""
    args = [os.fsdecode(a) for a in argv if a]
    if not args or not os.path.basename(args[0]).startswith("java"):
        return False
    try:
        main = next(i for i, a in enumerate(args) if a in ENTRY_POINTS)
    except StopIteration:
        return False
    homes = [a.removeprefix("--home-dir=") for a in args[main + 1 :] if a.startswith("--home-dir=")]
    return any(_same_path(h, home) for h in homes)


def _same_path(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)
