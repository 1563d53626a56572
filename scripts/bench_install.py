"""Benchmark: a cold `db install`, Maven (baseline) vs. the lock's parallel fetch (ours), in one run.

1. Baseline: `mvn dependency:copy-dependencies` on gr_neo4j/server/pom.xml for the default version
   range, with an empty Maven local repository (``-Dmaven.repo.local`` through MAVEN_OPTS) and an
   empty dist dir: what `db install` did before the lock. Files Maven downloaded, seconds.
2. Ours: `gr-neo4j db install` (the CLI, Python start included) into an empty GR_NEO4J_DIST:
   the locked jars over keep-alive connections, each checked against its SHA-1.
3. The two lib dirs must hold the same jars, byte for byte (the lock is what Maven resolves).
4. Resume: a fresh install killed (SIGKILL) once some jars are verified, then run again: the second
   run must download only the jars the first did not finish.

Everything goes to temporary directories that are removed at the end; the shared dist
(~/.cache/gr-neo4j/dist) and ~/.m2 are not touched. Needs Maven Central. Prints one JSON document
(and writes it to --out).

    python scripts/bench_install.py [--skip-baseline] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchlib.report import emit

from gr_neo4j.server.install import find_installation, install_with_maven
from gr_neo4j.server.lockfile import read_lock
from gr_neo4j.settings import NEO4J_VERSION_RANGE, Settings

TARGET_S = 180
CLI = Path(sys.executable).with_name("gr-neo4j")


class Counter:
    """A `Progress` that counts what the install reports."""

    def __init__(self) -> None:
        self.advanced = 0
        self.notes: list[str] = []

    @contextmanager
    def phase(self, label: str, total: int | None = None, unit: str = "rows") -> Iterator:
        yield self._advance

    def _advance(self, n: int) -> None:
        self.advanced += n

    def note(self, text: str) -> None:
        self.notes.append(text)


def baseline(tmp: Path) -> dict:
    """The Maven path with an empty local repository."""
    settings = Settings(home=tmp / "home", dist_dir=tmp / "maven-dist", neo4j_version=NEO4J_VERSION_RANGE)
    counter = Counter()
    old = os.environ.get("MAVEN_OPTS")
    os.environ["MAVEN_OPTS"] = f"{old or ''} -Dmaven.repo.local={tmp / 'm2'}".strip()
    began = time.perf_counter()
    try:
        inst = install_with_maven(settings, counter)
    finally:
        if old is None:
            os.environ.pop("MAVEN_OPTS")
        else:
            os.environ["MAVEN_OPTS"] = old
    seconds = time.perf_counter() - began
    return {
        "method": "mvn dependency:copy-dependencies, empty -Dmaven.repo.local, range " + NEO4J_VERSION_RANGE,
        "seconds": round(seconds, 1),
        "files_downloaded": counter.advanced,
        "jars": len(list(inst.lib_dir.glob("*.jar"))),
        "version": inst.version,
        "lib_dir": inst.lib_dir,
    }


def ours(tmp: Path) -> dict:
    """`gr-neo4j db install` into an empty dist dir, timed from outside (CLI start included)."""
    dist = tmp / "lock-dist"
    began = time.perf_counter()
    done = subprocess.run([str(CLI), "db", "install"], env=_env(dist, tmp), capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"gr-neo4j db install failed:\n{done.stdout}{done.stderr}")
    inst = find_installation(Settings(home=tmp / "home", dist_dir=dist))
    assert inst is not None
    jars = list(inst.lib_dir.glob("*.jar"))
    return {
        "method": "gr-neo4j db install: artifacts.lock, parallel keep-alive fetch, SHA-1 checked",
        "seconds": round(seconds, 1),
        "files_downloaded": len(jars),
        "jars": len(jars),
        "megabytes": round(sum(p.stat().st_size for p in jars) / 1e6),
        "version": inst.version,
        "note": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "",
        "lib_dir": inst.lib_dir,
    }


def resume(tmp: Path) -> dict:
    """Kill a fresh install once a quarter of the jars are there, then finish it."""
    lock = read_lock()
    dist = tmp / "resume-dist"
    lib = dist / f"neo4j-community-{lock.neo4j_version}" / "lib"
    proc = subprocess.Popen([str(CLI), "db", "install"], env=_env(dist, tmp), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None and len(list(lib.glob("*.jar")) if lib.is_dir() else []) < len(lock.artifacts) // 4:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = {p.name for p in lib.glob("*.jar")}
    parts = len(list(lib.glob(".*.part")))
    began = time.perf_counter()
    done = subprocess.run([str(CLI), "db", "install"], env=_env(dist, tmp), capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - began
    # "... N jars (M MB) downloaded and verified in S s, K kept from before"
    note = done.stderr.replace("\n", " ")
    return {
        "jars_before_kill": len(kept),
        "part_files_left_by_kill": parts,
        "restart_seconds": round(seconds, 1),
        "restart_ok": done.returncode == 0 and find_installation(Settings(home=tmp / "home", dist_dir=dist)) is not None,
        "restart_kept_all_finished": f"{len(kept)} kept from before" in note,
        "restart_note": " ".join(note.split()[-16:]),
    }


def _env(dist: Path, tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(GR_NEO4J_DIST=str(dist), GR_NEO4J_HOME=str(tmp / "home"), COLUMNS="200")
    return env


def _digests(lib: Path) -> dict[str, str]:
    return {p.name: hashlib.sha1(p.read_bytes()).hexdigest() for p in lib.iterdir()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-baseline", action="store_true", help="only ours and the resume check")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gr-neo4j-bench-install-"))
    try:
        result: dict = {"load_avg_before": [round(x, 2) for x in os.getloadavg()], "target_s": TARGET_S}
        result["ours"] = ours(tmp)
        if not args.skip_baseline:
            result["baseline"] = baseline(tmp)
            result["same_jars_as_maven"] = _digests(result["baseline"]["lib_dir"]) == _digests(result["ours"]["lib_dir"])
            result["speedup"] = round(result["baseline"]["seconds"] / result["ours"]["seconds"], 1)
        result["resume"] = resume(tmp)
        result["ours_meets_target"] = result["ours"]["seconds"] < TARGET_S
        result["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
        for part in ("ours", "baseline"):
            result.get(part, {}).pop("lib_dir", None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    emit(result, args.out)


if __name__ == "__main__":
    main()
