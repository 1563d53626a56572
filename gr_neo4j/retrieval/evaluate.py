"""`eval-retrieval`: how often the retrieved subgraph holds the answers, how big it is, how fast.

Questions are asked **as a person types them**: MetaQA's brackets around the topic entity are
removed and the stored TOPIC links are not used, so the entity linker (:mod:`.linking`) finds the
topic entities, and its precision and recall against the TOPIC links are reported. With
``oracle_topic`` the stored topic entities are given instead (the bracketed text, as before linking
existed): the upper bound of the selection alone.

For each hop count, every question's candidates are fetched once (expansion depth = the hop count:
:meth:`Retriever.fetch`) and every mode selects from the same candidates (:meth:`Retriever.choose`):
``paths`` (the default), ``reference`` (G-Retriever exactly), ``triples`` (PCST over triple
scores), ``whole`` (the whole capped k-hop neighbourhood, no PCST) and ``kaping`` (the top-10
triples). Per mode: answer recall (any gold answer in the subgraph), all-answers recall (every gold
answer in it), size and latency, and for ``paths`` the Hit@1 and answer-set F1 of the selection's own
answers (what ``ask`` answers by default). The ceiling is the share of questions with any gold
answer among the candidates at all. The report is plain data; the CLI renders it (:func:`report_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..defaults import Mode
from ..errors import NotFound, UsageError
from ..metrics import SEPARATOR, answer_set_scores, percentiles
from ..progress import NO_PROGRESS, Progress
from ..settings import Settings
from .batch import Question, questions_of, spread
from .candidates import DatasetInfo
from .ceiling import path_ceiling
from .linking import unbracketed
from .params import RetrievalParams
from .retriever import Retriever, borrowed

EVAL_MODES = tuple(Mode)  # every mode, side by side

REPORT_COLUMNS = (
    "hops", "mode", "answer recall", "all answers", "ceiling", "graph Hit@1", "graph answer F1", "not in graph", "depth right", "nodes", "edges", "tokens",
    "embed p50/p95", "link p50/p95", "cypher p50/p95", "complete p50/p95", "select p50/p95", "total p50/p95 ms",
)
CEILING_COLUMNS = ("hops", "any answer among candidates", "all answers among one path's ends", "all answers = one path's ends")
LINKING_COLUMNS = ("hops", "topic recall", "linking precision", "linking recall", "no link", "link p50/p95 ms")


def evaluate_retrieval(
    settings: Settings,
    dataset: str,
    hops: list[int],
    limit: int | None = 300,
    split: str | None = None,
    topk: int = 3,
    topk_e: int | None = None,
    cost_e: float = 0.5,
    oracle_topic: bool = False,
    modes: Sequence[Mode | str] = EVAL_MODES,
    params: RetrievalParams | None = None,
    progress: Progress | None = None,
    retriever: Retriever | None = None,
    ceilings: bool = True,
    predict_hops: bool = False,
    untrained: bool = False,
    spread_after: int | None = None,
) -> dict:
    """Figures per hop count and mode (see module doc), as a JSON-ready dict. ``params`` (its
    ``hops`` is replaced by each hop count) overrides ``topk``, ``topk_e`` and ``cost_e``;
    ``ceilings``: also the all-answers path ceilings (:mod:`.ceiling`, one more read per question);
    ``predict_hops``: walk as deep as the dataset's hop model predicts for each question, as
    ``ask`` does by default, instead of its tagged hop count (the report adds the share predicted
    right); ``spread_after``: instead of the first ``limit`` questions per hop count, ``limit``
    spread evenly over those after the first ``spread_after`` (uid order groups templates)."""
    modes = tuple(Mode(m) for m in modes)
    if not modes:
        raise UsageError("no retrieval mode to evaluate")
    with borrowed(settings, retriever) as r:
        info = r.knowledge_graph(dataset, "eval-retrieval")
        r.warm(info.name, max(hops, default=0))
        base = params or RetrievalParams(topk=topk, topk_e=topk_e, cost_e=cost_e)
        report = {
            "dataset": info.name, "embedder": r.embedder.name, "limit": limit, "split": split,
            "questions": "oracle topic" if oracle_topic else "as typed", "parameters": base.to_json(),
            "depth": "predicted" if predict_hops else "hop count", "spread_after": spread_after, "hops": {},
        }
        for h in hops:
            if spread_after is None:
                qs = questions_of(r, info.name, split, hops=h, limit=limit)
            else:
                qs = questions_of(r, info.name, split, hops=h, skip=spread_after)
                qs = spread(qs, limit) if limit else qs
            if not qs:
                after = f" after the first {spread_after}" if spread_after else ""
                raise NotFound(f"dataset '{dataset}' has no questions with hops = {h}{after}")
            p = replace(base, hops=None if predict_hops else h)
            fig = evaluate_hop(r, info, qs, p, progress or NO_PROGRESS, oracle_topic, modes, h)
            if untrained:
                zero_shot = replace(base, hops=None, path_ranker=False, mode=Mode.PATHS)
                fig["untrained"] = evaluate_hop(r, info, qs, zero_shot, progress or NO_PROGRESS, oracle_topic, (Mode.PATHS,), h)
            fig["path_ceiling"] = path_ceiling(r.conn, [q.uid for q in qs], h).to_json() if ceilings else None
            report["hops"][str(h)] = fig
        return report


def evaluate_hop(
    r: Retriever,
    info: DatasetInfo,
    qs: list[Question],
    params: RetrievalParams,
    progress: Progress,
    oracle_topic: bool = False,
    modes: Sequence[Mode] = EVAL_MODES,
    hops: int | None = None,
) -> dict:
    """Figures of one hop count (``hops``, default ``params.hops``): every question fetched once,
    every mode chosen from it."""
    hops = params.hops if hops is None else hops
    stage = {"embed": [], "link": [], "cypher": [], "candidate_nodes": []}
    per_mode = {m: {"any": 0, "all": 0, "hit1": 0, "f1": 0.0, "answered": 0, "abstained": 0, "nodes": [], "edges": [], "tokens": [], "complete_ms": [], "select_ms": [],
                    "total_ms": []} for m in modes}
    link = {"true": 0, "linked": 0, "gold": 0, "found": 0, "none": 0}
    ceiling = 0
    depth_right = []
    with progress.phase(f"{hops}-hop questions", total=len(qs), unit="questions") as advance:
        for q in qs:
            if oracle_topic:
                f = r.fetch(q.text, info.name, params=params, question_uid=q.uid)
            else:
                f = r.fetch(unbracketed(q.text), info.name, params=params)
                gold_topics, linked = set(q.topic_keys), {x.key for x in f.linked}
                link["true"] += len(gold_topics & linked)
                link["linked"] += len(linked)
                link["gold"] += len(gold_topics)
                link["found"] += gold_topics <= linked
                link["none"] += not linked
            if params.hops is None and not f.read_depth:
                depth_right.append(f.params.hops == hops)
            gold = set(q.answer_keys) or set(q.answers)
            ceiling += bool(gold & set(f.candidates.node_keys))
            stage["embed"].append(f.embed_ms)
            stage["link"].append(f.link_ms)
            stage["cypher"].append(f.fetch_ms - f.link_ms)
            stage["candidate_nodes"].append(f.candidates.num_nodes)
            for m in modes:
                res = r.choose(f, m, data=False)
                keys = {n.key for n in res.nodes}
                fig = per_mode[m]
                if f.read_depth and m is Mode.PATHS:
                    depth_right.append(res.depth == hops)  # the zero-shot depth: the best path's
                fig["abstained"] += res.not_in_graph is not None
                fig["any"] += bool(gold & keys)
                fig["all"] += bool(gold) and gold <= keys
                if res.graph_answers:
                    said = [res.nodes[i] for i in res.graph_answers]
                    fig["answered"] += 1
                    fig["hit1"] += said[0].key in gold
                    fig["f1"] += answer_set_scores(SEPARATOR.join(n.text for n in said), q.answers)[2]
                fig["nodes"].append(len(res.nodes))
                fig["edges"].append(len(res.edges))
                fig["tokens"].append(r.embedder.count_tokens(res.desc))
                fig["complete_ms"].append(res.timings.complete_ms)
                fig["select_ms"].append(res.timings.pcst_ms)
                fig["total_ms"].append(res.timings.total_ms)
            advance(1)
    n = len(qs)
    out = {
        "questions": n,
        "ceiling": round(ceiling / n, 4),
        "mean_candidate_nodes": round(float(np.mean(stage["candidate_nodes"])), 1),
        "embed_ms": percentiles(stage["embed"]),
        "link_ms": percentiles(stage["link"]),
        "cypher_ms": percentiles(stage["cypher"]),
        "linking": None if oracle_topic else {
            "topic_recall": round(link["found"] / n, 4),
            "precision": round(link["true"] / max(link["linked"], 1), 4),
            "recall": round(link["true"] / max(link["gold"], 1), 4),
            "nothing_linked": round(link["none"] / n, 4),
        },
        # with the depth predicted (hop model) or read (zero-shot best path): the share right
        "depth_right": round(float(np.mean(depth_right)), 4) if depth_right else None,
        "modes": {},
    }
    for m, fig in per_mode.items():
        out["modes"][str(m)] = {
            "answer_recall": round(fig["any"] / n, 4),
            "all_answers_recall": round(fig["all"] / n, 4),
            # the selection's own answers (paths): Hit@1 of the first, answer-set F1; None in other modes
            "graph_hit_at_1": round(fig["hit1"] / n, 4) if fig["answered"] else None,
            "graph_answer_f1": round(fig["f1"] / n, 4) if fig["answered"] else None,
            # said "not in the graph" (answer null): these questions all have answers in the graph
            "not_in_graph": round(fig["abstained"] / n, 4),
            "mean_nodes": round(float(np.mean(fig["nodes"])), 1),
            "mean_edges": round(float(np.mean(fig["edges"])), 1),
            "mean_tokens": round(float(np.mean(fig["tokens"])), 1),
            "complete_ms": percentiles(fig["complete_ms"]),
            "select_ms": percentiles(fig["select_ms"]),
            "total_ms": percentiles(fig["total_ms"]),
        }
    return out


def _opt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _p(fig: dict) -> str:
    return f"{fig['p50']}/{fig['p95']}"


def report_rows(report: dict) -> list[tuple[str, ...]]:
    """The report as table rows under :data:`REPORT_COLUMNS`, one per hop count and mode."""
    rows = []
    for h, top in report["hops"].items():
        for fig, label in ((top, ""), (top.get("untrained"), ", untrained")):
            if fig is None:
                continue
            for m, f in fig["modes"].items():
                rows.append(_mode_row(h, m + label, fig, f))
    return rows


def _mode_row(h: str, label: str, fig: dict, f: dict) -> tuple[str, ...]:
    """One row under :data:`REPORT_COLUMNS`; the depth is the paths mode's (when it was predicted or read)."""
    depth = _opt(fig.get("depth_right")) if label.startswith(str(Mode.PATHS)) else "-"
    return (
        h, label, f"{f['answer_recall']:.3f}", f"{f['all_answers_recall']:.3f}", f"{fig['ceiling']:.3f}",
        _opt(f.get("graph_hit_at_1")), _opt(f.get("graph_answer_f1")), _opt(f.get("not_in_graph")), depth,
        f"{f['mean_nodes']:.1f}", f"{f['mean_edges']:.1f}", f"{f['mean_tokens']:.0f}",
        _p(fig["embed_ms"]), _p(fig["link_ms"]), _p(fig["cypher_ms"]), _p(f["complete_ms"]), _p(f["select_ms"]), _p(f["total_ms"]),
    )


def ceiling_rows(report: dict) -> list[tuple[str, ...]]:
    """Ceilings under :data:`CEILING_COLUMNS`, one row per hop count (none when not computed)."""
    rows = []
    for h, fig in report["hops"].items():
        c = fig.get("path_ceiling")
        if c is not None:
            rows.append((h, f"{fig['ceiling']:.3f}", f"{c['covered']:.3f}", f"{c['exact']:.3f}"))
    return rows


def linking_rows(report: dict) -> list[tuple[str, ...]]:
    """Linking figures under :data:`LINKING_COLUMNS`, one row per hop count (none with the oracle)."""
    rows = []
    for h, fig in report["hops"].items():
        k = fig["linking"]
        if k is not None:
            rows.append((h, f"{k['topic_recall']:.3f}", f"{k['precision']:.3f}", f"{k['recall']:.3f}", f"{k['nothing_linked']:.3f}", _p(fig["link_ms"])))
    return rows
