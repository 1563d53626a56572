"""The managed server's files and install progress, without a server (pure Python, no lock needed)."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gr_neo4j.errors import ServerError
from gr_neo4j.home.layout import ServerLayout
from gr_neo4j.progress import Advance
from gr_neo4j.server.install import _run_maven


class Recorder:
    """A `Progress` that remembers what it was told."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    @contextmanager
    def phase(self, label: str, total: int | None = None, unit: str = "rows") -> Iterator[Advance]:
        self.events.append(("begin", label, total, unit))
        try:
            yield lambda n: self.events.append(("advance", n))
        finally:
            self.events.append(("end", label))

    def note(self, text: str) -> None:
        self.events.append(("note", text))


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_files_are_0600_and_replaced_whole(tmp_path):
    layout = ServerLayout(tmp_path)
    target = tmp_path / "conf.txt"
    target.write_text("old, world-readable")
    target.chmod(0o644)
    with umask(0):  # a umask that would leave a plain new file 0666
        layout.write_private(target, "new")
        layout.write_state(bolt_port=7688, http_port=7475, version="5.26.0")
    assert target.read_text() == "new" and _mode(target) == 0o600
    assert json.loads(layout.state_file.read_text()) == {"bolt_port": 7688, "http_port": 7475, "version": "5.26.0"}
    assert _mode(layout.state_file) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conf.txt", "run"]
    assert [p.name for p in layout.run_dir.iterdir()] == ["gr-neo4j.json"]  # no temporary left behind


def test_a_failed_private_write_keeps_the_old_file(tmp_path):
    layout = ServerLayout(tmp_path)
    target = tmp_path / "password"
    layout.write_private(target, "secret\n")
    with pytest.raises(TypeError):
        layout.write_private(target, None)  # type: ignore[arg-type]  # fails after the temporary is open
    assert target.read_text() == "secret\n"
    assert [p.name for p in tmp_path.iterdir()] == ["password"]


def _fake_maven(lines: list[str], code: int) -> list[str]:
    script = "import sys\nfor line in sys.argv[2:]:\n    print(line)\nsys.exit(int(sys.argv[1]))\n"
    return [sys.executable, "-c", script, str(code), *lines]


def test_maven_download_is_reported_through_progress(tmp_path):
    recorder = Recorder()
    lines = ["[INFO] Scanning", "Downloaded from central: a.jar", "Downloaded from central: b.jar", "[INFO] BUILD SUCCESS"]
    _run_maven(_fake_maven(lines, 0), tmp_path / "install.log", recorder)
    assert recorder.events[0] == ("begin", "fetch Neo4j (Maven)", None, "files")
    assert recorder.events[1:4] == [("advance", 1), ("advance", 1), ("end", "fetch Neo4j (Maven)")]
    kind, text = recorder.events[4]
    assert kind == "note" and text.startswith("Neo4j artifacts resolved in") and "(2 files downloaded)" in text
    assert (tmp_path / "install.log").read_text().splitlines() == lines


def test_maven_failure_ends_the_phase_and_names_the_error(tmp_path):
    recorder = Recorder()
    lines = ["Downloaded from central: a.jar", "[ERROR] Could not resolve org.neo4j:neo4j"]
    with pytest.raises(ServerError, match="Could not resolve org.neo4j:neo4j") as caught:
        _run_maven(_fake_maven(lines, 1), tmp_path / "install.log", recorder)
    assert caught.value.log_path == tmp_path / "install.log"
    assert recorder.events == [("begin", "fetch Neo4j (Maven)", None, "files"), ("advance", 1), ("end", "fetch Neo4j (Maven)")]


def test_no_rich_in_server_or_ingest():
    """The library reports progress through gr_neo4j.progress; only cli/ and scripts/ draw."""
    root = Path(__file__).resolve().parents[1] / "gr_neo4j"
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for folder in ("server", "ingest")
        for path in sorted((root / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if line.lstrip().startswith(("import rich", "from rich"))
    ]
    assert offenders == []
