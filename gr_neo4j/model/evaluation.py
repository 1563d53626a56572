"""Evaluation of a checkpoint on one split, or on any samples file from ``gr-neo4j retrieve``:
predictions as JSON lines plus the paper's metrics and, on knowledge-graph QA, answer-set
precision / recall / F1 and the exact share of answers naming something outside the subgraph,
overall and per hop count (MetaQA).

A checkpoint with a node head (objective node or joint) also gets the head's figures: Hit@1 of its
best node and answer-set precision / recall / F1 of its answers (the nodes above 0.5 probability,
else the best one), overall and per hop. A node-only checkpoint is evaluated without any LLM: its
answers are the head's."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..atomic import atomic_path
from ..defaults import Decoding, Objective
from ..errors import CheckpointMismatch, MissingInput, NotFound, UsageError
from ..metrics import answer_set_scores, hallucinated, hit_at_1, hop_group, is_correct, names_outside, score
from ..progress import NO_PROGRESS, Progress
from ..samples import SubgraphSample, load_samples
from .answer_head import NodeModel, fill_question_vectors, head_answer
from .checkpoint import answer, load_checkpoint, load_label_model, load_node_model, read_config, write_json
from .config import ModelConfig, TrainConfig
from .datasets import SPLITS, load_split

ANSWERED_BY = {Objective.NODE: "node head", Objective.LABEL: "label classifier"}  # else the LLM


@dataclass
class EvalResult:
    dataset: str
    split: str
    metric: str  # 'hit@1' or 'accuracy'
    value: float
    correct: int
    total: int
    hallucination_rate: float | None  # knowledge-graph QA only, see gr_neo4j.metrics
    samples_per_s: float  # generation throughput
    predictions: Path  # JSON lines: id, question, label, prediction, correct, hallucinated, outside, f1
    metrics: Path  # this result as JSON
    # Knowledge-graph QA only (None elsewhere): answer-set figures and the exact outside share.
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    outside_rate: float | None = None
    by_hop: dict[str, dict] | None = None  # hop group -> Scores.to_json() (+ "head"), when there are several
    decoding: str = Decoding.AUTO.value
    answered_by: str = "llm"  # or what answered instead of an LLM (ANSWERED_BY)
    head: dict | None = None  # the node head's figures (head_figures), where the checkpoint has one

    def to_json(self) -> dict:
        """The fields, paths as text (the metrics file, `gr-neo4j eval --json`)."""
        return {**asdict(self), "predictions": str(self.predictions), "metrics": str(self.metrics)}


def head_figures(tops: Sequence[str], answers: Sequence[str], golds: Sequence[str]) -> dict:
    """Hit@1 of the head's best nodes ``tops`` and answer-set precision / recall / F1 of its
    ``answers`` (``a|b``), with :mod:`gr_neo4j.metrics`' definitions."""
    n = len(golds)
    hits = sum(hit_at_1(t, g) for t, g in zip(tops, golds) if t)
    sets = [answer_set_scores(a, g) for a, g in zip(answers, golds)]
    means = [round(sum(x[k] for x in sets) / n, 4) if n else 0.0 for k in range(3)]
    return {"hit@1": round(hits / n, 4) if n else 0.0, "correct": hits, "precision": means[0], "recall": means[1],
            "f1": means[2], "total": n}


def head_answers(scorer, samples: Sequence[SubgraphSample], batch_size: int) -> tuple[list[str], list[str]]:
    """(best node text, answer) of the node head ``scorer`` (a NodeModel) per sample."""
    tops, answers = [], []
    for i in range(0, len(samples), batch_size):
        batch = samples[i:i + batch_size]
        for s, probs in zip(batch, scorer.score(batch)):
            top, ans = head_answer(probs, s.node_texts)
            tops.append(top)
            answers.append(ans)
    return tops, answers


def evaluate(checkpoint_dir: str | Path, split: str = "test", *, samples: str | Path | None = None, settings=None, llm=None,
             batch_size: int = 16, limit: int | None = None, progress: Progress | None = None,
             decoding: Decoding | str = Decoding.AUTO, embedder=None) -> EvalResult:
    """Answer every sample of ``split`` (or of the ``samples`` file) with the checkpoint's model and
    score the answers.

    Without ``samples`` they are rebuilt from the checkpoint's training configuration (same source,
    same seed, same split); with it, every sample of that file is answered and the outputs are
    named after it (``predictions-<file stem>.jsonl``). ``limit`` answers only the first samples;
    ``progress`` is told one phase, "answering", counted in samples; ``decoding`` (auto: held to
    the node texts on knowledge graphs and to the labels on ExplaGraphs, :mod:`.constrained`).
    With a node head, ``embedder`` embeds the questions of samples without a vector (else the
    configured embedder); objective node loads no LLM.
    """
    checkpoint_dir = Path(checkpoint_dir)
    saved = read_config(checkpoint_dir)
    tcfg = TrainConfig.from_dict(saved["train"])
    mcfg = ModelConfig.from_dict(saved["model"])
    if samples is not None:
        split = Path(samples).stem
        chosen = load_samples(samples)[:limit]
        if not chosen:
            raise MissingInput(f"{samples}: holds no samples")
        other = {s.dataset for s in chosen if s.dataset and s.dataset != tcfg.dataset}
        if other:
            raise CheckpointMismatch(f"{samples}: samples of {', '.join(sorted(other))}, but the checkpoint was trained on {tcfg.dataset}")
        samples = chosen
    else:
        if split not in SPLITS:
            raise UsageError(f"unknown split {split!r} (choose from {', '.join(SPLITS)})")
        samples = load_split(tcfg.dataset, split, retrieved=tcfg.retrieved, tsv=tcfg.tsv, settings=settings,
                             seed=tcfg.seed, limit=limit if limit is not None else tcfg.limit)
        if not samples:
            raise NotFound(f"split {split!r} of {tcfg.dataset} is empty")
    tops: list[str] = []
    head_preds: list[str] = []
    if mcfg.has_head:
        fill_question_vectors(samples, settings, embedder)
    started = time.perf_counter()
    predictions: list[str] = []
    if mcfg.objective == Objective.NODE:
        with (progress or NO_PROGRESS).phase("scoring nodes", total=None, unit="samples"):
            tops, head_preds = head_answers(load_node_model(checkpoint_dir), samples, batch_size)
        predictions = head_preds
    elif mcfg.objective == Objective.LABEL:
        classifier = load_label_model(checkpoint_dir)
        with (progress or NO_PROGRESS).phase("classifying", total=len(samples), unit="samples") as advance:
            for i in range(0, len(samples), batch_size):
                predictions.extend(classifier.predict(samples[i:i + batch_size]))
                advance(len(samples[i:i + batch_size]))
    else:
        model = load_checkpoint(checkpoint_dir, llm=llm, settings=settings, progress=progress)
        with (progress or NO_PROGRESS).phase("answering", total=len(samples), unit="samples") as advance:
            predictions = answer(model, samples, batch_size, decoding=decoding, advance=advance)
        if model.head is not None:
            scorer = NodeModel(mcfg)
            scorer.head = model.head
            tops, head_preds = head_answers(scorer.eval(), samples, batch_size)
    rate = len(samples) / (time.perf_counter() - started)
    golds = [s.label for s in samples]
    scores = score(tcfg.dataset, predictions, golds, [s.node_texts for s in samples])
    head = head_figures(tops, head_preds, golds) if mcfg.has_head else None
    if mcfg.objective == Objective.NODE:  # Hit@1 is the best node's, not any item of the answer set's
        scores = replace(scores, value=head["hit@1"], correct=head["correct"])
    kgqa = scores.hallucination_rate is not None
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        groups.setdefault(hop_group(s.id), []).append(i)
    by_hop = None
    if len(groups) > 1:
        by_hop = {g: score(tcfg.dataset, [predictions[i] for i in rows], [samples[i].label for i in rows],
                           [samples[i].node_texts for i in rows]).to_json() for g, rows in sorted(groups.items())}
        if head is not None:
            for g, rows in groups.items():
                by_hop[g]["head"] = figures = head_figures([tops[i] for i in rows], [head_preds[i] for i in rows], [golds[i] for i in rows])
                if mcfg.objective == Objective.NODE:
                    by_hop[g] |= {"value": figures["hit@1"], "correct": figures["correct"]}
    pred_path = checkpoint_dir / f"predictions-{split}.jsonl"
    with atomic_path(pred_path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for i, (s, p) in enumerate(zip(samples, predictions)):
            row = {"id": s.id, "question": s.question, "label": s.label, "prediction": p,
                   "correct": is_correct(tcfg.dataset, p, s.label) if mcfg.objective != Objective.NODE else hit_at_1(tops[i], s.label),
                   "hallucinated": hallucinated(p, s.node_texts) if kgqa else None,
                   "outside": names_outside(p, s.node_texts) if kgqa else None,
                   "f1": round(answer_set_scores(p, s.label)[2], 4) if kgqa else None}
            if head is not None:  # the head's best node and answer
                row |= {"head_best": tops[i], "head_answer": head_preds[i]}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    result = EvalResult(tcfg.dataset, split, scores.metric, scores.value, scores.correct, scores.total,
                        scores.hallucination_rate, rate, pred_path, checkpoint_dir / f"metrics-{split}.json",
                        scores.precision, scores.recall, scores.f1, scores.outside_rate, by_hop, str(Decoding(decoding)),
                        ANSWERED_BY.get(mcfg.objective, "llm"), head)
    write_json(result.metrics, result.to_json())
    return result

