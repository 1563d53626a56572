"""Benchmark: a cold `gr-neo4j ask`, where its seconds go, and its wall time.

Each run is a new process (cold Python, warm OS file cache), as a user typing the command:

1. `ask QUESTION -d DATASET --no-answer --no-record` and `ask ... --no-record` (the default
   answerer: the graph's own answers on a knowledge graph), --runs times each: wall seconds of each
   run and their median (targets 8 s and 12 s). With --llm also `ask ... --answer-by llm` (torch,
   transformers and the converted LLM from the cache; no target), the same number of times.
2. One more `--no-answer` run under `python -X importtime`: the import seconds of the top-level
   packages (cumulative, as imported first by that command), largest first.
3. With --baseline REF: the first two commands of step 1, run --baseline-runs times from REF's
   code (`git archive` into a temporary folder, this venv) with each --revert COMMIT undone (`git
   apply -R`: REF as it would be without those changes, e.g. `--baseline HEAD --revert <the numpy
   retrieval commit>`, since the database's stored path ranker must suit the code), as this machine
   ran them before: nothing precompiled (PYTHONPYCACHEPREFIX at an empty folder,
   PYTHONDONTWRITEBYTECODE=1); and the median speed-up of ours over it.

Needs a running database with DATASET loaded (the configured one: GR_NEO4J_HOME's managed server
or NEO4J_URI); it starts and loads nothing. For instance:

    GR_NEO4J_HOME=$(mktemp -d) gr-neo4j db start && gr-neo4j load triples --path films.tsv --name films
    python scripts/bench_cold_start.py --dataset films --question 'who directed $9.99' [--runs 3] [--out FILE]

Prints one JSON document (and writes it to --out), with the load average: on a shared 2-core
machine other jobs change every figure here.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchlib.report import emit

TARGETS_S = {"ask_no_answer": 8.0, "ask": 12.0}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "gr_neo4j", *args]


def timed(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=cwd, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return seconds


def import_breakdown(command: list[str], top: int = 15) -> dict[str, float]:
    """Seconds of importing each top-level package, largest first: the cumulative time of every
    import of it from outside itself (torch counts inside torch_geometric's time as well)."""
    done = subprocess.run([command[0], "-X", "importtime", *command[1:]], check=True, capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            _, cumulative, name = line.split("|", 2)
            rows.append(((len(name) - len(name.lstrip()) - 1) // 2, name.strip().split(".")[0], int(cumulative) / 1e6))
    seconds: dict[str, float] = defaultdict(float)
    parent_at: dict[int, str] = {}  # importtime prints a module after its imports: walk backwards
    for depth, package, cumulative in reversed(rows):
        if depth == 0 or parent_at.get(depth - 1) != package:
            seconds[package] += cumulative
        parent_at[depth] = package
    return {k: round(v, 2) for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])[:top]}


def baseline(ref: str, reverts: list[str], commands: dict[str, list[str]], runs: int) -> dict:
    """Wall seconds of `commands` run from the code of git `ref` less `reverts`, with nothing precompiled."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> bytes:
        return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True).stdout

    commit = git("rev-parse", ref).decode().strip()
    with tempfile.TemporaryDirectory(prefix="bench-cold-baseline-") as tmp:
        code, no_pyc = Path(tmp) / "code", Path(tmp) / "pycache"
        code.mkdir()
        no_pyc.mkdir()
        subprocess.run(["tar", "-x", "-C", str(code)], input=git("archive", commit), check=True)
        for undo in reverts:
            subprocess.run(["git", "apply", "-R"], cwd=code, input=git("diff", f"{undo}^", undo), check=True)
        # `python -m` puts the working directory first on sys.path: REF's gr_neo4j, not the editable install's
        env = os.environ | {"PYTHONPYCACHEPREFIX": str(no_pyc), "PYTHONDONTWRITEBYTECODE": "1"}
        walls: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, command in commands.items():
                walls[name].append(round(timed(command, cwd=code, env=env), 2))
    return {"ref": ref, "commit": commit, "reverted": [git("rev-parse", r).decode().strip() for r in reverts], "wall_s": walls, "median_s": {name: statistics.median(w) for name, w in walls.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--question", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--llm", action="store_true", help="also time `ask --answer-by llm`")
    parser.add_argument("--baseline", metavar="REF", default=None, help="also time the two asks from git REF's code, nothing precompiled")
    parser.add_argument("--baseline-runs", type=int, default=1)
    parser.add_argument("--revert", metavar="COMMIT", action="append", default=[], help="undo COMMIT in the baseline (repeatable)")
    args = parser.parse_args()
    base = ["ask", args.question, "-d", args.dataset, "--no-record"]
    commands = {"ask_no_answer": cli(*base, "--no-answer"), "ask": cli(*base)}
    if args.llm:
        commands["ask_answer_by_llm"] = cli(*base, "--answer-by", "llm")
    load_before = os.getloadavg()[0]
    walls: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():  # taking turns, so a burst of other work hits both
            walls[name].append(round(timed(command), 2))
    report = {
        "question": args.question,
        "dataset": args.dataset,
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(),
        "commands": {name: shlex.join(["gr-neo4j", *command[3:]]) for name, command in commands.items()},
        "wall_s": walls,
        "median_s": {name: statistics.median(w) for name, w in walls.items()},
        "target_s": TARGETS_S,
        "import_s_of_ask_no_answer": import_breakdown(commands["ask_no_answer"]),
    }
    if args.baseline:
        old = baseline(args.baseline, args.revert, {k: commands[k] for k in ("ask_no_answer", "ask")}, args.baseline_runs)
        report["baseline"] = old
        report["speedup_of_median"] = {k: round(v / report["median_s"][k], 1) for k, v in old["median_s"].items()}
        report["load_average_before_after"][1] = round(os.getloadavg()[0], 2)
    emit(report, args.out)


if __name__ == "__main__":
    main()
