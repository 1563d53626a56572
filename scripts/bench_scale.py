"""Benchmark: gr-neo4j on MetaQA-like knowledge graphs 1x, 10x, 30x MetaQA's size, against the
in-memory pipeline at each size, in one run.

For each scale (``--scales 1,10,30``; 1x is about 43k entities and 129k triples):

1. generate the KB and 1/2/3-hop questions with their answers (``benchlib.metaqa_like``,
   deterministic in ``--seed``) and write them in MetaQA's layout (kb.txt, {k}-hop/qa_dev.txt) to
   a temporary directory;
2. start a Neo4j of its own (temporary GR_NEO4J_HOME, free ports, heap and page cache sized to the
   scale), unless ``--server configured`` uses the configured one (which must hold no MetaQA);
3. load it through the MetaQA loader, in a child process (its peak RSS is the client's): load time
   per phase, write rate;
4. the store size, Neo4j's heap and page cache after the load (``benchlib.server_memory``);
5. in a second child: retrieval of the questions on Neo4j in the ``paths`` and ``reference`` modes
   (p50 / p95, answer recall, nodes), then the in-memory pipeline built from the same database and
   run on the same questions (build time, RSS, p50), and their ratios;
6. stop the server and delete the directory (also on Ctrl-C or an error).

Sizes that do not fit this machine's free memory or disk are reported as skipped, with the
estimate. The embedder: ``--embedder hash`` (the default: a deterministic, *not semantic*
stand-in, the same at every size; recall is then a plumbing figure), ``real`` (the configured
model) or ``auto`` (real up to ``--real-up-to``, hash above); the real model's texts/s is measured
once per run on a sample (``--embedder-sample``), and its embed time extrapolated to each size. Prints one JSON document (also ``--out``); ``--plot``
draws cost against size.

    python scripts/bench_scale.py [--scales 0.01,0.1,1] [--per-hop 100] [--embedder hash] [--out F] [--plot F.png]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from benchlib.metaqa_like import generate, make_questions, write_metaqa
from benchlib.peak_rss import PeakRss
from benchlib.report import emit

from gr_neo4j.server.process import free_port

REPO = Path(__file__).resolve().parents[1]
MODES = ("paths", "reference")
# Measured at 1x and 3x (this script, hash embedder, 2026-12): the store is 4.3-5.7 KB per triple
# (and up to 2 GB of transaction logs). The loading client (parse everything, then write): parsed
# rows about 0.55 KB and vectors 0.5 KB per triple, over about 0.1 GB of imports and 0.2-0.3 GB
# while four entity batches are in flight (430 MB at 1x). Used to refuse a size that would not fit
# before spending an hour on it.
STORE_BYTES_PER_TRIPLE = 5700
TX_LOGS_GB = 2.5
CLIENT_BYTES_PER_TRIPLE = 1100
CLIENT_BASE_GB = 0.4
TRIPLES_1X = 128_683  # what generate(1.0) gives
LOAD_ATTEMPTS = 2  # a load that fails (e.g. a transient Neo4j error under heavy load) is resumed once
WARM_UP = 10  # untimed questions per mode and hop count (the last ones: the timed are all)




def memory_for(scale: float) -> tuple[str, str]:
    """(heap, page cache) for a scale: the heap holds the write batches and the vector index
    builds; the page cache the graph store (node and relationship records, range indexes)."""
    heap = "2g" if scale <= 1 else "3g" if scale <= 10 else "4g"
    cache_mb = int(min(max(512, scale * 300), 8192))  # 1x: 289 MB of page-cached store files
    return heap, f"{cache_mb}m"


def _gb(text: str) -> float:
    return float(text[:-1]) / (1 if text.endswith("g") else 1024)


def fits(scale: float, triples: int, workdir: Path) -> tuple[bool, dict]:
    """Whether a size fits the free memory and disk, with the estimate."""
    heap, cache = memory_for(scale)
    need_mem = _gb(heap) + _gb(cache) + CLIENT_BASE_GB + triples * CLIENT_BYTES_PER_TRIPLE / 2**30
    need_disk = triples * STORE_BYTES_PER_TRIPLE / 2**30 + TX_LOGS_GB
    mem = psutil.virtual_memory().available / 2**30
    disk = shutil.disk_usage(workdir).free / 2**30
    estimate = {"memory_needed_gb": round(need_mem, 1), "memory_available_gb": round(mem, 1),
                "disk_needed_gb": round(need_disk, 1), "disk_free_gb": round(disk, 1)}
    return need_mem < mem * 0.9 and need_disk < disk * 0.9, estimate


# -- the children ---------------------------------------------------------------------------------

def progress():
    from rich.console import Console

    from gr_neo4j.cli.progress import RichProgress

    return RichProgress(Console(stderr=True))


def embedder_for(kind: str, settings):
    if kind == "hash":
        from benchlib.hash_embedder import HashEmbedder

        return HashEmbedder()
    from gr_neo4j.embedder import load_embedder

    return load_embedder(settings)


def child_load(path: Path, embedder_kind: str) -> dict:
    """Load the generated KB through the MetaQA loader; the load's figures and this process's peak RSS."""
    from gr_neo4j.connection import connect
    from gr_neo4j.ingest import get_loader, load_into
    from gr_neo4j.settings import load_settings

    settings = load_settings()
    embedder = embedder_for(embedder_kind, settings)
    with connect(settings) as conn, PeakRss() as rss:
        began = time.perf_counter()
        report = load_into(conn, get_loader("metaqa"), path, embedder, progress=progress())
        wall = time.perf_counter() - began
    write_s = sum(report.phase_seconds.get(k, 0.0) for k in ("write entities", "write relationships"))
    return {
        "wall_s": round(wall, 1),
        "phases_s": {k: round(v, 2) for k, v in report.phase_seconds.items()},
        "entities": report.input_entities,
        "triples": report.input_relationships,
        "questions": report.input_questions,
        "texts_embedded": report.texts_embedded,
        "write_triples_per_s": round(report.input_relationships / write_s, 1) if write_s else None,
        "write_entities_per_s": round(report.input_entities / report.phase_seconds["write entities"], 1),
        "client_peak_rss_mb": round(rss.peak / 2**20, 1),
        "embedder": embedder.name,
    }


def child_retrieve(per_hop: int, embedder_kind: str, modes: list[str]) -> dict:
    """Retrieval on Neo4j, then on the in-memory graph built from it, same questions, same modes."""
    from benchlib.retrieval import build_in_memory, measure_in_memory, measure_neo4j, rss_mb

    from gr_neo4j.retrieval import RetrievalParams, Retriever
    from gr_neo4j.retrieval.batch import questions_of
    from gr_neo4j.settings import load_settings

    settings = load_settings()
    bars = progress()
    out: dict = {"neo4j": {}, "in_memory": {}, "ratio_p50": {}}
    with Retriever(settings, embedder=embedder_for(embedder_kind, settings)) as r:
        info = r.dataset("metaqa")
        r.warm(info.name, 3)
        questions = {h: questions_of(r, info.name, hops=h, limit=per_hop) for h in (1, 2, 3)}
        warm_up(r, info.name, questions, modes, lambda q, p: r.retrieve(q.text, info.name, params=p, question_uid=q.uid))
        before = rss_mb()
        for mode in modes:
            for h, qs in questions.items():
                fig = measure_neo4j(r, info.name, qs, RetrievalParams(mode=mode, hops=h), f"neo4j {mode} {h}-hop", bars)
                out["neo4j"][f"{mode}/{h}"] = fig.to_json()
        out["neo4j_client_rss_mb"] = round(rss_mb(), 1)
        out["neo4j_client_rss_growth_mb"] = round(rss_mb() - before, 1)
        _kg, mem_r, build = build_in_memory(r, info.name)
        out["in_memory_build"] = build.to_json()
        warm_up(mem_r, info.name, questions, modes, lambda q, p: mem_r.retrieve(q.text, info.name, entities=q.topic_keys, params=p))
        for mode in modes:
            for h, qs in questions.items():
                fig = measure_in_memory(mem_r, info.name, qs, RetrievalParams(mode=mode, hops=h), f"in-memory {mode} {h}-hop", bars)
                key = f"{mode}/{h}"
                out["in_memory"][key] = fig.to_json()
                out["ratio_p50"][key] = round(out["neo4j"][key]["total_ms"]["p50"] / fig.stages["total_ms"]["p50"], 2)
        out["in_memory_client_rss_mb"] = round(rss_mb(), 1)
        mem_r.close()
    return out


def warm_up(r, dataset: str, questions: dict, modes: list[str], retrieve, count: int = WARM_UP) -> None:
    """A few untimed retrievals per mode and hop count: a fresh server (and a fresh process)
    compiles its query plans and JIT code on the first questions."""
    from gr_neo4j.retrieval import RetrievalParams

    for mode in modes:
        for h, qs in questions.items():
            for q in qs[-count:]:
                retrieve(q, RetrievalParams(mode=mode, hops=h))


def child_embedder_rate(sample_file: Path) -> dict:
    """The real embedder's texts/s on a sample of entity names (what a load embeds)."""
    from gr_neo4j.embedder import load_embedder
    from gr_neo4j.ingest.embed import embed_distinct
    from gr_neo4j.settings import load_settings

    texts = sample_file.read_text(encoding="utf-8").splitlines()
    embedder = load_embedder(load_settings())
    embedder.encode(["warm up"])
    began = time.perf_counter()
    embed_distinct(embedder, texts)
    seconds = time.perf_counter() - began
    return {"embedder": embedder.name, "texts": len(texts), "seconds": round(seconds, 2), "texts_per_s": round(len(texts) / seconds, 1)}


# -- the orchestration ----------------------------------------------------------------------------

class ChildFailed(RuntimeError):
    """A child ended without its result; the message is its one-line error."""


def run_child(args: list[str], env: dict) -> dict:
    """This script as a child (its own memory); its JSON from stdout. Bars go to stderr."""
    done = subprocess.run([sys.executable, __file__, *args], env=env, stdout=subprocess.PIPE, text=True, check=False)
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        result = {"error": f"exit status {done.returncode}, no result"}
    if done.returncode != 0 or "error" in result:
        raise ChildFailed(f"{args[0].lstrip('_')}: {result.get('error')}")
    return result


def load_resuming(data: Path, kind: str, env: dict) -> dict:
    """The load child, run again after a failure (a load resumes where it stopped) up to
    LOAD_ATTEMPTS times; the failed attempts are kept in the result with their wall time."""
    failed = []
    for _ in range(LOAD_ATTEMPTS):
        began = time.perf_counter()
        try:
            result = run_child(["_load", str(data), kind], env)
        except ChildFailed as exc:
            failed.append({"error": str(exc), "wall_s": round(time.perf_counter() - began, 1)})
            continue
        return {**result, "failed_attempts": failed, "wall_s_all_attempts": round(result["wall_s"] + sum(f["wall_s"] for f in failed), 1)}
    raise ChildFailed(f"load failed {LOAD_ATTEMPTS} times; last: {failed[-1]['error']}")


def child_env(settings, own: bool) -> dict:
    """The children's environment: the configured server as it is, or this size's own server."""
    env = dict(os.environ)
    if own:
        env = {k: v for k, v in env.items() if not k.startswith("NEO4J_")}
        env.update(GR_NEO4J_HOME=str(settings.home), GR_NEO4J_DIST=str(settings.dist_dir), GR_NEO4J_BOLT_PORT=str(settings.bolt_port),
                   GR_NEO4J_HTTP_PORT=str(settings.http_port), GR_NEO4J_HEAP=settings.heap, GR_NEO4J_PAGECACHE=settings.pagecache)
    return env


def embedder_kind(choice: str, scale: float, real_up_to: float) -> str:
    if choice == "auto":
        return "real" if scale <= real_up_to else "hash"
    return choice


def one_size(scale: float, args, workdir: Path, real_rate: float | None) -> dict:
    from benchlib.server_memory import server_memory

    from gr_neo4j.connection import connect
    from gr_neo4j.ingest import drop_from
    from gr_neo4j.server import process
    from gr_neo4j.settings import load_settings

    out: dict = {"scale": scale, "load_average_start": [round(x, 2) for x in os.getloadavg()]}
    began = time.perf_counter()
    # Checked before generating: at 30x the generation alone takes minutes.
    ok, estimate = fits(scale, round(TRIPLES_1X * scale), workdir)
    out["fit_estimate"] = estimate
    if not ok and args.server == "own":
        out["skipped"] = "does not fit this machine's free memory or disk (estimate above)"
        return out
    kg = generate(scale, args.seed)
    qs = make_questions(kg, args.per_hop, args.seed)
    data = write_metaqa(kg, qs, workdir / "metaqa")
    out["generate_s"] = round(time.perf_counter() - began, 1)
    out["generated"] = {"entities": kg.num_entities, "triples": kg.num_triples, "questions": {h: len(v) for h, v in qs.items()}}
    kind = embedder_kind(args.embedder, scale, args.real_up_to)
    out["embedder"] = kind if kind == "real" else "hash (deterministic, not semantic: recall is a plumbing figure)"
    if real_rate:
        out["real_embedder_embed_s_estimate"] = round(kg.num_entities / real_rate, 1)
    del kg

    if args.server == "own":
        heap, cache = memory_for(scale)
        settings = load_settings(home=str(workdir / "home"), dist_dir=os.environ.get("GR_NEO4J_DIST") or str(Path.home() / ".cache" / "gr-neo4j" / "dist"),
                                 bolt_port=free_port(), http_port=free_port(), heap=heap, pagecache=cache)
        out["server_memory_configured"] = {"heap": heap, "pagecache": cache}
        started = time.perf_counter()
        server_pid = process.start(settings).pid
        out["server_start_s"] = round(time.perf_counter() - started, 1)
    else:
        settings = load_settings()
    env = child_env(settings, args.server == "own")
    try:
        out["load"] = load_resuming(data, kind, env)
        with connect(settings) as conn:
            out["after_load"] = server_memory(settings, conn).to_json()
        out["retrieval"] = run_child(["_retrieve", str(args.per_hop), kind, ",".join(args.modes)], env)
        with connect(settings) as conn:
            out["after_retrieval"] = server_memory(settings, conn).to_json()
            if args.server == "configured":
                drop_from(conn, "metaqa")
    finally:
        if args.server == "own":
            out["server_stop"] = stop_server(settings, server_pid)
    out["wall_s"] = round(time.perf_counter() - began, 1)
    out["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def stop_server(settings, pid: int | None, wait_s: float = 180.0) -> str:
    """Stop this size's own server before its directory is removed, and make sure its JVM is gone:
    Neo4j's own stop, then, when that fails (under heavy load it has outlasted the launcher's wait)
    or leaves the process running, SIGTERM and after `wait_s` SIGKILL to the pid recorded at start
    (`pid`) or in the home's pid file, if that process is still this home's server. Returns how it
    ended."""
    from gr_neo4j.errors import ServerError
    from gr_neo4j.home.layout import layout_of
    from gr_neo4j.home.pid import is_server_of, running_pid
    from gr_neo4j.server import process

    layout = layout_of(settings)
    how = "stopped"
    try:
        process.stop(settings)
    except ServerError as exc:
        print(f"neo4j stop failed ({exc}); terminating it", file=sys.stderr)
        how = "failed stop command"
    candidates = {p for p in (pid, running_pid(layout)) if p}
    for candidate in candidates:
        try:
            proc = psutil.Process(candidate)
            ours = is_server_of([a.encode() for a in proc.cmdline()], layout.home)
        except psutil.NoSuchProcess:
            continue
        if not ours:  # the number now belongs to another process
            continue
        proc.terminate()
        try:
            proc.wait(wait_s)
            how += ", then terminated (SIGTERM)"
        except psutil.TimeoutExpired:
            proc.kill()
            proc.wait(30)
            how += ", then killed (SIGKILL)"
    return how


def measure_real_rate(args, workdir: Path) -> dict:
    kg = generate(0.1, args.seed)
    sample = workdir / "embedder-sample.txt"
    sample.write_text("\n".join(kg.names[: args.embedder_sample]) + "\n", encoding="utf-8")
    return run_child(["_embedder", str(sample)], dict(os.environ))


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [s for s in result["sizes"] if "load" in s and "retrieval" in s]
    x = [s["load"]["triples"] for s in sizes]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    ax = axes[0]
    ax.plot(x, [s["load"]["wall_s"] for s in sizes], "o-", label="load (wall)")
    ax.plot(x, [s["retrieval"]["in_memory_build"]["load_s"] for s in sizes], "s--", label="in-memory build")
    ax.set_title("build time (s)")
    ax = axes[1]
    for mode in result["modes"]:
        for h in (1, 3):
            ax.plot(x, [s["retrieval"]["neo4j"][f"{mode}/{h}"]["total_ms"]["p50"] for s in sizes], "o-", label=f"Neo4j {mode} {h}-hop")
            ax.plot(x, [s["retrieval"]["in_memory"][f"{mode}/{h}"]["total_ms"]["p50"] for s in sizes], "s--", label=f"in-memory {mode} {h}-hop")
    ax.set_title("retrieval p50 (ms)")
    ax = axes[2]
    ax.plot(x, [s["after_retrieval"]["store_mb"] or 0 for s in sizes], "o-", label="Neo4j store (MB)")
    ax.plot(x, [s["after_retrieval"]["server_rss_mb"] or 0 for s in sizes], "o-", label="Neo4j RSS (MB)")
    ax.plot(x, [s["retrieval"]["neo4j_client_rss_mb"] for s in sizes], "o-", label="client RSS, Neo4j pipeline (MB)")
    ax.plot(x, [s["retrieval"]["in_memory_client_rss_mb"] for s in sizes], "s--", label="client RSS, in-memory (MB)")
    ax.set_title("memory and disk (MB)")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("triples")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"MetaQA-like KBs at {', '.join(format(s['scale'], 'g') + 'x' for s in sizes)} ({result['machine']['cpus']} CPUs, shared)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def markdown(result: dict) -> str:
    """The README's two tables: cost per size, and retrieval per size, mode and hop count."""
    sizes = [s for s in result["sizes"] if "retrieval" in s]
    lines = [
        "| scale | entities / triples | load (write rate) | store (+ Lucene indexes) | Neo4j heap used / old-gen peak | page cache: configured / cacheable store / off-heap resident est. | client peak RSS, load | in-memory build / RSS growth | wall (load average) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in sizes:
        ld, mem, r = s["load"], s["after_retrieval"], s["retrieval"]
        b = r["in_memory_build"]
        lines.append(
            f"| {s['scale']:g}x | {ld['entities']:,} / {ld['triples']:,} | {ld['wall_s']:,.0f} s ({ld['write_triples_per_s']:,.0f} triples/s) "
            f"| {mem['store_mb']:,.0f} MB ({mem['lucene_indexes_mb']:,.0f} MB) | {mem['heap_used_mb']:,.0f} / {mem['heap_old_gen_peak_mb']:,.0f} MB of {mem['heap_max_mb']:,.0f} "
            f"| {mem['pagecache_configured']} / {mem['page_cached_store_mb']:,.0f} MB / {mem['pagecache_resident_estimate_mb']:,.0f} MB | {ld['client_peak_rss_mb']:,.0f} MB "
            f"| {b['load_s']:,.1f} s / {b['rss_growth_mb']:,.0f} MB | {s['wall_s'] / 60:,.0f} min ({s['load_average_start'][0]:.1f}–{s['load_average_end'][0]:.1f}) |"
        )
    lines += ["", "| scale | mode | hops | Neo4j p50 / p95 | in-memory p50 / p95 | Neo4j ÷ in-memory p50 | answer recall Neo4j / in-memory | mean nodes |", "|---|---|---|---|---|---|---|---|"]
    for s in sizes:
        r = s["retrieval"]
        for key, neo in r["neo4j"].items():
            mem = r["in_memory"][key]
            mode, hops = key.split("/")
            lines.append(
                f"| {s['scale']:g}x | {mode} | {hops} | {neo['total_ms']['p50']:.0f} / {neo['total_ms']['p95']:.0f} ms | {mem['total_ms']['p50']:.0f} / {mem['total_ms']['p95']:.0f} ms "
                f"| {r['ratio_p50'][key]:.2f} | {neo['answer_recall']:.2f} / {mem['answer_recall']:.2f} | {neo['mean_nodes']:.0f} |"
            )
    for s in result["sizes"]:
        if "error" in s:
            lines.append(f"\n{s['scale']:g}x failed: {s['error']}")
        if "skipped" in s:
            lines.append(f"\n{s['scale']:g}x skipped: {s['skipped']} ({s['fit_estimate']})")
    return "\n".join(lines) + "\n"


def merge(runs: list[dict]) -> dict:
    """Several runs' sizes in one document (each size keeps its own run's load averages; the
    runs' other fields are listed under ``runs``)."""
    if len(runs) == 1:
        return runs[0]
    sizes = sorted((s for r in runs for s in r["sizes"]), key=lambda s: s["scale"])
    return {**runs[0], "sizes": sizes, "runs": [{k: v for k, v in r.items() if k != "sizes"} | {"scales": [s["scale"] for s in r["sizes"]]} for r in runs]}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1].startswith("_"):
        which, rest = sys.argv[1], sys.argv[2:]
        try:
            if which == "_load":
                result = child_load(Path(rest[0]), rest[1])
            elif which == "_retrieve":
                result = child_retrieve(int(rest[0]), rest[1], rest[2].split(","))
            else:
                result = child_embedder_rate(Path(rest[0]))
        except Exception as exc:  # noqa: BLE001 -- any failure: one line for the parent, the traceback on stderr
            import traceback

            traceback.print_exc()
            print(json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:500]}"}))
            sys.exit(1)
        print(json.dumps(result))
        return

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="0.01,0.1,1", help="comma-separated multiples of MetaQA's size")
    ap.add_argument("--per-hop", type=int, default=100, help="questions per hop count (1, 2, 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embedder", choices=("auto", "real", "hash"), default="hash",
                    help="hash: deterministic, not semantic (the same at every size); real: the configured model; auto: real up to --real-up-to")
    ap.add_argument("--real-up-to", type=float, default=1.0, help="with --embedder auto: the largest scale embedded with the real model")
    ap.add_argument("--embedder-sample", type=int, default=2000, help="names embedded to measure the real model's texts/s (0: skip)")
    ap.add_argument("--modes", default=",".join(MODES), help="retrieval modes to measure")
    ap.add_argument("--server", choices=("own", "configured"), default="own",
                    help="own: a fresh Neo4j per size in a temporary home; configured: the configured server (must hold no MetaQA)")
    ap.add_argument("--workdir", type=Path, default=None, help="where the temporary directories go (default: the system's)")
    ap.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    ap.add_argument("--plot", type=Path, default=None, help="draw cost against size into this PNG")
    ap.add_argument("--markdown", type=Path, default=None, help="write the README's tables here")
    ap.add_argument("--render", type=Path, nargs="+", default=None,
                    help="only draw --plot and --markdown (and write --out) from the JSON of earlier runs, their sizes together")
    args = ap.parse_args()
    if args.render:
        result = merge([json.loads(p.read_text()) for p in args.render])
        if args.out:
            args.out.write_text(json.dumps(result, indent=2) + "\n")
        if args.plot:
            plot(result, args.plot)
        if args.markdown:
            args.markdown.write_text(markdown(result))
        return
    # A terminated run cleans up as an interrupted one: servers stopped, directories removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.modes = args.modes.split(",")
    scales = [float(s) for s in args.scales.split(",")]

    result: dict = {
        "machine": {"cpus": os.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30, 1)},
        "seed": args.seed, "per_hop": args.per_hop, "modes": args.modes, "sizes": [],
    }
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-scale-", dir=args.workdir) as tmp:
        real = None
        if args.embedder_sample:
            real = measure_real_rate(args, Path(tmp))
            result["real_embedder"] = real
        for scale in scales:
            workdir = Path(tmp) / f"scale-{scale:g}"
            workdir.mkdir()
            try:
                result["sizes"].append(one_size(scale, args, workdir, real and real["texts_per_s"]))
            except ChildFailed as exc:  # reported, and the next size still runs
                result["sizes"].append({"scale": scale, "error": str(exc), "load_average_end": [round(x, 2) for x in os.getloadavg()]})
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
            print(json.dumps(result["sizes"][-1]), file=sys.stderr)
    result["wall_s"] = round(time.perf_counter() - began, 1)
    result["sizes"].sort(key=lambda size: size["scale"])  # the largest may be run first, to be sure of it
    emit(result, args.out)
    if args.plot:
        plot(result, args.plot)
    if args.markdown:
        args.markdown.write_text(markdown(result))


if __name__ == "__main__":
    main()
