"""Benchmark: time per question of this checkout beside a baseline revision, on one database.

Needs MetaQA loaded into the configured Neo4j (`gr-neo4j load metaqa`) and its trained ranker
(`gr-neo4j train-paths --dataset metaqa`). The baseline is the code as it was before the zero-shot
path scorer and "not in the graph" (:data:`BASELINE`, or `--baseline REV`), taken out of git with
`git archive` and run by this virtual environment. Both sides run the same command,

    gr-neo4j eval-retrieval -d metaqa --limit N --mode paths --predict-hops --no-ceilings [--no-path-ranker]

once with the stored ranker (trained) and once without it (untrained: what a user gets before
`train-paths`), `--rounds` times each, the order of the two sides swapped every round so that a
drift in the machine's load falls on both. Both read the same stored ranker: the training code of
the two revisions differs only in the answer floor it adds to the report, which the baseline
ignores. Per row and hop, the median over rounds of each run's p50 `total_ms` (embed + link +
Cypher + selection) is compared; the target is ours ≤ 1.10 × baseline.

Prints one JSON document.

    python scripts/bench_latency.py [--baseline REV] [--limit 300] [--rounds 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib.report import emit
from rich.console import Console

from gr_neo4j.cli.progress import RichProgress
from gr_neo4j.connection import connect
from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.progress import NO_PROGRESS
from gr_neo4j.retrieval.paths.ranker import load_ranker
from gr_neo4j.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
# The last revision before the zero-shot scorer: the code whose times the zero-shot work must keep.
BASELINE = "ba34aa2"
TARGET_RATIO = 1.10
STAGES = ("embed_ms", "link_ms", "cypher_ms")
ROWS = {"trained": [], "untrained": ["--no-path-ranker"]}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def resolve(rev: str) -> str:
    """The full hash of commit ``rev``; exits with one line when the clone lacks it."""
    try:
        return git("rev-parse", "--verify", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        sys.exit(f"error: baseline revision {rev!r} is not in this clone's history (git fetch --unshallow?)")


def require_ranker(dataset: str) -> None:
    """Exit with one line unless ``dataset`` has a stored ranker: without one the trained row
    would time the untrained code twice."""
    try:
        with connect(load_settings()) as conn:
            stored = load_ranker(conn, dataset) is not None
    except GrNeo4jError as e:
        sys.exit(f"error: {e}")
    if not stored:
        sys.exit(f"error: dataset '{dataset}' has no trained ranker: run `gr-neo4j train-paths --dataset {dataset}` first")


def extract(commit: str, dest: Path) -> Path:
    """The tree of ``commit`` under ``dest``, importable as `gr_neo4j` (its `cypher/` and `loaders/`,
    which the wheel maps into the package, linked in)."""
    archive = dest / "tree.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, stdout=f)
    tree = dest / "tree"
    tree.mkdir()
    subprocess.run(["tar", "-xf", str(archive), "-C", str(tree)], check=True)  # tar, not tarfile: its safe filter needs Python >= 3.11.4
    for sub in ("cypher", "loaders"):
        (tree / "gr_neo4j" / sub).symlink_to(tree / sub, target_is_directory=True)
    return tree


def environment(tree: Path | None) -> dict[str, str]:
    """The environment of one side: ``tree`` first on the path (the baseline), or this checkout."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def check_imports(tree: Path | None, expect: Path) -> None:
    """Refuse to time a side whose `gr_neo4j` (or its Cypher) does not come from ``expect``."""
    code = "import gr_neo4j, gr_neo4j.cypher as c; print(gr_neo4j.__file__); print(list(c.__path__)[0])"
    out = subprocess.run([sys.executable, "-c", code], env=environment(tree), cwd=tree or ROOT, check=True, capture_output=True, text=True).stdout.split()
    for path in out:
        if not Path(path).resolve().is_relative_to(expect.resolve()):
            sys.exit(f"error: {path} is imported instead of the code under {expect}")


def run(tree: Path | None, extra: list[str], args, out: Path) -> dict:
    """One `eval-retrieval` run of one side; its JSON report."""
    cmd = [sys.executable, "-m", "gr_neo4j", "eval-retrieval", "-d", args.dataset, "--hops", args.hops,
           "--limit", str(args.limit), "--mode", "paths", "--predict-hops", "--no-ceilings", "--json-out", str(out), *extra]
    done = subprocess.run(cmd, check=False, env=environment(tree), cwd=tree or ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        last = next((line.strip() for line in reversed(done.stderr.splitlines()) if line.strip()), f"exit status {done.returncode}")
        why = last.removeprefix("error: ")
        sys.exit(f"error: {'baseline' if tree else 'ours'} `{' '.join(cmd[2:5])} …` failed: {why}")
    return json.loads(out.read_text(encoding="utf-8"))


def figures(report: dict) -> dict[str, dict]:
    """Per hop: p50 of the total and of each stage, and graph Hit@1, of one run."""
    out = {}
    for hop, fig in report["hops"].items():
        paths = fig["modes"]["paths"]
        out[hop] = {"total_ms": paths["total_ms"]["p50"], "select_ms": paths["select_ms"]["p50"],
                    **{s: fig[s]["p50"] for s in STAGES}, "graph_hit_at_1": paths["graph_hit_at_1"]}
    return out


def summary(runs: dict[str, list[dict]], hops: list[str]) -> dict[str, dict]:
    """Per hop: each side's run p50s, their medians, the ratio ours / baseline and the target."""
    out = {}
    for hop in hops:
        side = {name: [r[hop] for r in rs] for name, rs in runs.items()}
        med = {name: {k: round(statistics.median(f[k] for f in fs), 2) for k in fs[0]} for name, fs in side.items()}
        ratio = round(med["ours"]["total_ms"] / med["baseline"]["total_ms"], 3)
        out[hop] = {"total_ms_runs": {name: [f["total_ms"] for f in fs] for name, fs in side.items()},
                    "median": med, "ratio": ratio, "meets": ratio <= TARGET_RATIO}
    return out


def positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE, help="git revision to compare with")
    ap.add_argument("--dataset", default="metaqa")
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--limit", type=positive, default=300, help="questions per hop (the first, in uid order)")
    ap.add_argument("--rounds", type=positive, default=3)
    ap.add_argument("--out", default=None, help="also write the JSON here")
    args = ap.parse_args()
    hops = args.hops.split(",")
    commit = resolve(args.baseline)
    require_ranker(args.dataset)
    with tempfile.TemporaryDirectory(prefix="gr-neo4j-latency-") as tmp:
        tree = extract(commit, Path(tmp))
        check_imports(tree, tree)
        check_imports(None, ROOT)
        sides = {"baseline": tree, "ours": None}
        rows = {}
        progress = RichProgress(Console(stderr=True)) if sys.stderr.isatty() else NO_PROGRESS
        with progress.phase("eval-retrieval runs", total=len(ROWS) * len(sides) * args.rounds, unit="runs") as advance:
            for row, extra in ROWS.items():
                runs: dict[str, list[dict]] = {"baseline": [], "ours": []}
                for i in range(args.rounds):
                    order = list(sides) if i % 2 == 0 else list(sides)[::-1]
                    for name in order:
                        runs[name].append(figures(run(sides[name], extra, args, Path(tmp) / "run.json")))
                        p50 = " / ".join(f"{runs[name][-1][h]['total_ms']:.0f}" for h in hops)
                        progress.note(f"{row} round {i + 1}/{args.rounds} {name}: p50 total {p50} ms")
                        advance(1)
                rows[row] = summary(runs, hops)
    emit({"dataset": args.dataset, "limit": args.limit, "rounds": args.rounds, "hops": hops,
          "baseline": {"revision": commit, "requested": args.baseline},
          "command": "eval-retrieval --mode paths --predict-hops --no-ceilings (untrained: --no-path-ranker)",
          "target": {"ratio_at_most": TARGET_RATIO}, "rows": rows}, args.out)


if __name__ == "__main__":
    main()
