"""Evaluation of a checkpoint on one split: predictions as JSON lines plus the paper's metrics."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..atomic import atomic_path
from ..errors import GrNeo4jError
from ..metrics import hallucinated, is_correct, score
from ..progress import NO_PROGRESS, Progress
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
    predictions: Path  # JSON lines: id, question, label, prediction, correct, hallucinated
    metrics: Path  # this result as JSON


def evaluate(checkpoint_dir: str | Path, split: str = "test", *, settings=None, llm=None, batch_size: int = 16,
             limit: int | None = None, progress: Progress | None = None) -> EvalResult:
    """Answer every sample of ``split`` with the checkpoint's model and score the answers.

    The samples are rebuilt from the checkpoint's training configuration (same source, same seed,
    same split). ``limit`` answers only the first samples of the split; ``progress`` is told one
    phase, "answering", counted in samples.
    """
    if split not in SPLITS:
        raise GrNeo4jError(f"unknown split {split!r} (choose from {', '.join(SPLITS)})")
    checkpoint_dir = Path(checkpoint_dir)
    tcfg = TrainConfig.from_dict(read_config(checkpoint_dir)["train"])
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
            predictions.extend(answer(model, batch, batch_size))
            advance(len(batch))
    rate = len(samples) / (time.perf_counter() - started)
    scores = score(tcfg.dataset, predictions, [s.label for s in samples], [s.node_texts for s in samples])
    pred_path = checkpoint_dir / f"predictions-{split}.jsonl"
    with atomic_path(pred_path) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for s, p in zip(samples, predictions):
            row = {"id": s.id, "question": s.question, "label": s.label, "prediction": p,
                   "correct": is_correct(tcfg.dataset, p, s.label),
                   "hallucinated": hallucinated(p, s.node_texts) if scores.hallucination_rate is not None else None}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    result = EvalResult(tcfg.dataset, split, scores.metric, scores.value, scores.correct, scores.total,
                        scores.hallucination_rate, rate, pred_path, checkpoint_dir / f"metrics-{split}.json")
    write_json(result.metrics, asdict(result))
    return result

