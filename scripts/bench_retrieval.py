"""Benchmark: `ask`-style retrieval on Neo4j vs. the same pipeline over the whole KG held in Python.

Needs MetaQA loaded into the configured Neo4j (`gr-neo4j load metaqa`). For each hop count, the
first N questions (uid order) are retrieved twice with the default mode and the same parameters:

* neo4j:     embed the question; one read round trip for the capped k-hop candidates (texts, ids,
             node similarities); selection in-process; a small read for the chosen nodes'
             embeddings (what `gr-neo4j ask` does);
* in-memory: the whole KG (entity embeddings, relation texts, CSR adjacency) read once into numpy;
             the same seeds, expansion rules and caps; the same `Retriever.retrieve` with the
             in-memory graph as its candidate source (so the same similarity, selection and text).

Prints one JSON document: p50/p95 per stage, answer recall, subgraph size, the in-memory
pipeline's load time and memory, the ceiling (share of questions with a gold answer within k hops
at all, uncapped), and the targets.

    python scripts/bench_retrieval.py [--per-hop 300] [--hops 1,2,3] [--dataset metaqa] [--out FILE]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from benchlib.report import emit
from benchlib.retrieval import build_in_memory, measure_in_memory, measure_neo4j, rss_mb

from gr_neo4j.defaults import Mode
from gr_neo4j.retrieval import RetrievalParams, Retriever
from gr_neo4j.retrieval.batch import questions_of
from gr_neo4j.retrieval.inmemory import InMemoryKG
from gr_neo4j.settings import load_settings

RECALL_TARGETS = {1: 0.95, 2: 0.90, 3: 0.80}


def within_hops(kg: InMemoryKG, start: list[int], hops: int) -> set[int]:
    """Every entity at most `hops` hops from `start`, without any cap (for the ceiling)."""
    seen = np.zeros(len(kg.keys), dtype=bool)
    frontier = np.asarray(start, dtype=np.int64)
    seen[frontier] = True
    for _ in range(hops):
        if len(frontier) == 0:
            break
        starts, stops = kg.indptr[frontier], kg.indptr[frontier + 1]
        edges = kg.incident[np.concatenate([np.arange(a, b) for a, b in zip(starts, stops)])] if len(frontier) else np.zeros(0, np.int64)
        ends = np.unique(np.concatenate([kg.heads[edges], kg.tails[edges]]))
        frontier = ends[~seen[ends]]
        seen[frontier] = True
    return set(np.flatnonzero(seen).tolist())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="metaqa")
    ap.add_argument("--per-hop", type=int, default=300)
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--mode", default=None, choices=list(Mode), help="selection mode (default: the dataset's default)")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    args = ap.parse_args()
    hops_list = [int(h) for h in args.hops.split(",")]
    settings = load_settings()
    out: dict = {"dataset": args.dataset, "per_hop": args.per_hop, "cpu_count": os.cpu_count(), "hops": {}}

    with Retriever(settings) as r:
        info = r.dataset(args.dataset)
        out["embedder"] = r.embedder.name
        r.warm(info.name, max(hops_list))  # the model, the session, the relation vocabulary, the path texts
        questions = {h: questions_of(r, info.name, hops=h, limit=args.per_hop) for h in hops_list}
        rss_before = rss_mb()

        neo = {h: measure_neo4j(r, info.name, qs, RetrievalParams(mode=args.mode, hops=h)).to_json() for h, qs in questions.items()}
        neo_rss = rss_mb()

        kg, mem_r, build = build_in_memory(r, info.name)
        mem = build.to_json()
        index = {k: i for i, k in enumerate(kg.keys)}
        for h, qs in questions.items():
            inmem = measure_in_memory(mem_r, info.name, qs, RetrievalParams(mode=args.mode, hops=h)).to_json()
            del inmem["mode"]
            ceiling = 0
            for q in qs:
                reach = within_hops(kg, [index[k] for k in q.topic_keys if k in index], h)
                ceiling += bool({index[a] for a in q.answer_keys if a in index} & reach)
            n = len(qs)
            ratio = neo[h]["total_ms"]["p50"] / inmem["total_ms"]["p50"]
            out["hops"][str(h)] = {
                "questions": n,
                "ceiling": round(ceiling / n, 4),
                "neo4j": neo[h],
                "in_memory": inmem,
                "neo4j_over_in_memory_p50": round(ratio, 2),
                "targets": {
                    "p50_within_1.5x_in_memory": ratio <= 1.5,
                    "p50_under_100ms": neo[h]["total_ms"]["p50"] < 100,
                    f"recall_at_least_{RECALL_TARGETS.get(h)}": neo[h]["answer_recall"] >= RECALL_TARGETS.get(h, 0),
                    "under_40_nodes": neo[h]["mean_nodes"] < 40,
                },
            }
        mem_r.close()  # its own read session only: the connection is r's
        out["in_memory"] = mem
        out["neo4j_client_rss_mb"] = round(neo_rss, 1)
        out["neo4j_client_rss_growth_mb"] = round(neo_rss - rss_before, 1)
    emit(out, args.out)


if __name__ == "__main__":
    main()
