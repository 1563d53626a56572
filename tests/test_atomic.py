from __future__ import annotations

import pytest

from gr_neo4j.atomic import atomic_path, atomic_write_text


def test_a_failed_writer_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "state.json"
    atomic_write_text(target, "old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer failed")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_the_temporary_keeps_the_suffix_and_replaces_the_target(tmp_path):
    target = tmp_path / "curves.png"
    with atomic_path(target) as tmp:
        assert tmp.suffix == ".png" and tmp.parent == tmp_path
        tmp.write_bytes(b"png")
    assert target.read_bytes() == b"png" and len(list(tmp_path.iterdir())) == 1
