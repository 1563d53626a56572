"""`db install` from the lock: parsing, parallel verified download, resume (no Neo4j, no lock needed).

Downloads come from a local HTTP server that serves a small fake Maven repository; the packaged
lock itself is checked against the real jars by scripts/bench_install.py (and test_server.py starts
a server from whatever install put in GR_NEO4J_DIST).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gr_neo4j.errors import ServerError
from gr_neo4j.progress import NO_PROGRESS
from gr_neo4j.server.fetch import fetch_artifacts
from gr_neo4j.server.install import MARKER, Installation, find_installation, install_from_lock, lock_applies
from gr_neo4j.server.lockfile import Artifact, Lock, format_lock, make_lock, read_lock
from gr_neo4j.server.relock import parse_listing
from gr_neo4j.settings import MIN_SERVER_VERSION, NEO4J_BROWSER_VERSION, NEO4J_VERSION_RANGE, Settings

COORDS = [
    ("org.neo4j", "neo4j", "5.26.99", ""),
    ("org.neo4j.client", "neo4j-browser", "5.24.0", ""),
    ("io.netty", "netty-transport-native-epoll", "4.1.1.Final", "linux-x86_64"),
    *[("org.example", f"lib{i}", "1.0", "") for i in range(9)],
]


class Repo:
    """A fake Maven repository on 127.0.0.1 that records each request and each client connection."""

    def __init__(self, root: Path):
        self.root = root
        self.requests: list[str] = []
        self.clients: set[int] = set()
        repo = self

        class Handler(SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Maven Central

            def do_GET(self) -> None:
                repo.requests.append(self.path)
                repo.clients.add(self.client_address[1])
                super().do_GET()

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/maven2"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def file(self, artifact: Artifact) -> Path:
        return self.root / "maven2" / artifact.url_path


@pytest.fixture()
def repo(tmp_path):
    served = Repo(tmp_path / "repo")
    yield served
    served.httpd.shutdown()
    served.httpd.server_close()


@pytest.fixture()
def lock(repo) -> Lock:
    """A lock of the COORDS jars (random bytes of different sizes), all present in `repo`."""
    artifacts = []
    for i, (group, name, version, classifier) in enumerate(COORDS):
        data = os.urandom(1000 + 150_000 * (i % 4))
        a = Artifact(group, name, version, classifier, len(data), hashlib.sha1(data).hexdigest())
        repo.file(a).parent.mkdir(parents=True, exist_ok=True)
        repo.file(a).write_bytes(data)
        artifacts.append(a)
    return make_lock(artifacts, "test")


def _settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", dist_dir=tmp_path / "dist")


def _verified(lib_dir: Path, lock: Lock) -> bool:
    names = sorted(p.name for p in lib_dir.iterdir())
    return names == sorted(a.file_name for a in lock.artifacts) and all(
        hashlib.sha1((lib_dir / a.file_name).read_bytes()).hexdigest() == a.sha1 for a in lock.artifacts
    )


def test_fetch_downloads_every_jar_verified_over_few_connections(tmp_path, repo, lock):
    lib = tmp_path / "lib"
    result = fetch_artifacts(lock.artifacts, lib, base_url=repo.url, threads=3)
    assert (result.downloaded, result.reused, result.bytes_downloaded) == (len(COORDS), 0, lock.total_bytes)
    assert _verified(lib, lock)
    assert "netty-transport-native-epoll-4.1.1.Final-linux-x86_64.jar" in os.listdir(lib)
    assert len(repo.requests) == len(COORDS)
    assert len(repo.clients) <= 3  # connections are kept alive, not one per file


def test_a_restarted_fetch_downloads_only_missing_or_wrong_jars(tmp_path, repo, lock):
    lib = tmp_path / "lib"
    fetch_artifacts(lock.artifacts, lib, base_url=repo.url)
    missing, damaged = lock.artifacts[0], lock.artifacts[1]
    (lib / missing.file_name).unlink()
    with (lib / damaged.file_name).open("r+b") as f:
        first = f.read(1)[0]
        f.seek(0)
        f.write(bytes([first ^ 0xFF]))  # same size, different bytes: only the SHA-1 tells
    (lib / ".neo4j-5.26.99.jar.part").write_bytes(b"half")  # what a killed download leaves
    (lib / "neo4j-5.26.98.jar").write_bytes(b"an older version")  # never on the classpath with ours
    repo.requests.clear()
    result = fetch_artifacts(lock.artifacts, lib, base_url=repo.url)
    assert (result.downloaded, result.reused) == (2, len(COORDS) - 2)
    assert sorted(repo.requests) == sorted(f"/maven2/{a.url_path}" for a in (missing, damaged))
    assert _verified(lib, lock)


def test_a_jar_that_does_not_match_its_sha1_is_never_installed(tmp_path, repo, lock):
    bad = lock.artifacts[2]
    repo.file(bad).write_bytes(b"Y" * bad.size)
    lib = tmp_path / "lib"
    with pytest.raises(ServerError, match=rf"could not fetch {bad.file_name} from .*: got {bad.size} bytes with SHA-1"):
        fetch_artifacts(lock.artifacts, lib, base_url=repo.url, threads=1)
    assert not (lib / bad.file_name).exists()
    assert not [p for p in lib.iterdir() if p.name.endswith(".part")]
    # retried (a corrupted transfer may not repeat), then given up
    assert repo.requests.count(f"/maven2/{bad.url_path}") == 3


def test_a_missing_jar_fails_at_once_and_names_the_url(tmp_path, repo, lock):
    gone = lock.artifacts[3]
    repo.file(gone).unlink()
    with pytest.raises(ServerError, match=rf"could not fetch {gone.file_name} from {repo.url}/{gone.url_path}: HTTP 404"):
        fetch_artifacts(lock.artifacts, tmp_path / "lib", base_url=repo.url, threads=1)
    assert repo.requests.count(f"/maven2/{gone.url_path}") == 1


def test_install_writes_the_marker_last_and_resumes(tmp_path, repo, lock):
    settings = _settings(tmp_path)
    # One of the smallest jars, so fetched after the larger ones (largest first, 8 threads < 12 jars):
    # some jars are verified before its 404 stops the install.
    gone = next(a for a in lock.artifacts if a.artifact == "lib5")
    assert gone.size == min(a.size for a in lock.artifacts)
    data = repo.file(gone).read_bytes()
    repo.file(gone).unlink()
    with pytest.raises(ServerError, match="HTTP 404"):
        install_from_lock(settings, lock, NO_PROGRESS, base_url=repo.url)
    assert find_installation(settings) is None and not (settings.dist_dir / MARKER).exists()
    lib = settings.dist_dir / "neo4j-community-5.26.99" / "lib"
    kept = {f"/maven2/{a.url_path}" for a in lock.artifacts if (lib / a.file_name).exists()}
    assert kept  # the jars verified before the failure

    repo.file(gone).write_bytes(data)
    repo.requests.clear()
    installed = install_from_lock(settings, lock, NO_PROGRESS, base_url=repo.url)
    assert installed.version == "5.26.99" and installed.installed_now
    assert installed.lib_dir == settings.dist_dir / "neo4j-community-5.26.99" / "lib"
    assert f"/maven2/{gone.url_path}" in repo.requests and not kept & set(repo.requests)
    assert len(kept) + len(repo.requests) == len(COORDS)
    assert _verified(installed.lib_dir, lock)
    assert json.loads((settings.dist_dir / MARKER).read_text()) == {"version": "5.26.99", "lib_dir": str(installed.lib_dir)}
    assert find_installation(settings) == Installation(version="5.26.99", lib_dir=installed.lib_dir)


def test_the_packaged_lock_pins_a_supported_server_and_our_browser(tmp_path):
    lock = read_lock()
    major, minor, _ = (int(p) for p in lock.neo4j_version.split("."))
    assert (major, minor) == (5, 26) and (major, minor) >= MIN_SERVER_VERSION
    assert lock.browser_version == NEO4J_BROWSER_VERSION
    assert len(lock.artifacts) > 150 and 100e6 < lock.total_bytes < 200e6
    assert lock_applies(_settings(tmp_path), lock)  # the default range means the locked patch
    assert lock_applies(_settings(tmp_path).with_(neo4j_version=lock.neo4j_version), lock)
    assert not lock_applies(_settings(tmp_path).with_(neo4j_version="5.26.0"), lock)  # left to Maven
    assert _settings(tmp_path).neo4j_version == NEO4J_VERSION_RANGE


def test_lock_round_trips_through_its_text(tmp_path, lock):
    path = tmp_path / "artifacts.lock"
    path.write_text(format_lock(lock, "a header\n\nin two paragraphs"))
    assert read_lock(path) == lock
    assert path.read_text().startswith("# a header\n#\n# in two paragraphs\n")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("org.neo4j:neo4j 1 " + "a" * 40, "bad coordinates 'org.neo4j:neo4j'"),
        ("org.neo4j:neo4j:5.26.1 big " + "a" * 40, "size 'big' is not a number"),
        ("org.neo4j:neo4j:5.26.1 1 " + "A" * 40, f"'{'A' * 40}' is not a lower-case hex SHA-1"),
        ("org.neo4j:neo4j:5.26.1 1", "expected 'group:artifact:version"),
        ("org/neo4j:neo4j:5.26.1 1 " + "a" * 40, "bad coordinates"),
    ],
)
def test_a_bad_lock_line_is_named_with_its_file_and_line(tmp_path, line, problem):
    path = tmp_path / "artifacts.lock"
    path.write_text(f"# comment\norg.neo4j.client:neo4j-browser:5.24.0 1 {'b' * 40}\n{line}\n")
    with pytest.raises(ServerError, match=rf"^{re.escape(str(path))}:3: {re.escape(problem)}"):
        read_lock(path)


def test_a_lock_without_the_server_or_with_a_jar_twice_is_refused(tmp_path):
    path = tmp_path / "artifacts.lock"
    browser = f"org.neo4j.client:neo4j-browser:5.24.0 1 {'b' * 40}\n"
    path.write_text(browser)
    with pytest.raises(ServerError, match=rf"^{re.escape(str(path))}: no org.neo4j:neo4j jar is listed"):
        read_lock(path)
    path.write_text(browser + f"org.neo4j:neo4j:5.26.1 1 {'a' * 40}\n" + browser)
    with pytest.raises(ServerError, match="neo4j-browser-5.24.0.jar is listed twice"):
        read_lock(path)


def test_relock_reads_mavens_listing_with_and_without_classifiers():
    listing = (
        "\nThe following files have been resolved:\n"
        "   org.neo4j:neo4j:jar:5.26.30:compile:/m2/org/neo4j/neo4j/5.26.30/neo4j-5.26.30.jar\n"
        "   io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.1.137.Final:compile:/m2/e.jar\n"
        "   org.example:docs:pom:1.0:compile:/m2/docs.pom\n"
    )
    assert parse_listing(listing) == [
        ("org.neo4j", "neo4j", "5.26.30", "", Path("/m2/org/neo4j/neo4j/5.26.30/neo4j-5.26.30.jar")),
        ("io.netty", "netty-transport-native-epoll", "4.1.137.Final", "linux-x86_64", Path("/m2/e.jar")),
    ]
