"""`eval-retrieval`: how often the retrieved subgraph holds the answer, how big it is, how fast.

For each hop count, every question's candidates are fetched once (expansion depth = the hop count,
the question's TOPIC entities as seeds: :meth:`Retriever.fetch`) and every mode selects from the
same candidates (:meth:`Retriever.choose`): ``paths`` (the default), ``reference`` (G-Retriever
exactly), ``triples`` (PCST over triple scores), ``whole`` (the whole capped k-hop neighbourhood,
no PCST) and ``kaping`` (the top-10 triples). The ceiling is the share of questions with any gold
answer among the candidates at all. The report is plain data; the CLI renders it
(:func:`report_rows` gives the table's rows).
"""

from __future__ import annotations

import numpy as np

from ..defaults import Mode
from ..metrics import percentiles
from ..progress import NO_PROGRESS, Progress
from ..settings import Settings
from .batch import Question, questions_of
from .candidates import DatasetInfo
from .params import RetrievalError, RetrievalParams
from .retriever import Retriever

EVAL_MODES = tuple(Mode)  # every mode, side by side

REPORT_COLUMNS = (
    "hops", "mode", "answer recall", "all answers", "ceiling", "nodes", "edges", "tokens",
    "embed p50/p95", "cypher p50/p95", "select p50/p95", "total p50/p95 ms",
)


def evaluate_retrieval(
    settings: Settings,
    dataset: str,
    hops: list[int],
    limit: int | None = 300,
    split: str | None = None,
    topk: int = 3,
    topk_e: int | None = None,
    cost_e: float = 0.5,
    progress: Progress | None = None,
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
            params = RetrievalParams(hops=h, topk=topk, topk_e=topk_e, cost_e=cost_e)
            report["hops"][str(h)] = evaluate_hop(r, info, qs, params, tokenizer, progress or NO_PROGRESS)
        return report
    finally:
        if own:
            r.close()


def evaluate_hop(r: Retriever, info: DatasetInfo, qs: list[Question], params: RetrievalParams, tokenizer, progress: Progress) -> dict:
    """Figures of one hop count: every question fetched once, every mode chosen from it."""
    stage = {"embed": [], "cypher": [], "candidate_nodes": []}
    per_mode = {m: {"any": 0, "all": 0, "nodes": [], "edges": [], "tokens": [], "select_ms": [], "total_ms": []} for m in EVAL_MODES}
    ceiling = 0
    with progress.phase(f"{params.hops}-hop questions", total=len(qs), unit="questions") as advance:
        for q in qs:
            f = r.fetch(q.text, info.name, params=params, question_uid=q.uid)
            gold = set(q.answer_keys) or set(q.answers)
            ceiling += bool(gold & set(f.candidates.node_keys))
            stage["embed"].append(f.embed_ms)
            stage["cypher"].append(f.fetch_ms)
            stage["candidate_nodes"].append(f.candidates.num_nodes)
            for m in EVAL_MODES:
                res = r.choose(f, m, data=False)
                keys = {n.key for n in res.nodes}
                fig = per_mode[m]
                fig["any"] += bool(gold & keys)
                fig["all"] += bool(gold) and gold <= keys
                fig["nodes"].append(len(res.nodes))
                fig["edges"].append(len(res.edges))
                fig["tokens"].append(len(tokenizer(res.desc, add_special_tokens=False)["input_ids"]))
                fig["select_ms"].append(res.timings.pcst_ms)
                fig["total_ms"].append(res.timings.total_ms)
            advance(1)
    n = len(qs)
    out = {
        "questions": n,
        "ceiling": round(ceiling / n, 4),
        "mean_candidate_nodes": round(float(np.mean(stage["candidate_nodes"])), 1),
        "embed_ms": percentiles(stage["embed"]),
        "cypher_ms": percentiles(stage["cypher"]),
        "modes": {},
    }
    for m, fig in per_mode.items():
        out["modes"][str(m)] = {
            "answer_recall": round(fig["any"] / n, 4),
            "all_answers_recall": round(fig["all"] / n, 4),
            "mean_nodes": round(float(np.mean(fig["nodes"])), 1),
            "mean_edges": round(float(np.mean(fig["edges"])), 1),
            "mean_tokens": round(float(np.mean(fig["tokens"])), 1),
            "select_ms": percentiles(fig["select_ms"]),
            "total_ms": percentiles(fig["total_ms"]),
        }
    return out


def report_rows(report: dict) -> list[tuple[str, ...]]:
    """The report as table rows under :data:`REPORT_COLUMNS`, one per hop count and mode."""
    rows = []
    for h, fig in report["hops"].items():
        for m, f in fig["modes"].items():
            rows.append((
                h, m, f"{f['answer_recall']:.3f}", f"{f['all_answers_recall']:.3f}", f"{fig['ceiling']:.3f}",
                f"{f['mean_nodes']:.1f}", f"{f['mean_edges']:.1f}", f"{f['mean_tokens']:.0f}",
                f"{fig['embed_ms']['p50']}/{fig['embed_ms']['p95']}", f"{fig['cypher_ms']['p50']}/{fig['cypher_ms']['p95']}",
                f"{f['select_ms']['p50']}/{f['select_ms']['p95']}", f"{f['total_ms']['p50']}/{f['total_ms']['p95']}",
            ))
    return rows
