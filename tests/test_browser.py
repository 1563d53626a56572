"""Neo4j Browser is served by the managed server and really renders (headless Chromium)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from gr_neo4j.server import process


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.fail("chromium is not installed (scripts/test.sh installs Debian's chromium package)")
    return exe


def test_browser_renders_the_connect_form(server, tmp_path):
    url = process.status(server).browser_url
    assert url == f"http://127.0.0.1:{server.http_port}/browser/"
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000"]
    dom = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True, timeout=120, check=False).stdout
    # The static HTML only has the <title>; these texts exist only once Browser's JavaScript has run.
    assert "<title>Neo4j Browser</title>" in dom
    assert "Connect to Neo4j" in dom
    assert "Connect URL" in dom
    shot = tmp_path / "browser.png"
    subprocess.run(args + ["--window-size=1280,800", f"--screenshot={shot}", url], capture_output=True, timeout=120, check=False)
    assert shot.stat().st_size > 10_000
