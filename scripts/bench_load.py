"""Benchmark: loading the full MetaQA KB + all dev questions, vs. a per-row baseline, in one run.

1. From an empty database: `load metaqa` (schema, parse, embed with the configured model, batched
   UNWIND … MERGE writes): wall time, per-phase times, triples per second of the write phase,
   texts embedded, peak RSS of this process and the server's RSS.
2. The same load again (idempotent): wall time; nothing may be embedded or written.
3. Baseline: one transaction per triple (MERGE head, MERGE tail, MERGE relationship, each with its
   vector) on a 5,000-triple slice of the KB, with vectors precomputed, extrapolated to the KB.
4. Vector storage: 5,000 entity rows with `db.create.setNodeVectorProperty` (float32) vs. plain
   `SET n.embedding = …` (float64), rows per second.

Starts its own managed Neo4j in a temporary home on free ports (the distribution is shared through
GR_NEO4J_DIST, default ~/.cache/gr-neo4j/dist) unless NEO4J_URI is set; that database must then be
empty of MetaQA. Prints one JSON document (and writes it to --out).

`--backends torch,onnx` repeats all of it once per embedder backend, each on a fresh managed server,
in one run: the machine's speed drifts from day to day, so a backend's speed-up only shows against
the other backend measured beside it. The write phases, which never touch the embedder, are the
control: they should match between the runs.

    python scripts/bench_load.py [--metaqa DIR] [--backends torch,onnx,onnx-int8] [--baseline-triples 5000]
                                 [--batch-size 5000] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
from benchlib.peak_rss import PeakRss
from benchlib.report import emit

from gr_neo4j.connection import connect
from gr_neo4j.defaults import EmbedderBackend
from gr_neo4j.embedder import load_embedder
from gr_neo4j.ingest import drop_from, get_loader, load_into, stats_of
from gr_neo4j.ingest.records import entity_uid, rel_uid
from gr_neo4j.ingest.source import shared_path
from gr_neo4j.server.process import free_port
from gr_neo4j.settings import load_settings

TARGETS = {"full_load_s": 180, "reload_s": 30, "write_speedup_vs_per_row": 50}

BASELINE_ROW = """
MERGE (h:Entity {uid: $h_uid})
SET h.dataset = $dataset, h.graph = '', h.key = $h, h.text = $h
WITH h CALL db.create.setNodeVectorProperty(h, 'embedding', $h_vec)
MERGE (t:Entity {uid: $t_uid})
SET t.dataset = $dataset, t.graph = '', t.key = $t, t.text = $t
WITH h, t CALL db.create.setNodeVectorProperty(t, 'embedding', $t_vec)
MERGE (h)-[r:REL {uid: $r_uid}]->(t)
SET r.dataset = $dataset, r.graph = '', r.text = $r_text
WITH r CALL db.create.setRelationshipVectorProperty(r, 'embedding', $r_vec)
RETURN count(*) AS written
"""

STORAGE = {
    "setNodeVectorProperty (float32)": "CALL db.create.setNodeVectorProperty(n, 'embedding', $vectors[row.v])",
    "SET list (float64)": "SET n.embedding = $vectors[row.v]",
}




def server_rss_mb(settings) -> float | None:
    if not settings.managed:
        return None
    for proc in psutil.process_iter(["cmdline", "memory_info"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if "CommunityEntryPoint" in cmd and str(settings.home) in cmd:
            return round(proc.info["memory_info"].rss / 2**20, 1)
    return None


def baseline(conn, kb: Path, embedder, n: int) -> dict:
    """One transaction per triple on the first n distinct triples of the KB (vectors precomputed)."""
    triples = list(dict.fromkeys(tuple(line.rstrip("\n").split("|")) for line in kb.open(encoding="utf-8")))[:n]
    texts = list(dict.fromkeys([t for h, r, tl in triples for t in (h, tl, r.replace("_", " "))]))
    vectors = dict(zip(texts, embedder.encode(texts, batch_size=256).tolist()))
    ds = "metaqa_baseline"
    began = time.perf_counter()
    for h, r, t in triples:
        rel = r.replace("_", " ")
        params = {
            "dataset": ds, "h": h, "t": t, "r_text": rel,
            "h_uid": entity_uid(ds, "", h), "t_uid": entity_uid(ds, "", t), "r_uid": rel_uid(ds, "", h, r, t),
            "h_vec": vectors[h], "t_vec": vectors[t], "r_vec": vectors[rel],
        }
        conn.write_tx(lambda tx, p=params: tx.run(BASELINE_ROW, p).consume())
    seconds = time.perf_counter() - began
    conn.run_autocommit("MATCH ()-[r:REL {dataset: $d}]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS", {"d": ds})
    conn.run_autocommit("MATCH (n:Entity {dataset: $d}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS", {"d": ds})
    return {"triples": len(triples), "seconds": round(seconds, 2), "triples_per_s": round(len(triples) / seconds, 1)}


def storage_comparison(conn, dimension: int, n: int = 5000, batch: int = 1000) -> dict:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    out = {}
    for label, setter in STORAGE.items():
        ds = "bench_storage"
        cypher = (
            "UNWIND $rows AS row MERGE (n:Entity {uid: row.uid}) "
            "SET n.dataset = $dataset, n.graph = '', n.key = row.key, n.text = row.key "
            f"WITH n, row {setter} RETURN count(*) AS written"
        )
        rows = [{"uid": entity_uid(ds, "", f"{label} {i}"), "key": f"{label} {i}", "v": i % batch} for i in range(n)]
        began = time.perf_counter()
        for start in range(0, n, batch):
            params = {"dataset": ds, "rows": rows[start : start + batch], "vectors": vectors[start : start + batch].tolist()}
            conn.write_tx(lambda tx, p=params, c=cypher: tx.run(c, p).consume())
        seconds = time.perf_counter() - began
        stored = conn.query("MATCH (n:Entity {uid: $u}) RETURN n.embedding AS e", {"u": rows[0]["uid"]})[0]["e"]
        out[label] = {
            "rows_per_s": round(n / seconds, 1),
            "round_trip_max_abs_error": float(np.max(np.abs(np.asarray(stored, dtype=np.float64) - vectors[0]))),
        }
        conn.run_autocommit("MATCH (n:Entity {dataset: $d}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS", {"d": ds})
    return out


def run(settings, metaqa: Path, batch_size: int, baseline_n: int) -> dict:
    embedder_began = time.perf_counter()
    embedder = load_embedder(settings)
    model_load_s = time.perf_counter() - embedder_began
    spec = get_loader("metaqa")
    with connect(settings) as conn:
        if any(s.name == "metaqa" for s in stats_of(conn)):
            raise SystemExit("the database already has MetaQA: use an empty one (unset NEO4J_URI to get a fresh managed server)")
        load_before = os.getloadavg()
        cpu_before = time.process_time()
        with PeakRss() as rss:
            first = load_into(conn, spec, metaqa, embedder, batch_size=batch_size)
        load_cpu_s = time.process_time() - cpu_before
        again = load_into(conn, spec, metaqa, embedder, batch_size=batch_size)
        server_rss = server_rss_mb(settings)
        base = baseline(conn, metaqa / "kb.txt", embedder, baseline_n)
        storage = storage_comparison(conn, embedder.dimension)
        drop_from(conn, "metaqa")

    write_s = first.phase_seconds.get("write entities", 0) + first.phase_seconds.get("write relationships", 0)
    ours_tps = first.input_relationships / write_s
    return {
        "dataset": "metaqa (kb.txt + {1,2,3}-hop/qa_dev.txt)",
        "embedder_backend": settings.embedder_backend or "default",
        "machine": {
            "cpus": os.cpu_count(),
            # other work on the machine slows every phase: compare wall time with this process's CPU time
            "load_average_before_full_load": [round(x, 2) for x in load_before],
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "embedder": embedder.name,
        "model_load_s": round(model_load_s, 1),
        "full_load": {
            "wall_s": round(first.seconds, 1),
            "phases_s": {k: round(v, 2) for k, v in first.phase_seconds.items()},
            "triples": first.input_relationships,
            "entities": first.input_entities,
            "questions": first.input_questions,
            "texts_embedded": first.texts_embedded,
            "embed_texts_per_s": round(first.texts_embedded / first.phase_seconds["embed"], 1),
            "client_cpu_s": round(load_cpu_s, 1),
            "write_triples_per_s": round(ours_tps, 1),
            "relationship_write_triples_per_s": round(first.write_triples_per_s, 1),
            "peak_rss_mb": round(rss.peak / 2**20, 1),
            "peak_rss_lifetime_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "server_rss_mb": server_rss,
            "batch_size": batch_size,
        },
        "reload": {
            "wall_s": round(again.seconds, 1),
            "phases_s": {k: round(v, 2) for k, v in again.phase_seconds.items()},
            "texts_embedded": again.texts_embedded,
            "written": again.written_entities + again.written_relationships + again.written_questions,
            "counts_unchanged": (again.totals.entities, again.totals.relationships, again.totals.questions)
            == (first.totals.entities, first.totals.relationships, first.totals.questions),
        },
        "per_row_baseline": {
            **base,
            "extrapolated_full_kb_write_s": round(first.input_relationships / base["triples_per_s"], 1),
            "speedup_of_batched_writes": round(ours_tps / base["triples_per_s"], 1),
        },
        "vector_storage_5000_entities": storage,
        "targets": TARGETS,
        "meets": {
            "full_load_s": first.seconds < TARGETS["full_load_s"],
            "reload_s": again.seconds < TARGETS["reload_s"],
            "write_speedup_vs_per_row": ours_tps / base["triples_per_s"] >= TARGETS["write_speedup_vs_per_row"],
        },
    }


def run_managed(metaqa: Path, batch_size: int, baseline_n: int, backend: str | None) -> dict:
    """`run` on a fresh managed server in a temporary home (the distribution shared via GR_NEO4J_DIST)."""
    from gr_neo4j.server import process

    dist = os.environ.get("GR_NEO4J_DIST") or str(Path.home() / ".cache" / "gr-neo4j" / "dist")
    with tempfile.TemporaryDirectory(prefix="bench-load-") as home:
        settings = load_settings(
            home=home, dist_dir=dist, bolt_port=free_port(), http_port=free_port(), heap="2g", pagecache="1g",
            embedder_backend=backend,
        )
        process.start(settings)
        try:
            return run(settings, metaqa, batch_size, baseline_n)
        finally:
            process.stop(settings)


def compare(runs: list[dict]) -> dict:
    """Ratios of the first backend's run to each other one: embedding, full load, and the writes (the control)."""
    first = runs[0]["full_load"]
    out = {}
    for other in runs[1:]:
        o = other["full_load"]
        out[f"{runs[0]['embedder_backend']} / {other['embedder_backend']}"] = {
            "embed_s": round(first["phases_s"]["embed"] / o["phases_s"]["embed"], 2),
            "full_load_s": round(first["wall_s"] / o["wall_s"], 2),
            "write_triples_per_s (control, ~1.0)": round(o["write_triples_per_s"] / first["write_triples_per_s"], 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metaqa", type=Path, default=shared_path("metaqa"), help="MetaQA directory (default: the shared datasets dir)")
    parser.add_argument("--backends", default=None,
                        help="comma-separated embedder backends (torch, onnx, onnx-int8) to run one after another; default: the configured one")
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--baseline-triples", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.metaqa is None or not (args.metaqa / "kb.txt").is_file():
        raise SystemExit("MetaQA not found: pass --metaqa DIR (with kb.txt and {1,2,3}-hop/qa_dev.txt)")
    backends = [b.strip() for b in args.backends.split(",")] if args.backends else [None]
    known = {b.value for b in EmbedderBackend}
    if any(b is not None and b not in known for b in backends):
        raise SystemExit(f"--backends: each must be one of {', '.join(sorted(known))}, got {args.backends!r}")
    if os.environ.get("NEO4J_URI") and len(backends) > 1:
        raise SystemExit("--backends with more than one backend needs fresh managed servers: unset NEO4J_URI")

    if os.environ.get("NEO4J_URI"):
        result = run(load_settings(embedder_backend=backends[0]), args.metaqa, args.batch_size, args.baseline_triples)
    else:
        runs = [run_managed(args.metaqa, args.batch_size, args.baseline_triples, b) for b in backends]
        result = runs[0] if len(runs) == 1 else {"runs": runs, "ratios": compare(runs)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
