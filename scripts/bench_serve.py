"""Load test of `gr-neo4j serve`: bounded, loopback only, on a server and a Neo4j of its own.

In a temporary GR_NEO4J_HOME it starts a managed Neo4j on free ports, loads a MetaQA slice (the
first ``--triples`` lines of kb.txt and the 1- and 2-hop dev questions whose topic entity is in the
slice, asked as typed: brackets removed), and starts ``gr-neo4j serve --port 0`` (127.0.0.1, a
free port). Then, for each of ``--rounds`` rounds, each endpoint (``/retrieve``, ``/ask`` with the
defaults of ``gr-neo4j ask``: the graph answers) and each concurrency in ``--levels``, it sends
``--requests`` requests from that many client threads (questions cycled), and stops sending after
``--time-cap`` seconds. Baseline, in the same run: the CLI's cold ``gr-neo4j ask --json`` (a new
process per question: imports, model and driver each time), ``--baseline`` questions, measured once.

Prints one JSON document: p50/p95 latency, errors and throughput per endpoint and concurrency, the
server's RSS before and after each level and at the end, the baseline, and the load average.

    python scripts/bench_serve.py [--triples 20000] [--requests 64] [--levels 1,4,16] [--rounds 2]
                                  [--time-cap 60] [--baseline 3] [--answer-by auto|llm] [--source ../shared/datasets/metaqa] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
from benchlib.report import emit

from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.metrics import percentiles
from gr_neo4j.server import process
from gr_neo4j.server.process import free_port
from gr_neo4j.settings import load_settings

REPO = Path(__file__).resolve().parents[1]
TOPIC = re.compile(r"\[([^\]]+)\]")
ENDPOINTS = ("/retrieve", "/ask")


def log(message: str) -> None:
    print(f"[bench_serve] {message}", file=sys.stderr, flush=True)




def build_slice(source: Path, dest: Path, n_triples: int, per_hop: int) -> list[str]:
    """Write the first ``n_triples`` well-formed triples and, per hop (1, 2), up to ``per_hop`` dev
    questions whose topic entities are all in the slice; return those questions as typed."""
    kb, entities = [], set()
    with (source / "kb.txt").open(encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\r\n").split("|")
            if len(parts) == 3 and all(p.strip() for p in parts):
                kb.append(line.rstrip("\r\n"))
                entities.update((parts[0].strip(), parts[2].strip()))
                if len(kb) >= n_triples:
                    break
    dest.mkdir(parents=True)
    (dest / "kb.txt").write_text("\n".join(kb) + "\n", encoding="utf-8")
    typed = []
    for hops in (1, 2):
        kept = []
        with (source / f"{hops}-hop" / "qa_dev.txt").open(encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\r\n").split("\t")
                topics = TOPIC.findall(parts[0])
                if len(parts) == 2 and topics and all(t.strip() in entities for t in topics):
                    kept.append(line.rstrip("\r\n"))
                    typed.append(TOPIC.sub(r"\1", parts[0]))
                    if len(kept) >= per_hop:
                        break
        (dest / f"{hops}-hop").mkdir()
        (dest / f"{hops}-hop" / "qa_dev.txt").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return typed


@contextmanager
def serving(env: dict[str, str]) -> Iterator[tuple[str, psutil.Process]]:
    """``gr-neo4j serve --port 0`` in a subprocess; yields its URL and process. Its stderr is
    drained by a thread (kept for the error message)."""
    proc = subprocess.Popen([sys.executable, "-m", "gr_neo4j", "serve", "--port", "0", "--no-access-log"], env=env,
                            stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def drain() -> None:
        for line in proc.stderr:
            lines.append(line)
            match = re.search(r"serving on (http://127\.0\.0\.1:\d+)", line)
            if match:
                url.append(match.group(1))
                found.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        while not found.wait(1):
            if proc.poll() is not None:
                raise SystemExit(f"gr-neo4j serve exited {proc.returncode}:\n{''.join(lines)}")
        yield url[0], psutil.Process(proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def rss_mb(p: psutil.Process) -> float:
    return round(p.memory_info().rss / 2**20, 1)


def level(url: str, endpoint: str, questions: list[str], clients: int, count: int, cap_s: float, answer_by: str = "auto") -> dict:
    """``count`` requests to ``endpoint`` from ``clients`` threads (stop sending after ``cap_s``)."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    next_index = [0]
    began = time.perf_counter()

    def client() -> None:
        with httpx.Client(base_url=url, timeout=120) as http:
            while True:
                with lock:
                    i = next_index[0]
                    if i >= count or time.perf_counter() - began > cap_s:
                        return
                    next_index[0] += 1
                body = {"question": questions[i % len(questions)], "dataset": "metaqa", "record": False}
                if endpoint == "/ask":
                    body["answer_by"] = answer_by
                t0 = time.perf_counter()
                try:
                    r = http.post(endpoint, json=body)
                    ok = r.status_code == 200
                    problem = None if ok else f"{r.status_code}: {r.text[:200]}"
                except httpx.HTTPError as exc:
                    problem = f"{type(exc).__name__}: {exc}"
                with lock:
                    latencies.append(1000 * (time.perf_counter() - t0))
                    if problem:
                        errors.append(problem)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    return {
        "endpoint": endpoint, "clients": clients, "requests": len(latencies), "errors": len(errors), "error_examples": errors[:3],
        "latency_ms": percentiles(latencies, (50, 95)), "throughput_rps": round(len(latencies) / wall, 2), "wall_s": round(wall, 2),
    }


def cold_cli(env: dict[str, str], questions: list[str]) -> dict:
    """The CLI's `ask --json` in a new process per question (the baseline)."""
    walls = []
    for q in questions:
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "gr_neo4j", "ask", q, "-d", "metaqa", "--json", "--no-record"], env=env,
                             capture_output=True, text=True, check=False)
        walls.append(1000 * (time.perf_counter() - t0))
        if out.returncode != 0:
            raise SystemExit(f"baseline ask failed: {out.stderr[-500:]}")
    return {"questions": len(walls), "latency_ms": percentiles(walls, (50, 95)), "each_ms": [round(w) for w in walls]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", type=Path, default=REPO.parent / "shared" / "datasets" / "metaqa")
    ap.add_argument("--triples", type=int, default=20_000)
    ap.add_argument("--questions", type=int, default=100, help="dev questions per hop (1, 2) kept")
    ap.add_argument("--requests", type=int, default=64, help="requests per endpoint and concurrency level")
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--rounds", type=int, default=2, help="sweeps of all levels (RSS after each shows whether it grows)")
    ap.add_argument("--time-cap", type=float, default=60.0, help="seconds per level after which no request is sent")
    ap.add_argument("--baseline", type=int, default=3, help="cold CLI asks (one process each)")
    ap.add_argument("--answer-by", default="auto", choices=("auto", "llm"), help="/ask: the graph answers (auto) or the default LLM")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]

    load_start = os.getloadavg()
    home = Path(tempfile.mkdtemp(prefix="gr-neo4j-bench-serve-"))
    for var in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE"):
        os.environ.pop(var, None)
    dist = os.environ.get("GR_NEO4J_DIST") or str(Path.home() / ".cache" / "gr-neo4j" / "dist")
    settings = load_settings(home=home, dist_dir=dist, bolt_port=free_port(), http_port=free_port(), heap="1g", pagecache="512m")
    env = os.environ | {"GR_NEO4J_HOME": str(home), "GR_NEO4J_DIST": dist}
    try:
        log(f"starting Neo4j in {home}")
        process.start(settings)
        questions = build_slice(args.source, home / "slice", args.triples, args.questions)
        log(f"loading {args.triples} triples and {len(questions)} questions")
        t0 = time.perf_counter()
        report = load_dataset(settings, "metaqa", path=home / "slice")
        load_s = time.perf_counter() - t0
        log(f"loaded in {load_s:.0f} s; cold CLI baseline")
        baseline = cold_cli(env, questions[: args.baseline])
        log("starting gr-neo4j serve")
        t0 = time.perf_counter()
        with serving(env) as (url, server):
            startup_s = time.perf_counter() - t0
            rss_start = rss_mb(server)
            results = []
            for rnd in range(1, args.rounds + 1):
                for endpoint in ENDPOINTS:
                    for clients in levels:
                        before = rss_mb(server)
                        r = level(url, endpoint, questions, clients, args.requests, args.time_cap, args.answer_by)
                        r |= {"round": rnd, "rss_mb_before": before, "rss_mb_after": rss_mb(server)}
                        log(json.dumps(r))
                        results.append(r)
            rss_end = rss_mb(server)
        doc = {
            "data": {"source": str(args.source), "triples": args.triples, "questions": len(questions),
                     "entities": report.input_entities, "relationships": report.input_relationships, "load_s": round(load_s, 1)},
            "baseline_cold_cli_ask": baseline,
            "server": {"startup_s": round(startup_s, 1), "rss_mb_ready": rss_start, "rss_mb_end": rss_end},
            "answer_by": args.answer_by,
            "levels": results,
            "errors": sum(r["errors"] for r in results),
            "load_average": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]},
            "cpus": os.cpu_count(),
        }
        emit(doc, args.out)
    finally:
        process.stop(settings)
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
