"""`gr-neo4j db install`: assemble Neo4j Community 5.26 from Maven Central.

The distribution lands in ``settings.dist_dir/neo4j-community-<version>/lib`` with a marker file
``installed.json`` written last, so an interrupted install is never mistaken for a finished one and a
second install is a no-op.

The default version is installed from the committed lock (``artifacts.lock``): its ~200 jars are
downloaded in parallel and checked against their locked SHA-1s (`fetch.py`), straight into the lib
dir, so a restarted install keeps the jars already verified. Any other `neo4j_version` setting (a
version or a Maven range the lock does not pin) is resolved by `mvn dependency:copy-dependencies`
on ``pom.xml``, which is slower: Maven fetches every POM and plugin it needs, one at a time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from filelock import FileLock

from ..atomic import atomic_write_text
from ..errors import ServerError
from ..progress import NO_PROGRESS, Progress
from ..settings import NEO4J_BROWSER_VERSION, NEO4J_VERSION_RANGE, Settings
from .fetch import fetch_artifacts
from .java import find_java
from .lockfile import CENTRAL, Lock, read_lock

MARKER = "installed.json"


@dataclass(frozen=True)
class Installation:
    version: str
    lib_dir: Path
    installed_now: bool = False


def find_installation(settings: Settings) -> Installation | None:
    """The installed distribution, or None when `db install` has not completed."""
    marker = settings.dist_dir / MARKER
    if not marker.is_file():
        return None
    info = json.loads(marker.read_text())
    lib_dir = Path(info["lib_dir"])
    if not any(lib_dir.glob("neo4j-5*.jar")):
        return None
    return Installation(version=info["version"], lib_dir=lib_dir)


def install(settings: Settings, progress: Progress | None = None) -> Installation:
    """Fetch the server's jars unless they are already installed: the locked ones when the settings
    ask for the locked version (the default), otherwise whatever Maven resolves.

    Concurrent installs into one dist dir (parallel test runs) are serialised by a file lock.
    `progress` gets one phase counting the files downloaded and a note with the time taken.
    """
    existing = find_installation(settings)
    if existing:
        return existing
    settings.dist_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(settings.dist_dir / ".install.lock"):
        return find_installation(settings) or _install_locked(settings, progress or NO_PROGRESS)


def _install_locked(settings: Settings, progress: Progress) -> Installation:
    find_java()  # fail before downloading 140 MB for a server that cannot run
    lock = read_lock()
    if lock_applies(settings, lock):
        return install_from_lock(settings, lock, progress)
    progress.note(
        f"neo4j_version {settings.neo4j_version} with Browser {NEO4J_BROWSER_VERSION} is not the locked "
        f"{lock.neo4j_version} with {lock.browser_version}: resolving it with Maven (minutes on a cold cache)"
    )
    return install_with_maven(settings, progress)


def lock_applies(settings: Settings, lock: Lock) -> bool:
    """True when the lock pins what the settings ask for: the default range (whose newest patch the
    lock pinned when it was written) or the lock's exact version, with the Browser gr-neo4j uses."""
    wanted = settings.neo4j_version in (NEO4J_VERSION_RANGE, lock.neo4j_version)
    return wanted and lock.browser_version == NEO4J_BROWSER_VERSION


def install_from_lock(settings: Settings, lock: Lock, progress: Progress, base_url: str = CENTRAL) -> Installation:
    """Download the locked jars into ``neo4j-community-<version>/lib`` (from `base_url`, default Maven
    Central) and write the marker; jars already there and matching their SHA-1 are kept."""
    lib_dir = settings.dist_dir / f"neo4j-community-{lock.neo4j_version}" / "lib"
    result = fetch_artifacts(lock.artifacts, lib_dir, progress, base_url=base_url)
    progress.note(
        f"Neo4j {lock.neo4j_version}: {result.downloaded} jars ({result.bytes_downloaded / 1e6:.0f} MB) downloaded "
        f"and verified in {result.seconds:.0f} s" + (f", {result.reused} kept from before" if result.reused else "")
    )
    # Written last and atomically: a marker that exists names a complete lib dir.
    atomic_write_text(settings.dist_dir / MARKER, json.dumps({"version": lock.neo4j_version, "lib_dir": str(lib_dir)}))
    return Installation(version=lock.neo4j_version, lib_dir=lib_dir, installed_now=True)


def install_with_maven(settings: Settings, progress: Progress) -> Installation:
    """Resolve `settings.neo4j_version` (a version or a Maven range) and the Browser with Maven."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise ServerError("Maven (`mvn`) is needed to fetch Neo4j from Maven Central; install it (apt-get install maven)")
    settings.dist_dir.mkdir(parents=True, exist_ok=True)
    log_path = settings.dist_dir / "install.log"
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=settings.dist_dir))
    try:
        pom = staging / "pom.xml"
        pom.write_bytes(resources.files("gr_neo4j.server").joinpath("pom.xml").read_bytes())
        cmd = [
            mvn, "-B", "-f", str(pom), "dependency:copy-dependencies",
            f"-Dneo4j.version={settings.neo4j_version}",
            f"-Dneo4j.browser.version={NEO4J_BROWSER_VERSION}",
            f"-DoutputDirectory={staging / 'lib'}",
            "-DincludeScope=runtime",
        ]
        _run_maven(cmd, log_path, progress)
        version = _server_version(staging / "lib")
        target = settings.dist_dir / f"neo4j-community-{version}"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir()
        (staging / "lib").rename(target / "lib")
        # Written last and atomically: a marker that exists names a complete lib dir.
        atomic_write_text(settings.dist_dir / MARKER, json.dumps({"version": version, "lib_dir": str(target / "lib")}))
        return Installation(version=version, lib_dir=target / "lib", installed_now=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run_maven(cmd: list[str], log_path: Path, progress: Progress) -> None:
    """Run Maven, logging everything and reporting each artifact fetched (the total is unknown)."""
    fetched = 0
    started = time.monotonic()
    with log_path.open("w") as log, progress.phase("fetch Neo4j (Maven)", total=None, unit="files") as advance:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            if "Downloaded from" in line:
                fetched += 1
                advance(1)
        code = proc.wait()
    if code != 0:
        reason = _maven_failure(log_path)
        raise ServerError(f"Maven could not fetch Neo4j ({reason})", log_path)
    progress.note(f"Neo4j artifacts resolved in {time.monotonic() - started:.0f} s ({fetched} files downloaded)")


def _maven_failure(log_path: Path) -> str:
    for line in log_path.read_text(errors="replace").splitlines():
        if line.startswith("[ERROR]") and len(line) > 8:
            return line[8:].strip()[:300]
    return "see the log"


def _server_version(lib_dir: Path) -> str:
    for jar in lib_dir.glob("neo4j-5*.jar"):
        match = re.fullmatch(r"neo4j-(5\.\d+\.\d+)\.jar", jar.name)
        if match:
            return match.group(1)
    raise ServerError(f"Maven finished but no org.neo4j:neo4j jar is in {lib_dir}")
