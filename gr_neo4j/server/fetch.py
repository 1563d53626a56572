"""Download the locked jars from Maven Central in parallel, verified, resumable.

Each jar is streamed to a hidden ``.<name>.part`` file in the lib dir while its SHA-1 is computed,
checked against the lock's size and SHA-1, and only then renamed to its final name: a file under its
final name is always complete and verified. A restarted fetch hashes the files already there and
downloads only the missing or wrong ones. Files in the lib dir that the lock does not list
(leftover ``.part`` files, jars of another version) are removed, since the server puts every jar of
the lib dir on its classpath.

Maven's own resolution of the same jars fetches ~4,400 files one after another (every POM of every
parent and of the plugins it runs), so it is latency-bound; here ~200 files go over a thread pool,
each thread keeping one HTTP connection alive: a TLS handshake per file would cost more than most of
these small files (measured: 100 small jars in 12 s with a new connection each, 1 s kept alive).
Proxies are not supported (Maven without a settings.xml did not use them either).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_incrementing

from ..errors import ArtifactMismatch, FetchStopped, HttpStatus, ServerError
from ..progress import NO_PROGRESS, Progress
from .lockfile import CENTRAL, Artifact

# Enough parallel connections to hide the ~100 ms round trip per file without hammering the
# repository (Maven's resolver uses 5 per artifact batch).
FETCH_THREADS = 8
ATTEMPTS = 3
TIMEOUT_S = 60
CHUNK = 1 << 20


@dataclass(frozen=True)
class FetchResult:
    """What `fetch_artifacts` did: files downloaded now, files kept from before, bytes and seconds."""

    downloaded: int
    reused: int
    bytes_downloaded: int
    seconds: float


class Connections:
    """One keep-alive connection per thread to the repository's host."""

    def __init__(self, base_url: str):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ServerError(f"not an http(s) repository URL: {base_url}")
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname, parts.port
        self.prefix = parts.path.rstrip("/")
        self.url_root = base_url.rstrip("/")
        self.local = threading.local()
        self.opened: list[http.client.HTTPConnection] = []
        self.guard = threading.Lock()

    def read(self, path: str) -> bytes:
        """The whole body of GET `path` (small files: checksums, metadata)."""
        with self.get(path) as response:
            return response.read()

    def get(self, path: str) -> http.client.HTTPResponse:
        """GET `path` (relative to the base URL); the response must be read to its end or dropped."""
        conn = getattr(self.local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            conn = self.local.conn = cls(self.host, self.port, timeout=TIMEOUT_S)
            with self.guard:
                self.opened.append(conn)
        try:
            conn.request("GET", f"{self.prefix}/{path}", headers={"User-Agent": "gr-neo4j"})
            response = conn.getresponse()
        except Exception:
            self.drop()
            raise
        if response.status != 200:
            response.read()  # keep the connection usable
            raise HttpStatus(response.status, response.reason)
        return response

    def drop(self) -> None:
        """Close this thread's connection (after an error its state is unknown)."""
        conn = getattr(self.local, "conn", None)
        if conn is not None:
            conn.close()
            self.local.conn = None

    def close_all(self) -> None:
        with self.guard:
            for conn in self.opened:
                conn.close()


def fetch_artifacts(
    artifacts: tuple[Artifact, ...],
    lib_dir: Path,
    progress: Progress | None = None,
    *,
    base_url: str = CENTRAL,
    threads: int = FETCH_THREADS,
) -> FetchResult:
    """Make `lib_dir` hold exactly `artifacts` (``Artifact.file_name`` each), verified by SHA-1.

    `progress` gets one phase counting files (kept ones count too). The first file that cannot be
    fetched or does not match its checksum stops the others and raises a ServerError naming it;
    the files verified so far stay for the next try.
    """
    progress = progress or NO_PROGRESS
    started = time.monotonic()
    lib_dir.mkdir(parents=True, exist_ok=True)
    _remove_unlisted(lib_dir, {a.file_name for a in artifacts})
    stop = threading.Event()
    connections = Connections(base_url)
    downloaded = reused = nbytes = 0
    # Largest first, so that the big jars do not start last and leave one thread working alone.
    ordered = sorted(artifacts, key=lambda a: a.size, reverse=True)
    with progress.phase("fetch Neo4j", total=len(ordered), unit="files") as advance:
        pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="fetch")
        try:
            pending = {pool.submit(_ensure, a, lib_dir, connections, stop) for a in ordered}
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    artifact, was_downloaded = future.result()  # re-raises the first failure
                    if was_downloaded:
                        downloaded += 1
                        nbytes += artifact.size
                    else:
                        reused += 1
                    advance(1)
        finally:
            stop.set()  # a failure or Ctrl-C: running downloads stop at their next chunk
            pool.shutdown(wait=True, cancel_futures=True)
            connections.close_all()
    return FetchResult(downloaded, reused, nbytes, time.monotonic() - started)


def _remove_unlisted(lib_dir: Path, names: set[str]) -> None:
    for path in lib_dir.iterdir():
        if path.name not in names and (path.is_file() or path.is_symlink()):
            path.unlink()


def _ensure(artifact: Artifact, lib_dir: Path, connections: Connections, stop: threading.Event) -> tuple[Artifact, bool]:
    """Verify or download one jar; True when it was downloaded (False: the file was already right)."""
    if stop.is_set():
        raise FetchStopped
    target = lib_dir / artifact.file_name
    if target.is_file() and target.stat().st_size == artifact.size and _sha1_of(target) == artifact.sha1:
        return artifact, False
    # a dropped connection, a 5xx or bad bytes: reconnect and try again; a 4xx will not change
    retrying = Retrying(
        retry=retry_if_exception(_transient), stop=stop_after_attempt(ATTEMPTS), wait=wait_incrementing(start=1, increment=1),
        before_sleep=lambda _: connections.drop(), reraise=True,
    )
    try:
        retrying(_download, connections, artifact, target, stop)
    except (OSError, http.client.HTTPException, HttpStatus, ArtifactMismatch) as exc:
        url = f"{connections.url_root}/{artifact.url_path}"
        raise ServerError(f"could not fetch {artifact.file_name} from {url}: {exc}") from None
    return artifact, True


def _transient(exc: BaseException) -> bool:
    """A failure that another try may not meet (not an interruption, not a 4xx)."""
    if isinstance(exc, HttpStatus):
        return exc.status >= 500
    return isinstance(exc, OSError | http.client.HTTPException | ArtifactMismatch)


def _download(connections: Connections, artifact: Artifact, target: Path, stop: threading.Event) -> None:
    part = target.with_name(f".{target.name}.part")
    digest = hashlib.sha1()
    size = 0
    try:
        with connections.get(artifact.url_path) as response, part.open("wb") as out:
            while chunk := response.read(CHUNK):
                if stop.is_set():
                    connections.drop()  # the rest of this response is never read
                    raise FetchStopped
                out.write(chunk)
                digest.update(chunk)
                size += len(chunk)
        if size != artifact.size or digest.hexdigest() != artifact.sha1:
            raise ArtifactMismatch(f"got {size} bytes with SHA-1 {digest.hexdigest()}, the lock says {artifact.size} bytes with {artifact.sha1}")
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)


def _sha1_of(path: Path) -> str:
    digest = hashlib.sha1()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()

