"""Chaos run: a bounded fault-injection run of MetaQA loads on a real Neo4j.

Starts its own managed Neo4j in a temporary home on free ports (the jars are shared through
GR_NEO4J_DIST, default ~/.cache/gr-neo4j/dist), never the user's, and builds a MetaQA slice in a
temporary folder in MetaQA's layout: the first --triples lines of kb.txt and the 1-hop dev questions
whose topic entities are all in the slice (at most --questions). Its expected counts (entities,
relationships, questions, TOPIC and ANSWER links) are computed from the files, independently of the
loader, and must equal the counts in the database after one clean, fault-free load ("reference").

Then a fixed number of rounds (bounded by --time-limit), each one fault of a kind taken in turn
from --faults, with start states and times drawn from a seeded RNG (--seed):

- start: `empty` (dataset dropped first), `partial` (dropped, then a load killed part way: the
  faulted load resumes it) or, half as often, `complete` (the previous round's complete dataset:
  a re-load);
- kill_client: `kill -9` of the `gr-neo4j load` process group at a random time;
- kill_server: `kill -9` of the server JVM at a random time during the load, then a restart; the
  client must exit non-zero (or 0 with complete data);
- drop_race: `gr-neo4j drop metaqa` started while the load runs: the drop may be refused with a
  one-line error, or the load may fail; neither may print a Traceback, and a load that exits 0
  must leave complete data (or the drop must have removed all of it, when it ran after the load);
- disk_full: the server's home is a tmpfs (root only: `mount -t tmpfs`); during the load it is
  remounted just above its current use, so the server runs out of space; then it gets its room
  back and is restarted. Skipped with a note where no tmpfs can be mounted.

When a fault strikes is drawn too: 3 times in 4 at a random row count between the start state's
and the full dataset's (polled from the count store every 50 ms, so it lands in the writes), else
at a random time within the reference load's time before its first write (start-up, parse,
embedding); for a re-load of a complete dataset, within the measured re-load time. The racing drop
is started ahead, imported and waiting on its stdin, so it reaches the database at that moment.
A fault whose load ended before it could strike counts as missed. After each fault: no duplicate
uids, no entity or relationship without an embedding, and when the Dataset says 'complete', every
count equals the reference (exit 0 or status complete must mean complete). Then the load is run
again to completion, as a user would, and checked: no duplicates, no missing embeddings, counts
equal to the reference, status 'complete'.

One line per round on stderr; one JSON summary on stdout; exit status 1 on any violation.

    python scripts/chaos_load.py [--metaqa DIR] [--triples 20000] [--questions 2000] [--rounds 12]
        [--time-limit 1500] [--seed 0] [--faults kill_client,kill_server,drop_race,disk_full]
        [--starts empty,partial,complete] [--batch-size 1000] [--embedder PATH] [--logs DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from gr_neo4j.connection import connect
from gr_neo4j.errors import ServerError
from gr_neo4j.home.layout import layout_of
from gr_neo4j.ingest.source import datasets_dir
from gr_neo4j.server import process
from gr_neo4j.server.install import find_installation
from gr_neo4j.server.process import free_port
from gr_neo4j.settings import Settings, load_settings

KINDS = ("kill_client", "kill_server", "drop_race", "disk_full")
STARTS = ("empty", "partial", "complete")
START_WEIGHTS = {"empty": 2, "partial": 2, "complete": 1}
DATASET = "metaqa"
CLI = "from gr_neo4j.cli import app; app()"
# The same CLI, imported first and run only when a line arrives on stdin: a drop that starts at once.
GATED_CLI = "from gr_neo4j.cli import app; import sys; sys.stdin.readline(); app()"
# Rows of any dataset (the run's database holds only MetaQA), from the count store: cheap to poll.
ROWS_QUERY = (
    "CALL () { MATCH (n:Entity) RETURN count(n) AS e } CALL () { MATCH ()-[r:REL]->() RETURN count(r) AS r } "
    "CALL () { MATCH (q:Question) RETURN count(q) AS q } RETURN e + r + q AS n"
)
TOPIC = re.compile(r"\[([^\[\]]+)\]")  # as loaders/metaqa.py
COUNTED = ("entities", "relationships", "questions", "topic_links", "answer_links")
# Per kind: how many, how many distinct (uid, or (question, entity) for links), how many embedded.
CHECK_QUERIES = {
    "entities": "MATCH (n:Entity {dataset: $ds}) RETURN count(n) AS n, count(DISTINCT n.uid) AS d, count(n.embedding) AS e",
    "relationships": "MATCH ()-[r:REL {dataset: $ds}]->() RETURN count(r) AS n, count(DISTINCT r.uid) AS d, count(r.embedding) AS e",
    "questions": "MATCH (q:Question {dataset: $ds}) RETURN count(q) AS n, count(DISTINCT q.uid) AS d, count(q) AS e",
    "topic_links": "MATCH (q:Question {dataset: $ds})-[l:TOPIC]->(e:Entity) RETURN count(l) AS n, count(DISTINCT [q.uid, e.uid]) AS d, count(l) AS e",
    "answer_links": "MATCH (q:Question {dataset: $ds})-[l:ANSWER]->(e:Entity) RETURN count(l) AS n, count(DISTINCT [q.uid, e.uid]) AS d, count(l) AS e",
}
STATUS_QUERY = "MATCH (d:Dataset {name: $ds}) RETURN collect(d.status) AS statuses"
START_PATIENCE_S = 300.0  # a server restarting after kill -9 replays its transaction logs first
STRIPPED_ENV = ("GR_NEO4J_BOLT_PORT", "GR_NEO4J_HTTP_PORT", "GR_NEO4J_HEAP", "GR_NEO4J_PAGECACHE", "GR_NEO4J_EMBEDDER")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)




# --- the input -----------------------------------------------------------------------------------


def build_slice(source: Path, dest: Path, n_triples: int, n_questions: int) -> dict[str, int]:
    """Write a MetaQA slice to `dest` and count what loaders/metaqa.py will store from it.

    Counted here without the loader: entities are the distinct stripped heads and tails, relationships
    the distinct stripped (head, relation, tail), questions one per kept line (keyed by line number),
    TOPIC links the distinct topics of a question, ANSWER links its distinct answers that are entities.
    """
    kb_lines: list[str] = []
    entities: set[str] = set()
    triples: set[tuple[str, str, str]] = set()
    with (source / "kb.txt").open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            parts = line.split("|")
            if len(parts) != 3 or not all(p.strip() for p in parts):
                continue  # the loader would reject it (and fail the load): keep the slice clean
            head, relation, tail = (p.strip() for p in parts)
            kb_lines.append(line)
            entities.update((head, tail))
            triples.add((head, relation, tail))
            if len(kb_lines) >= n_triples:
                break
    questions_file = next(
        (p for p in (source / "1-hop" / "qa_dev.txt", source / "1-hop" / "vanilla" / "qa_dev.txt") if p.is_file()), None
    )
    if questions_file is None:
        raise SystemExit(f"{source}: no 1-hop/qa_dev.txt")
    q_lines: list[str] = []
    topic_links = answer_links = 0
    with questions_file.open(encoding="utf-8") as f:
        for line in f:
            if len(q_lines) >= n_questions:
                break
            line = line.rstrip("\r\n")
            parts = line.split("\t")
            if not line.strip() or len(parts) != 2:
                continue
            topics = list(dict.fromkeys(t.strip() for t in TOPIC.findall(parts[0])))
            answers = list(dict.fromkeys(a.strip() for a in parts[1].split("|") if a.strip()))
            if not topics or not answers or not all(t in entities for t in topics):
                continue
            q_lines.append(line)
            topic_links += len(topics)
            answer_links += sum(a in entities for a in answers)
    dest.mkdir(parents=True)
    (dest / "kb.txt").write_text("\n".join(kb_lines) + "\n", encoding="utf-8")
    (dest / "1-hop").mkdir()
    (dest / "1-hop" / "qa_dev.txt").write_text("\n".join(q_lines) + "\n", encoding="utf-8")
    return {
        "entities": len(entities),
        "relationships": len(triples),
        "questions": len(q_lines),
        "topic_links": topic_links,
        "answer_links": answer_links,
    }


# --- the database --------------------------------------------------------------------------------


@dataclass
class Snapshot:
    counts: dict[str, int]
    duplicates: dict[str, int]
    missing_embeddings: dict[str, int]
    statuses: list[str]

    @property
    def status(self) -> str | None:
        return self.statuses[0] if len(self.statuses) == 1 else (None if not self.statuses else f"{len(self.statuses)} Dataset nodes")

    @property
    def rows(self) -> int:
        return self.counts["entities"] + self.counts["relationships"] + self.counts["questions"]

    @property
    def empty(self) -> bool:
        return not self.statuses and not any(self.counts.values())

    def short(self) -> str:
        c = self.counts
        return f"{c['entities']} entities, {c['relationships']} rels, {c['questions']} questions, status {self.status}"


def snapshot(settings: Settings) -> Snapshot:
    counts, duplicates, missing = {}, {}, {}
    with connect(settings, wait_s=30) as conn:
        for kind, cypher in CHECK_QUERIES.items():
            row = conn.query(cypher, {"ds": DATASET})[0]
            counts[kind], duplicates[kind], missing[kind] = row["n"], row["n"] - row["d"], row["n"] - row["e"]
        statuses = list(conn.query(STATUS_QUERY, {"ds": DATASET})[0]["statuses"])
    return Snapshot(counts, duplicates, missing, statuses)


def poll_rows(conn) -> int:
    """Rows in the database now; -1 when a busy or restarting server does not answer this poll."""
    try:
        return conn.query(ROWS_QUERY)[0]["n"]
    except Exception as exc:  # noqa: BLE001 - polled again a moment later
        log(f"  (poll failed: {type(exc).__name__})")
        return -1


def invariant_problems(snap: Snapshot, reference: dict[str, int]) -> list[str]:
    """What must hold at any moment: no duplicate, nothing without its embedding, and 'complete' means complete."""
    problems = [f"{n} duplicate {kind}" for kind, n in snap.duplicates.items() if n]
    problems += [f"{n} {kind} without embedding" for kind, n in snap.missing_embeddings.items() if n]
    if snap.status == "complete":
        problems += count_problems(snap, reference, "status 'complete' but ")
    elif len(snap.statuses) > 1:
        problems.append(f"{len(snap.statuses)} Dataset nodes named {DATASET}")
    return problems


def count_problems(snap: Snapshot, reference: dict[str, int], prefix: str = "") -> list[str]:
    return [f"{prefix}{kind} {snap.counts[kind]} != {reference[kind]}" for kind in COUNTED if snap.counts[kind] != reference[kind]]


def complete_problems(snap: Snapshot, reference: dict[str, int]) -> list[str]:
    problems = invariant_problems(snap, reference)
    if snap.status != "complete":
        problems += count_problems(snap, reference)
        problems.append(f"status {snap.status!r}, not 'complete'")
    return problems


# --- processes -----------------------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


class Child:
    """A `gr-neo4j` command in its own process group; stdout and stderr go to files."""

    live: ClassVar[set[Child]] = set()

    def __init__(self, name: str, args: list[str], env: dict[str, str], logs: Path, gated: bool = False):
        self.name = name
        self.out_path, self.err_path = logs / f"{name}.out", logs / f"{name}.err"
        with self.out_path.open("w") as out, self.err_path.open("w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", GATED_CLI if gated else CLI, *args], env=env, stdout=out, stderr=err, cwd=logs,
                stdin=subprocess.PIPE if gated else subprocess.DEVNULL, start_new_session=True,
            )
        self.began = time.monotonic()
        self.ended: float | None = None
        Child.live.add(self)

    def release(self) -> None:
        """Let a gated command run now (its start-up already happened)."""
        assert self.proc.stdin is not None
        self.began = time.monotonic()
        try:
            self.proc.stdin.write(b"go\n")
            self.proc.stdin.close()
        except BrokenPipeError:
            pass

    def poll(self) -> int | None:
        rc = self.proc.poll()
        if rc is not None and self.ended is None:
            self.ended = time.monotonic()
            Child.live.discard(self)
        return rc

    def running_after(self, delay: float) -> bool:
        """Wait until `delay` seconds after the start; True if it still runs then."""
        while time.monotonic() < self.began + delay:
            if self.poll() is not None:
                return False
            time.sleep(0.05)
        return self.poll() is None

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None (and the process group killed) when it did not end in time."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        return self.poll()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self.poll()

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.began

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    @property
    def traceback(self) -> bool:
        return "Traceback" in self.stderr

    def last_line(self) -> str:
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        return lines[-1][:200] if lines else ""


class Server:
    """The run's own managed Neo4j, restartable after a kill -9 (on fresh ports: the killed server's
    ports may sit in TIME_WAIT; the CLI finds the new ones in the home's state file)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.restarts = 0

    def start(self) -> float:
        """Start and wait until Bolt answers.

        On a busy machine the launcher can outlast its own 60 s limit while the server still comes up
        (crash recovery included); `process.start` then raises before it records the ports, so record
        them here and wait as long as the JVM lives. If it dies or never answers: kill it and start once
        more on fresh ports (the old ones may still be held).
        """
        began = time.monotonic()
        try:
            process.start(self.settings)
        except ServerError as exc:
            log(f"server start: {exc}; waiting for it")
            if not self.await_slow_start(START_PATIENCE_S):
                self.kill9()
                self.settings = self.settings.with_(bolt_port=free_port(), http_port=free_port())
                process.start(self.settings)
        return time.monotonic() - began

    def await_slow_start(self, patience: float) -> bool:
        installation = find_installation(self.settings)
        layout_of(self.settings).write_state(
            bolt_port=self.settings.bolt_port, http_port=self.settings.http_port,
            version=installation.version if installation else None,
        )
        deadline = time.monotonic() + patience
        while time.monotonic() < deadline and self.jvm_pid() is not None:
            try:
                self.wait_ready(10)
                return True
            except Exception as exc:  # noqa: BLE001 - still starting: try again while the JVM lives
                if "credentials" in str(exc):
                    return False  # a first start cut short before its password was set: start afresh
        return False

    def wait_ready(self, timeout: float) -> None:
        with connect(self.settings, wait_s=timeout) as conn:
            conn.query("RETURN 1")

    def jvm_pid(self) -> int | None:
        try:
            pid = int(layout_of(self.settings).pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if pid_alive(pid) else None

    def kill9(self) -> bool:
        pid = self.jvm_pid()
        if pid is None:
            return False
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return False
        deadline = time.monotonic() + 30
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        return True

    def restart(self) -> float:
        """Stop (kill -9 if a clean stop fails) and start again on new ports."""
        if self.jvm_pid() is not None:
            try:
                process.stop(self.settings)
            except Exception:  # noqa: BLE001 - a panicked or wedged server: kill it
                self.kill9()
            if self.jvm_pid() is not None:
                self.kill9()
        self.settings = self.settings.with_(bolt_port=free_port(), http_port=free_port())
        self.restarts += 1
        return self.start()

    def ensure_up(self) -> None:
        if self.jvm_pid() is None:
            self.restart()
            return
        try:
            self.wait_ready(60)
        except Exception:  # noqa: BLE001 - alive but not answering
            self.restart()

    def shutdown(self) -> None:
        if self.jvm_pid() is None:
            return
        try:
            process.stop(self.settings)
        except Exception as exc:  # noqa: BLE001 - whatever happens, leave no server behind
            log(f"stopping the server failed ({exc}); killing it")
        if self.jvm_pid() is not None:
            self.kill9()


class Tmpfs:
    """The server home on a tmpfs, which a disk_full round shrinks to just above its use."""

    def __init__(self, path: Path, size_mb: int):
        self.path, self.size_mb, self.mounted = path, size_mb, False

    def mount(self) -> str | None:
        """None when mounted, else why not."""
        if os.geteuid() != 0:
            return "not root: no tmpfs can be mounted"
        if shutil.which("mount") is None:
            return "no mount command"
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size_mb}m,mode=0700", "tmpfs", str(self.path)],
            check=False, capture_output=True, text=True,
        )
        if done.returncode != 0:
            return f"mount -t tmpfs failed: {(done.stderr or done.stdout).strip()[:200]}"
        self.mounted = True
        return None

    def used(self) -> int:
        st = os.statvfs(self.path)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def resize(self, size_bytes: int) -> bool:
        size_kb = max(size_bytes // 1024, 64)
        done = subprocess.run(["mount", "-o", f"remount,size={size_kb}k", str(self.path)], check=False, capture_output=True, text=True)
        return done.returncode == 0

    def squeeze(self, margin: int) -> int:
        """Shrink to current use + margin; the size set (retries while the server writes)."""
        for _ in range(20):
            size = self.used() + margin
            if self.resize(size):
                return size
        return 0

    def give_room(self) -> bool:
        return self.resize(self.size_mb * 2**20)

    def unmount(self) -> None:
        if self.mounted:
            if subprocess.run(["umount", str(self.path)], check=False, capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(self.path)], check=False, capture_output=True)
            self.mounted = False


# --- the run -------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """What the run found; becomes the JSON summary."""

    faults: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    missed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    survived: int = 0
    records_lost: int = 0
    duplicates: int = 0
    missing_embeddings: int = 0
    tracebacks: int = 0
    exit0_incomplete: int = 0
    violations: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rounds: list[dict] = field(default_factory=list)


class Chaos:
    def __init__(self, args, server: Server, tmpfs: Tmpfs | None, slice_dir: Path, work: Path, env: dict, out: Outcome):
        self.args, self.server, self.tmpfs, self.slice_dir, self.work, self.env, self.out = args, server, tmpfs, slice_dir, work, env, out
        self.rng = random.Random(args.seed)
        self.reference: dict[str, int] = {}
        self.load_s = self.first_write_s = self.reload_s = 0.0
        self.n_children = 0

    # helpers

    def spawn(self, what: str, *args: str, gated: bool = False) -> Child:
        self.n_children += 1
        return Child(f"{self.n_children:03d}-{what}", list(args), self.env, self.work, gated)

    def spawn_load(self, what: str = "load") -> Child:
        return self.spawn(what, "load", DATASET, "--path", str(self.slice_dir), "--batch-size", str(self.args.batch_size))

    @property
    def patience(self) -> float:
        """How long a command may take before it counts as hung."""
        return max(300.0, 5 * self.load_s)

    @property
    def total_rows(self) -> int:
        return sum(self.reference[k] for k in ("entities", "relationships", "questions"))

    def note_snapshot(self, snap: Snapshot) -> None:
        self.out.duplicates += sum(snap.duplicates.values())
        self.out.missing_embeddings += sum(snap.missing_embeddings.values())

    def violation(self, info: dict | None, message: str) -> None:
        prefix = f"round {info['round']} ({info['fault']}, start {info['start']}): " if info else ""
        self.out.violations.append(prefix + message)
        if info is not None:
            info["violations"].append(message)

    def check_command(self, info: dict | None, child: Child, rc: int | None, what: str) -> None:
        if rc is None:
            self.violation(info, f"{what} still ran after {self.patience:.0f} s (killed)")
        if child.traceback:
            self.out.tracebacks += 1
            self.violation(info, f"{what} printed a Traceback (exit {rc}): {child.last_line()}")

    def drop_now(self) -> None:
        """Drop the dataset in-process (a round's clean start), if it is there."""
        from gr_neo4j.ingest import drop_from, stats_of

        with connect(self.server.settings, wait_s=30) as conn:
            if any(s.name == DATASET for s in stats_of(conn)):
                drop_from(conn, DATASET)

    # when a fault strikes

    def draw_start(self) -> str:
        """A round's start state; a re-load of a complete dataset (little to write) half as often as the others."""
        states = self.args.start_states
        if len(states) == 1:
            return states[0]
        return self.rng.choices(states, weights=[START_WEIGHTS[s] for s in states])[0]

    def draw_trigger(self, start_rows: int, complete: bool) -> tuple[str, float]:
        """('rows', n): when the database holds n rows, somewhere in the load's writes (3 times in 4);
        ('time', s): s seconds after the start, within the reference load's time before its first write
        (start-up, parse, embedding, looking for existing rows), or within a re-load's time."""
        if complete:
            return "time", self.rng.uniform(0.1, 0.95) * self.reload_s
        if self.rng.random() < 0.25 or start_rows >= self.total_rows:
            return "time", self.rng.uniform(0.1, 1.0) * self.first_write_s
        return "rows", start_rows + max(1, round(self.rng.uniform(0.02, 0.98) * (self.total_rows - start_rows)))

    def reached(self, load: Child, trigger: tuple[str, float]) -> bool:
        """Wait for the trigger; True if the load still runs when it fires."""
        kind, value = trigger
        if kind == "time":
            return load.running_after(value)
        deadline = time.monotonic() + self.patience
        with connect(self.server.settings, wait_s=30) as conn:
            while load.poll() is None and time.monotonic() < deadline:
                if poll_rows(conn) >= value:
                    break
                time.sleep(0.05)
        return load.poll() is None

    @staticmethod
    def describe(trigger: tuple[str, float]) -> str:
        return f"at {trigger[1]:.1f} s" if trigger[0] == "time" else f"at {int(trigger[1])} rows"

    # the reference

    def reference_run(self, input_counts: dict[str, int]) -> bool:
        load = self.spawn_load("reference-load")
        with connect(self.server.settings, wait_s=30) as conn:  # when the first row lands
            while load.poll() is None and load.seconds < self.patience * 4:
                if poll_rows(conn) > 0:
                    self.first_write_s = load.seconds
                    break
                time.sleep(0.1)
        rc = load.wait(self.patience * 4)
        self.load_s = load.seconds
        self.first_write_s = self.first_write_s or self.load_s
        self.check_command(None, load, rc, "the reference load")
        if rc != 0:
            self.violation(None, f"the reference load exited {rc}: {load.last_line()}")
            return False
        snap = snapshot(self.server.settings)
        self.reference = dict(snap.counts)
        self.note_snapshot(snap)
        for problem in complete_problems(snap, input_counts):
            self.violation(None, f"reference load vs the input files: {problem}")
        log(f"reference load: {self.load_s:.1f} s (first write after {self.first_write_s:.1f} s), {snap.short()}")
        if "complete" in self.args.start_states:
            reload = self.spawn_load("reference-reload")
            rc = reload.wait(self.patience)
            self.reload_s = reload.seconds
            self.check_command(None, reload, rc, "the reference re-load")
            snap = snapshot(self.server.settings)
            for problem in complete_problems(snap, self.reference) + ([f"exit {rc}: {reload.last_line()}"] if rc != 0 else []):
                self.violation(None, f"idempotent re-load: {problem}")
            log(f"re-load (nothing to write): {self.reload_s:.1f} s")
        return True

    # rounds

    def prepare(self, info: dict) -> int:
        """Bring the dataset to the round's start state; returns the rows it then holds."""
        start = info["start"]
        if start == "complete":
            return self.total_rows
        self.drop_now()
        if start == "empty":
            return 0
        pre = self.spawn_load("partial-load")
        trigger = ("rows", max(1, round(self.rng.uniform(0.1, 0.9) * self.total_rows)))
        if self.reached(pre, trigger):
            pre.kill()
        else:
            self.check_command(info, pre, pre.wait(self.patience), "the partial load")
        snap = snapshot(self.server.settings)
        self.note_snapshot(snap)
        info["partial"] = snap.short()
        for problem in invariant_problems(snap, self.reference):
            self.violation(info, f"after a killed load: {problem}")
        return snap.rows

    def run_round(self, info: dict) -> None:
        began = time.monotonic()
        try:
            self.server.ensure_up()
            start_rows = self.prepare(info)
            trigger = self.draw_trigger(start_rows, info["start"] == "complete")
            info["trigger"] = self.describe(trigger)
            getattr(self, f"fault_{info['fault']}")(info, trigger)
            # Recovery as a user would: run the load again, to completion.
            self.server.ensure_up()
            reload = self.spawn_load("reload")
            rc = reload.wait(self.patience)
            info["reload_rc"] = rc
            self.check_command(info, reload, rc, "the re-load")
            if rc != 0:
                self.violation(info, f"the re-load exited {rc}: {reload.last_line()}")
            snap = snapshot(self.server.settings)
            self.note_snapshot(snap)
            self.out.records_lost += sum(max(0, self.reference[k] - snap.counts[k]) for k in COUNTED)
            for problem in complete_problems(snap, self.reference):
                self.violation(info, f"after the re-load: {problem}")
        finally:
            info["seconds"] = round(time.monotonic() - began, 1)
            kind = info["fault"]
            if info.get("injected"):
                self.out.faults[kind] += 1
                self.out.survived += not info["violations"]
            elif "trigger" in info:
                self.out.missed[kind] += 1

    def after_fault(self, info: dict, load_rc: int | None) -> Snapshot:
        """The state right after a fault: invariants, and exit 0 must mean complete."""
        snap = snapshot(self.server.settings)
        self.note_snapshot(snap)
        info["after_fault"] = snap.short()
        for problem in invariant_problems(snap, self.reference):
            self.violation(info, f"after the fault: {problem}")
        if load_rc == 0 and info["fault"] != "drop_race":
            problems = complete_problems(snap, self.reference)
            if problems:
                self.out.exit0_incomplete += 1
                self.violation(info, f"the faulted load exited 0 with incomplete data: {'; '.join(problems)}")
        return snap

    def finish_unfaulted(self, info: dict, load: Child) -> None:
        """The load ended before the fault could strike: it must still be right."""
        rc = load.wait(self.patience)
        info["load_rc"] = rc
        self.check_command(info, load, rc, "the load")
        self.after_fault(info, rc)

    def fault_kill_client(self, info: dict, trigger) -> None:
        load = self.spawn_load()
        if not self.reached(load, trigger):
            return self.finish_unfaulted(info, load)
        load.kill()
        info.update(injected=True, fired_after_s=round(load.seconds, 1), load_rc=load.poll())
        self.after_fault(info, load.poll())

    def fault_kill_server(self, info: dict, trigger) -> None:
        load = self.spawn_load()
        if not self.reached(load, trigger):
            return self.finish_unfaulted(info, load)
        self.server.kill9()
        info.update(injected=True, fired_after_s=round(load.seconds, 1))
        rc = load.wait(self.patience)
        info.update(load_rc=rc, load_error=load.last_line())
        self.check_command(info, load, rc, "the load whose server was killed")
        info["restart_s"] = round(self.server.restart(), 1)
        self.after_fault(info, rc)

    def fault_drop_race(self, info: dict, trigger) -> None:
        drop = self.spawn("drop", "drop", DATASET, "--yes", gated=True)  # imported now, run at the trigger
        load = self.spawn_load()
        if not self.reached(load, trigger):
            drop.kill()
            return self.finish_unfaulted(info, load)
        drop.release()
        info["fired_after_s"] = round(load.seconds, 1)
        drop_rc = drop.wait(self.patience)
        load_alive_at_drop_end = load.poll() is None
        load_rc = load.wait(self.patience)
        info.update(load_rc=load_rc, drop_rc=drop_rc, load_error=load.last_line() if load_rc else "", drop_said=drop.last_line())
        info.update(injected=True, load_alive_at_drop_end=load_alive_at_drop_end)
        self.check_command(info, load, load_rc, "the load")
        self.check_command(info, drop, drop_rc, "the drop")
        if drop_rc not in (0, None):
            lines = [line for line in drop.stderr.splitlines() if line.strip()]
            if len(lines) != 1:
                self.violation(info, f"the refused drop printed {len(lines)} lines on stderr, not one")
        snap = self.after_fault(info, load_rc)
        if load_rc == 0:
            problems = complete_problems(snap, self.reference)
            if drop_rc == 0 and snap.empty:
                problems = []  # the drop ran after the load finished: both right
            if problems:
                self.out.exit0_incomplete += 1
                state = "neither complete nor gone" if drop_rc == 0 else "incomplete"
                who = "the load and the drop both exited 0" if drop_rc == 0 else f"the load exited 0 (the drop {drop_rc})"
                self.violation(info, f"{who} but the dataset is {state}: " + "; ".join(problems))
        return None

    def fault_disk_full(self, info: dict, trigger) -> None:
        assert self.tmpfs is not None
        load = self.spawn_load()
        if not self.reached(load, trigger):
            return self.finish_unfaulted(info, load)
        size = self.tmpfs.squeeze(self.args.disk_margin_kb * 1024)
        info.update(injected=size > 0, fired_after_s=round(load.seconds, 1), squeezed_to_mb=round(size / 2**20, 1))
        if not size:
            self.out.notes.append(f"round {info['round']}: the tmpfs could not be shrunk")
        rc = load.wait(self.patience)
        info.update(load_rc=rc, load_error=load.last_line() if rc else "")
        self.check_command(info, load, rc, "the load on a full disk")
        if not self.tmpfs.give_room():
            self.violation(info, "the tmpfs could not be given its room back")
        info["restart_s"] = round(self.server.restart(), 1)  # a server that hit ENOSPC may have shut its database
        self.after_fault(info, rc)
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metaqa", type=Path, default=None, help="MetaQA directory (default: the shared datasets dir's metaqa)")
    parser.add_argument("--triples", type=int, default=20000, help="the first N lines of kb.txt")
    parser.add_argument("--questions", type=int, default=2000, help="at most N 1-hop dev questions (topic in the slice)")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--time-limit", type=float, default=1500.0, help="seconds; no round starts when it would end past this")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--faults", default=",".join(KINDS), help=f"comma-separated, taken in turn: {', '.join(KINDS)}")
    parser.add_argument("--starts", default=",".join(STARTS), help=f"start states to draw from: {', '.join(STARTS)}")
    parser.add_argument("--batch-size", type=int, default=1000, help="rows per write transaction (small: kills land between batches)")
    parser.add_argument("--embedder", default=None, help="GR_NEO4J_EMBEDDER for the loads (default: the shipped all-MiniLM-L6-v2)")
    parser.add_argument("--heap", default="1g")
    parser.add_argument("--pagecache", default="512m")
    parser.add_argument("--tmpfs-mb", type=int, default=3072, help="size of the tmpfs home for disk_full")
    parser.add_argument("--logs", type=Path, default=None, help="copy the server's logs and every command's output here at the end")
    parser.add_argument("--disk-margin-kb", type=int, default=256, help="free space left when disk_full shrinks the tmpfs")
    args = parser.parse_args()

    kinds = [k.strip() for k in args.faults.split(",") if k.strip()]
    starts = [s.strip() for s in args.starts.split(",") if s.strip()]
    if not kinds or set(kinds) - set(KINDS) or not starts or set(starts) - set(STARTS):
        parser.error(f"--faults takes {', '.join(KINDS)}; --starts takes {', '.join(STARTS)}")
    args.start_states = tuple(starts)
    source = args.metaqa or ((datasets_dir() or Path(__file__).resolve().parents[2] / "shared" / "datasets") / "metaqa")
    if not (source / "kb.txt").is_file():
        parser.error(f"no MetaQA at {source} (pass --metaqa DIR)")

    began = time.monotonic()
    out = Outcome()
    for var in [v for v in os.environ if v.startswith("NEO4J_")]:
        os.environ.pop(var)  # never the user's server
    dist = Path(os.environ.get("GR_NEO4J_DIST") or Path.home() / ".cache" / "gr-neo4j" / "dist")
    work = Path(tempfile.mkdtemp(prefix="gr-neo4j-chaos-"))
    home = work / "home"
    home.mkdir()
    settings = load_settings(
        home=home, dist_dir=dist, bolt_port=free_port(), http_port=free_port(), heap=args.heap, pagecache=args.pagecache
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_") and k not in STRIPPED_ENV}
    env.update(GR_NEO4J_HOME=str(home), GR_NEO4J_DIST=str(dist))
    if args.embedder:
        env["GR_NEO4J_EMBEDDER"] = str(args.embedder)
    server = Server(settings)
    tmpfs = Tmpfs(home, args.tmpfs_mb)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    input_counts: dict[str, int] = {}
    chaos = None
    interrupted = False
    try:
        if "disk_full" in kinds:
            why = tmpfs.mount()
            if why:
                kinds = [k for k in kinds if k != "disk_full"]
                out.notes.append(f"disk_full skipped: {why}")
                log(f"disk_full skipped: {why}")
                if not kinds:
                    raise SystemExit("no fault kind left to run")
        input_counts = build_slice(source, work / "metaqa", args.triples, args.questions)
        log(f"slice of {source}: {json.dumps(input_counts)}")
        log(f"starting Neo4j in {home}" + (" (tmpfs)" if tmpfs.mounted else "") + "...")
        log(f"server up in {server.start():.1f} s")
        chaos = Chaos(args, server, tmpfs if tmpfs.mounted else None, work / "metaqa", work, env, out)
        if chaos.reference_run(input_counts):
            deadline = began + args.time_limit
            longest = 0.0
            for number in range(1, args.rounds + 1):
                kind = kinds[(number - 1) % len(kinds)]
                estimate = longest or (2.5 * chaos.load_s + chaos.reload_s + 60)
                if time.monotonic() + estimate > deadline:
                    out.notes.append(f"time limit: stopped before round {number} of {args.rounds}")
                    log(out.notes[-1])
                    break
                info = run_round_safely(chaos, number, kind)
                longest = max(longest, info.get("seconds", 0.0))
                out.rounds.append(info)
                log(round_line(info, args.rounds))
    except KeyboardInterrupt:
        interrupted = True
        out.violations.append("interrupted before the end")
        log("interrupted: stopping the commands and the server")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second TERM must not cut the clean-up short
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for child in list(Child.live):
            child.kill()
        server.shutdown()
        if args.logs:
            save_logs(work, args.logs)
        tmpfs.unmount()
        shutil.rmtree(work, ignore_errors=True)
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    summary = {
        "rounds": len(out.rounds),
        "faults": out.faults,
        "faults_missed": out.missed,
        "faults_survived": out.survived,
        "records_lost": out.records_lost,
        "duplicates": out.duplicates,
        "missing_embeddings": out.missing_embeddings,
        "tracebacks": out.tracebacks,
        "exit0_incomplete": out.exit0_incomplete,
        "violations": out.violations,
        "reference_counts": chaos.reference if chaos else {},
        "input_counts": input_counts,
        "reference_load_s": round(chaos.load_s, 1) if chaos else None,
        "server_restarts": server.restarts,
        "notes": out.notes,
        "round_log": out.rounds,
        "seconds": round(time.monotonic() - began, 1),
    }
    print(json.dumps(summary, indent=2))
    if interrupted:
        return 130
    return 1 if out.violations else 0


def save_logs(work: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for path in sorted(work.glob("*.out")) + sorted(work.glob("*.err")):
        shutil.copy(path, dest / path.name)
    if (work / "home" / "logs").is_dir():
        shutil.copytree(work / "home" / "logs", dest / "neo4j-logs", dirs_exist_ok=True)


def run_round_safely(chaos: Chaos, number: int, kind: str) -> dict:
    """One round; an unexpected error is a violation of that round, and the next round still runs."""
    info = {"round": number, "fault": kind, "start": chaos.draw_start(), "violations": []}
    try:
        chaos.run_round(info)
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001
        chaos.violation(info, f"the round failed: {type(exc).__name__}: {str(exc)[:300]}")
        for child in list(Child.live):
            child.kill()
        try:
            chaos.server.ensure_up()
        except Exception as again:  # noqa: BLE001
            chaos.violation(info, f"the server does not start again: {again}")
    return info


def round_line(info: dict, total: int) -> str:
    fault = f"fault {info.get('trigger', '')}" if info.get("injected") else f"missed {info.get('trigger', '')} (load ended first)"
    codes = ", ".join(f"{k.removesuffix('_rc')} rc={info[k]}" for k in ("load_rc", "drop_rc", "reload_rc") if k in info)
    verdict = "ok" if not info["violations"] else "VIOLATION: " + " | ".join(info["violations"])
    return (f"round {info['round']}/{total} {info['fault']:<11} start={info['start']:<8} {fault}; "
            f"{codes}; {info.get('seconds', '?')} s: {verdict}")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
