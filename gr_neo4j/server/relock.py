"""Regenerate ``artifacts.lock`` with Maven (a maintainer's tool, run when moving to a new patch):

    .venv/bin/python -m gr_neo4j.server.relock 5.26.31

Maven resolves the runtime classpath of ``pom.xml`` for that exact version (`mvn dependency:list`,
into the usual ``~/.m2``); each resolved jar's size and SHA-1 are taken from the local file and the
SHA-1 must equal the ``.sha1`` that Maven Central publishes next to the jar, so the lock records
what Central serves, not what one machine happened to download.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from importlib import resources
from pathlib import Path

from ..errors import ServerError
from ..settings import NEO4J_BROWSER_VERSION
from .fetch import FETCH_THREADS, Connections
from .lockfile import CENTRAL, Artifact, Lock, default_lock_path, format_lock, make_lock


def relock(neo4j_version: str, browser_version: str = NEO4J_BROWSER_VERSION, out: Path | None = None) -> Lock:
    """Resolve the server's jars for `neo4j_version` with Maven, check them against Maven Central's
    checksums and write the lock to `out` (default: the packaged ``artifacts.lock``)."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise ServerError("relock needs Maven (`mvn`)")
    with tempfile.TemporaryDirectory(prefix="gr-neo4j-relock-") as tmp:
        pom = Path(tmp) / "pom.xml"
        pom.write_bytes(resources.files("gr_neo4j.server").joinpath("pom.xml").read_bytes())
        listing = Path(tmp) / "list.txt"
        cmd = [
            mvn, "-B", "-q", "-f", str(pom), "dependency:list",
            f"-Dneo4j.version={neo4j_version}", f"-Dneo4j.browser.version={browser_version}",
            "-DincludeScope=runtime", "-DoutputAbsoluteArtifactFilename=true", f"-DoutputFile={listing}",
        ]
        done = subprocess.run(cmd, check=False, capture_output=True, text=True)
        if done.returncode != 0:
            raise ServerError(f"mvn dependency:list failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        resolved = parse_listing(listing.read_text())
    with ThreadPoolExecutor(FETCH_THREADS) as pool:
        artifacts = list(pool.map(_checked, resolved))
    lock = make_lock(artifacts, "mvn dependency:list")
    if lock.neo4j_version != neo4j_version:
        raise ServerError(f"Maven resolved org.neo4j:neo4j {lock.neo4j_version}, not {neo4j_version}")
    out = out or default_lock_path()
    header = (
        f"Neo4j Community {lock.neo4j_version} with Browser {lock.browser_version}: {len(artifacts)} jars, "
        f"{lock.total_bytes / 1e6:.0f} MB.\n"
        f"Written by `python -m gr_neo4j.server.relock {neo4j_version}` on {date.today()}; do not edit.\n"
        "group:artifact:version[:classifier] size sha1 (SHA-1 as published by Maven Central)"
    )
    out.write_text(format_lock(lock, header))
    return lock


def parse_listing(text: str) -> list[tuple[str, str, str, str, Path]]:
    """The jars of `mvn dependency:list -DoutputAbsoluteArtifactFilename=true` output:
    (group, artifact, version, classifier, local path) from lines such as
    ``io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.1.137.Final:compile:/root/.m2/...``."""
    jars = []
    for line in text.splitlines():
        parts = line.strip().split(":", 6)
        if len(parts) == 6 and parts[2] == "jar":
            group, artifact, _, version, _, path = parts
            jars.append((group, artifact, version, "", Path(path)))
        elif len(parts) == 7 and parts[2] == "jar":
            group, artifact, _, classifier, version, _, path = parts
            jars.append((group, artifact, version, classifier, Path(path)))
    return jars


def _checked(resolved: tuple[str, str, str, str, Path]) -> Artifact:
    group, name, version, classifier, path = resolved
    data = path.read_bytes()
    artifact = Artifact(group, name, version, classifier, len(data), hashlib.sha1(data).hexdigest())
    url = f"{CENTRAL}/{artifact.url_path}.sha1"
    connections = Connections(CENTRAL)
    try:
        published = connections.read(f"{artifact.url_path}.sha1").decode().split()[0].lower()
    finally:
        connections.close_all()
    if published != artifact.sha1:
        raise ServerError(f"{path}: SHA-1 {artifact.sha1} differs from Maven Central's {published} ({url})")
    return artifact


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m gr_neo4j.server.relock", description=__doc__.split("\n\n")[0])
    parser.add_argument("neo4j_version", help="an exact version, e.g. 5.26.30")
    parser.add_argument("--out", type=Path, help="where to write the lock (default: the packaged artifacts.lock)")
    args = parser.parse_args()
    lock = relock(args.neo4j_version, out=args.out)
    print(f"{args.out or default_lock_path()}: {len(lock.artifacts)} jars, {lock.total_bytes / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
