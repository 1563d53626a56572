"""Messages built from driver and server failures, without a server: what the user reads."""

from __future__ import annotations

from gr_neo4j.errors import driver_text
from gr_neo4j.server import process
from gr_neo4j.settings import load_settings


def test_driver_address_noise_is_dropped():
    raw = "Couldn't connect to 127.0.0.1:40243 (resolved to ('127.0.0.1:40243',)):\nFailed to establish connection"
    assert driver_text(raw) == "Couldn't connect to 127.0.0.1:40243"
    assert driver_text("  ") == ""


def test_a_store_disk_without_room_is_full_even_when_the_log_could_not_say_so(tmp_path, monkeypatch):
    settings = load_settings(home=tmp_path)
    (tmp_path / "data").mkdir(parents=True, exist_ok=True)

    class Usage:
        def __init__(self, free):
            self.total, self.used, self.free = 1 << 30, (1 << 30) - free, free

    monkeypatch.setattr(process.shutil, "disk_usage", lambda path: Usage(1 << 20))
    assert process.out_of_disk_space(settings) is not None
    monkeypatch.setattr(process.shutil, "disk_usage", lambda path: Usage(1 << 30))
    assert process.out_of_disk_space(settings) is None  # room left and no debug.log: not a full disk
