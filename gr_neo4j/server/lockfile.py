"""The lock file: the exact jars of the Neo4j server, with their sizes and SHA-1s from Maven Central.

``artifacts.lock`` (committed, next to this module) has one line per jar of the server's runtime
classpath (the ``runtime`` scope of ``org.neo4j:neo4j`` plus ``org.neo4j.client:neo4j-browser``):

    org.neo4j:neo4j:5.26.30 412345 0123456789abcdef0123456789abcdef01234567
    io.netty:netty-transport-native-epoll:4.1.137.Final:linux-x86_64 123456 89ab...

that is ``group:artifact:version[:classifier] size sha1``; ``#`` starts a comment. `db install` reads
it to fetch the jars directly (`fetch.py`) instead of having Maven resolve ~4,000 POMs and plugins;
`python -m gr_neo4j.server.relock` writes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import ServerError

LOCK_NAME = "artifacts.lock"
CENTRAL = "https://repo.maven.apache.org/maven2"
SERVER = ("org.neo4j", "neo4j")
BROWSER = ("org.neo4j.client", "neo4j-browser")

_COORD = re.compile(r"[A-Za-z0-9_.-]+")
_SHA1 = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Artifact:
    """One jar on Maven Central."""

    group: str
    artifact: str
    version: str
    classifier: str
    size: int
    sha1: str

    @property
    def file_name(self) -> str:
        """The name `mvn dependency:copy-dependencies` gives it: ``artifact-version[-classifier].jar``."""
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    @property
    def url_path(self) -> str:
        """Its path under a Maven repository root (no leading slash)."""
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"

    def line(self) -> str:
        coord = f"{self.group}:{self.artifact}:{self.version}" + (f":{self.classifier}" if self.classifier else "")
        return f"{coord} {self.size} {self.sha1}"


@dataclass(frozen=True)
class Lock:
    """The parsed lock: its artifacts (sorted by file name) and the two versions it pins."""

    artifacts: tuple[Artifact, ...]
    neo4j_version: str
    browser_version: str

    @property
    def total_bytes(self) -> int:
        return sum(a.size for a in self.artifacts)


def default_lock_path() -> Path:
    return Path(str(resources.files("gr_neo4j.server").joinpath(LOCK_NAME)))


def read_lock(path: Path | None = None) -> Lock:
    """Parse a lock file (default: the packaged ``artifacts.lock``); a bad line is a ServerError
    naming the file, the line and the problem."""
    path = path or default_lock_path()
    artifacts: list[Artifact] = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        text = raw.split("#", 1)[0].strip()
        if text:
            artifacts.append(_parse_line(text, f"{path}:{number}"))
    return make_lock(artifacts, str(path))


def make_lock(artifacts: list[Artifact], where: str) -> Lock:
    """Check that `artifacts` name distinct files and include the server and the Browser."""
    names: set[str] = set()
    for a in artifacts:
        if a.file_name in names:
            raise ServerError(f"{where}: {a.file_name} is listed twice")
        names.add(a.file_name)
    versions = {(a.group, a.artifact): a.version for a in artifacts if not a.classifier}
    for key in (SERVER, BROWSER):
        if key not in versions:
            raise ServerError(f"{where}: no {':'.join(key)} jar is listed")
    ordered = tuple(sorted(artifacts, key=lambda a: a.file_name))
    return Lock(ordered, neo4j_version=versions[SERVER], browser_version=versions[BROWSER])


def format_lock(lock: Lock, header: str) -> str:
    """The text of a lock file: `header` as comment lines, then one line per artifact."""
    comments = "".join(f"# {line}\n".replace("# \n", "#\n") for line in header.splitlines())
    return comments + "".join(a.line() + "\n" for a in lock.artifacts)


def _parse_line(text: str, where: str) -> Artifact:
    fields = text.split()
    if len(fields) != 3:
        raise ServerError(f"{where}: expected 'group:artifact:version[:classifier] size sha1', got {text[:80]!r}")
    coord, size, sha1 = fields
    parts = coord.split(":")
    if len(parts) not in (3, 4) or not all(_COORD.fullmatch(p) for p in parts):
        raise ServerError(f"{where}: bad coordinates {coord!r} (want group:artifact:version[:classifier])")
    if not size.isdigit():
        raise ServerError(f"{where}: size {size!r} is not a number of bytes")
    if not _SHA1.fullmatch(sha1):
        raise ServerError(f"{where}: {sha1!r} is not a lower-case hex SHA-1")
    classifier = parts[3] if len(parts) == 4 else ""
    return Artifact(parts[0], parts[1], parts[2], classifier, int(size), sha1)
