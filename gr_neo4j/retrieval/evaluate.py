"""`eval-retrieval`: how often the retrieved subgraph holds the answer, how big it is, how fast.

For each hop count, every question's candidates are fetched once (expansion depth = the hop count,
the question's TOPIC entities as seeds) and every mode selects from the same candidates:
``paths`` (the default), ``reference`` (G-Retriever exactly), ``triples`` (PCST over triple scores), ``whole`` (the whole capped k-hop
neighbourhood, no PCST) and ``kaping`` (the top-10 triples). The ceiling is the share of questions
with any gold answer among the candidates at all.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from rich.console import Console
from rich.table import Table

from ..settings import Settings
from .batch import progress_bar, questions_of
from .modes import MODES, score, select
from .retriever import RetrievalError, RetrievalParams, Retriever, build_result

EVAL_MODES = ("paths", "reference", "triples", "whole", "kaping")
assert set(EVAL_MODES) <= set(MODES)


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"p50": None, "p95": None}
    return {"p50": round(float(np.percentile(values, 50)), 2), "p95": round(float(np.percentile(values, 95)), 2)}


def evaluate_retrieval(
    settings: Settings,
    dataset: str,
    hops: list[int],
    limit: int | None = 300,
    split: str | None = None,
    topk: int = 3,
    topk_e: int | None = None,
    cost_e: float = 0.5,
    console: Console | None = None,
    retriever: Retriever | None = None,
) -> dict:
    """Figures per hop count and mode (see module doc), as a JSON-ready dict."""
    own = retriever is None
    r = retriever or Retriever(settings)
    try:
        info = r.dataset(dataset)
        if info.kind != "knowledge-graph":
            raise RetrievalError(f"eval-retrieval needs a knowledge-graph dataset; '{dataset}' is {info.kind}")
        tokenizer = r.embedder.model.tokenizer
        r.warm(info.name, max(hops, default=0))
        report = {"dataset": info.name, "embedder": r.embedder.name, "limit": limit, "split": split, "hops": {}}
        for h in hops:
            qs = questions_of(r, info.name, split, hops=h, limit=limit)
            if not qs:
                raise RetrievalError(f"dataset '{dataset}' has no questions with hops = {h}")
            params = RetrievalParams(hops=h, topk=topk, topk_e=topk_e, cost_e=cost_e).resolved(info.name, info.kind)
            report["hops"][str(h)] = evaluate_hop(r, info, qs, params, tokenizer, console)
        return report
    finally:
        if own:
            r.close()


def evaluate_hop(r: Retriever, info, qs, params: RetrievalParams, tokenizer, console) -> dict:
    stage = {"embed": [], "cypher": [], "candidate_nodes": []}
    per_mode = {m: {"any": 0, "all": 0, "nodes": [], "edges": [], "tokens": [], "select_ms": [], "total_ms": []} for m in EVAL_MODES}
    ceiling = 0
    with progress_bar(console) as bar:
        task = bar.add_task(f"{params.hops}-hop questions", total=len(qs))
        for q in qs:
            t0 = time.perf_counter()
            vec = r.embed([q.text])[0]
            t1 = time.perf_counter()
            c = r.candidates(info, vec, params, None, (), q.uid)
            t2 = time.perf_counter()
            gold = set(q.answer_keys) or set(q.answers)
            ceiling += bool(gold & set(c.node_keys))
            stage["embed"].append(1000 * (t1 - t0))
            stage["cypher"].append(1000 * (t2 - t1))
            stage["candidate_nodes"].append(c.num_nodes)
            s = score(c, vec)
            for m in EVAL_MODES:
                t3 = time.perf_counter()
                nodes, edges = select(m, c, s, params, r.paths)
                res = build_result(q.text, info.name, None, replace(params, mode=m), c, s, nodes, edges)
                t4 = time.perf_counter()
                keys = {n.key for n in res.nodes}
                f = per_mode[m]
                f["any"] += bool(gold & keys)
                f["all"] += bool(gold) and gold <= keys
                f["nodes"].append(len(res.nodes))
                f["edges"].append(len(res.edges))
                f["tokens"].append(len(tokenizer(res.desc, add_special_tokens=False)["input_ids"]))
                f["select_ms"].append(1000 * (t4 - t3))
                f["total_ms"].append(1000 * (t2 - t0) + 1000 * (t4 - t3))
            bar.advance(task)
    n = len(qs)
    out = {
        "questions": n,
        "ceiling": round(ceiling / n, 4),
        "mean_candidate_nodes": round(float(np.mean(stage["candidate_nodes"])), 1),
        "embed_ms": percentiles(stage["embed"]),
        "cypher_ms": percentiles(stage["cypher"]),
        "modes": {},
    }
    for m, f in per_mode.items():
        out["modes"][m] = {
            "answer_recall": round(f["any"] / n, 4),
            "all_answers_recall": round(f["all"] / n, 4),
            "mean_nodes": round(float(np.mean(f["nodes"])), 1),
            "mean_edges": round(float(np.mean(f["edges"])), 1),
            "mean_tokens": round(float(np.mean(f["tokens"])), 1),
            "select_ms": percentiles(f["select_ms"]),
            "total_ms": percentiles(f["total_ms"]),
        }
    return out


def report_table(report: dict) -> Table:
    t = Table(title=f"Retrieval on {report['dataset']} (embedder {report['embedder']})", title_justify="left")
    for col in ("hops", "mode", "answer recall", "all answers", "ceiling", "nodes", "edges", "tokens", "embed p50/p95", "cypher p50/p95", "select p50/p95", "total p50/p95 ms"):
        t.add_column(col, justify="right" if col not in ("mode",) else "left")
    for h, fig in report["hops"].items():
        for m, f in fig["modes"].items():
            t.add_row(
                h, m, f"{f['answer_recall']:.3f}", f"{f['all_answers_recall']:.3f}", f"{fig['ceiling']:.3f}",
                f"{f['mean_nodes']:.1f}", f"{f['mean_edges']:.1f}", f"{f['mean_tokens']:.0f}",
                f"{fig['embed_ms']['p50']}/{fig['embed_ms']['p95']}", f"{fig['cypher_ms']['p50']}/{fig['cypher_ms']['p95']}",
                f"{f['select_ms']['p50']}/{f['select_ms']['p95']}", f"{f['total_ms']['p50']}/{f['total_ms']['p95']}",
            )
    return t
