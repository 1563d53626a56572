"""The managed server's files, without a server (pure Python, no lock needed)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gr_neo4j.server.layout import ServerLayout


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
