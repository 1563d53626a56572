"""Evaluation of a checkpoint on one split, or on any samples file from ``gr-neo4j retrieve``:
predictions as JSON lines plus the paper's metrics and, on knowledge-graph QA, answer-set
precision / recall / F1 and the exact share of answers naming something outside the subgraph,
overall and per hop count (MetaQA)."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..atomic import atomic_path
from ..defaults import Decoding
from ..errors import GrNeo4jError
from ..metrics import answer_set_scores, hallucinated, hop_group, is_correct, names_outside, score
from ..progress import NO_PROGRESS, Progress
from ..samples import load_samples
from .checkpoint import answer, load_checkpoint, read_config, write_json
from .config import TrainConfig
from .datasets import SPLITS, load_split


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
    by_hop: dict[str, dict] | None = None  # hop group -> Scores.to_json(), when there are several
    decoding: str = Decoding.AUTO.value


def evaluate(checkpoint_dir: str | Path, split: str = "test", *, samples: str | Path | None = None, settings=None, llm=None,
             batch_size: int = 16, limit: int | None = None, progress: Progress | None = None,
             decoding: Decoding | str = Decoding.AUTO) -> EvalResult:
    """Answer every sample of ``split`` (or of the ``samples`` file) with the checkpoint's model and
    score the answers.

    Without ``samples`` they are rebuilt from the checkpoint's training configuration (same source,
    same seed, same split); with it, every sample of that file is answered and the outputs are
    named after it (``predictions-<file stem>.jsonl``). ``limit`` answers only the first samples;
    ``progress`` is told one phase, "answering", counted in samples; ``decoding`` (auto: held to
    the node texts on knowledge graphs and to the labels on ExplaGraphs, :mod:`.constrained`).
    """
    checkpoint_dir = Path(checkpoint_dir)
    tcfg = TrainConfig.from_dict(read_config(checkpoint_dir)["train"])
    if samples is not None:
        split = Path(samples).stem
        chosen = load_samples(samples)[:limit]
        if not chosen:
            raise GrNeo4jError(f"{samples}: holds no samples")
        other = {s.dataset for s in chosen if s.dataset and s.dataset != tcfg.dataset}
        if other:
            raise GrNeo4jError(f"{samples}: samples of {', '.join(sorted(other))}, but the checkpoint was trained on {tcfg.dataset}")
        samples = chosen
    else:
        if split not in SPLITS:
            raise GrNeo4jError(f"unknown split {split!r} (choose from {', '.join(SPLITS)})")
        samples = load_split(tcfg.dataset, split, retrieved=tcfg.retrieved, tsv=tcfg.tsv, settings=settings,
                             seed=tcfg.seed, limit=limit if limit is not None else tcfg.limit)
        if not samples:
            raise GrNeo4jError(f"split {split!r} of {tcfg.dataset} is empty")
    model = load_checkpoint(checkpoint_dir, llm=llm, settings=settings, progress=progress)
    started = time.perf_counter()
    predictions: list[str] = []
    with (progress or NO_PROGRESS).phase("answering", total=len(samples), unit="samples") as advance:
        for i in range(0, len(samples), batch_size):
            batch = samples[i:i + batch_size]
            predictions.extend(answer(model, batch, batch_size, decoding=decoding))
            advance(len(batch))
    rate = len(samples) / (time.perf_counter() - started)
    scores = score(tcfg.dataset, predictions, [s.label for s in samples], [s.node_texts for s in samples])
    kgqa = scores.hallucination_rate is not None
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(samples):
        groups.setdefault(hop_group(s.id), []).append(i)
    by_hop = None
    if len(groups) > 1:
        by_hop = {g: score(tcfg.dataset, [predictions[i] for i in rows], [samples[i].label for i in rows],
                           [samples[i].node_texts for i in rows]).to_json() for g, rows in sorted(groups.items())}
    pred_path = checkpoint_dir / f"predictions-{split}.jsonl"
    with atomic_path(pred_path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for s, p in zip(samples, predictions):
            row = {"id": s.id, "question": s.question, "label": s.label, "prediction": p,
                   "correct": is_correct(tcfg.dataset, p, s.label),
                   "hallucinated": hallucinated(p, s.node_texts) if kgqa else None,
                   "outside": names_outside(p, s.node_texts) if kgqa else None,
                   "f1": round(answer_set_scores(p, s.label)[2], 4) if kgqa else None}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    result = EvalResult(tcfg.dataset, split, scores.metric, scores.value, scores.correct, scores.total,
                        scores.hallucination_rate, rate, pred_path, checkpoint_dir / f"metrics-{split}.json",
                        scores.precision, scores.recall, scores.f1, scores.outside_rate, by_hop, str(Decoding(decoding)))
    write_json(result.metrics, asdict(result))
    return result

