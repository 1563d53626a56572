"""Evaluation of a checkpoint on one split: predictions as JSON lines plus the paper's metrics."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import GrNeo4jError
from ..metrics import hallucinated, is_correct, score
from .checkpoint import answer, load_checkpoint, read_config, write_json
from .datasets import SPLITS, load_split
from .training import TrainConfig


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
             limit: int | None = None, show_progress: bool = True) -> EvalResult:
    """Answer every sample of ``split`` with the checkpoint's model and score the answers.

    The samples are rebuilt from the checkpoint's training configuration (same source, same seed,
    same split). ``limit`` answers only the first samples of the split.
    """
    if split not in SPLITS:
        raise GrNeo4jError(f"unknown split {split!r} (choose from {', '.join(SPLITS)})")
    checkpoint_dir = Path(checkpoint_dir)
    tcfg = TrainConfig.from_dict(read_config(checkpoint_dir)["train"])
    samples = load_split(tcfg.dataset, split, retrieved=tcfg.retrieved, tsv=tcfg.tsv, settings=settings,
                         seed=tcfg.seed, limit=limit if limit is not None else tcfg.limit)
    if not samples:
        raise GrNeo4jError(f"split {split!r} of {tcfg.dataset} is empty")
    model = load_checkpoint(checkpoint_dir, llm=llm, settings=settings)
    started = time.perf_counter()
    predictions = _answer_with_progress(model, samples, batch_size, show_progress)
    rate = len(samples) / (time.perf_counter() - started)
    scores = score(tcfg.dataset, predictions, [s.label for s in samples], [s.node_texts for s in samples])
    pred_path = checkpoint_dir / f"predictions-{split}.jsonl"
    with pred_path.open("w", encoding="utf-8") as fh:
        for s, p in zip(samples, predictions):
            row = {"id": s.id, "question": s.question, "label": s.label, "prediction": p,
                   "correct": is_correct(tcfg.dataset, p, s.label),
                   "hallucinated": hallucinated(p, s.node_texts) if scores.hallucination_rate is not None else None}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    result = EvalResult(tcfg.dataset, split, scores.metric, scores.value, scores.correct, scores.total,
                        scores.hallucination_rate, rate, pred_path, checkpoint_dir / f"metrics-{split}.json")
    write_json(result.metrics, asdict(result))
    return result


def _answer_with_progress(model, samples, batch_size: int, enabled: bool) -> list[str]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    out: list[str] = []
    with Progress(TextColumn("[bold]answering"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), disable=not enabled) as progress:
        task = progress.add_task("answering", total=len(samples))
        for i in range(0, len(samples), batch_size):
            batch = samples[i:i + batch_size]
            out.extend(answer(model, batch, batch_size))
            progress.update(task, advance=len(batch))
    return out
