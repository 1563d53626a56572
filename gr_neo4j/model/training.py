"""Training of the GNN + LLM model: AdamW, one warm-up epoch then a half cosine down to a floor,
gradient clipping, early stopping on the validation loss, fixed seeds, resumable checkpoints.

The defaults are the paper's (:class:`~.config.TrainConfig`: lr 1e-5 with G-Retriever's floor of
5e-6, weight decay 0.05, betas 0.9/0.95, clip 0.1, patience 2, batch 4, 10 epochs). Only the
trainable weights are saved (see :mod:`.checkpoint`). Batches hold samples of similar length
(:mod:`.batching`), which pads less than random batches.

``grad_accum`` sums the gradients of that many batches before one optimiser step (an effective
batch of ``batch_size * grad_accum`` when memory allows only small batches). Its default is 1
because G-Retriever's ``grad_steps=2`` does not accumulate: its optimiser steps after every batch
and ``grad_steps`` only spaces the learning-rate updates, which the per-step schedule here covers.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ..atomic import atomic_path
from ..defaults import Gnn
from ..errors import CheckpointMismatch, MissingInput, UsageError
from ..progress import NO_PROGRESS, Progress
from ..samples import SubgraphSample
from .batching import bucketed_batches, text_length
from .checkpoint import CONFIG, FORMAT, RESUME, read_config, save_weights, write_json
from .config import ModelConfig, TrainConfig
from .datasets import load_splits
from .gretriever import GRetrieverModel
from .objectives import trainer_for
from .plot import plot_curves


@dataclass
class TrainResult:
    out: Path
    epochs_run: int  # epochs completed, counting a resumed run's earlier ones
    best_epoch: int  # kept by the lowest validation loss, or a classifier's highest validation accuracy
    best_val_loss: float | None  # the validation loss of the best epoch (None when nothing was held out)
    stopped: str  # 'epochs', 'early stopping' or 'time budget'
    train_samples_per_s: float  # optimisation steps only (validation excluded)
    seconds: float  # the whole run, validation and checkpointing included
    history: list[dict] = field(default_factory=list)
    curves: Path | None = None


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def lr_schedule(opt: torch.optim.Optimizer, steps_per_epoch: int, config: TrainConfig) -> torch.optim.lr_scheduler.LambdaLR:
    """G-Retriever's schedule (its ``lr_schedule.adjust_learning_rate``), per optimiser step: linear
    warm-up over ``warmup_epochs``, then a half cosine from ``lr`` down to ``min_lr`` at the last step.

    transformers' implementation is used; the floor is capped at ``lr`` so that a smaller peak
    learning rate than the paper's never makes the rate rise after the warm-up.
    """
    from transformers.optimization import get_cosine_with_min_lr_schedule_with_warmup  # 4.49 does not export it at the top

    return get_cosine_with_min_lr_schedule_with_warmup(
        opt, num_warmup_steps=round(steps_per_epoch * config.warmup_epochs), num_training_steps=steps_per_epoch * config.epochs,
        min_lr_rate=min(config.min_lr / config.peak_lr, 1.0) if config.peak_lr > 0 else 0.0)


def train(config: TrainConfig, settings=None, llm=None, splits: dict[str, list[SubgraphSample]] | None = None,
          progress: Progress | None = None, embedder=None) -> TrainResult:
    """Train and write a checkpoint directory ``config.out``.

    Args:
        config: what to train and how.
        settings: for the LLM, the embedder and the cache (default: ``load_settings()``).
        llm: an already loaded ``(model, tokenizer)`` (else the one named by ``config.llm``/settings).
        splits: ready ``{'train', 'val', 'test'}`` samples (else read from ``config.retrieved``/``tsv``).
        progress: told one phase per epoch (samples) and one note per epoch with its losses.
        embedder: embeds the questions of samples without a question vector where the objective
            trains a node head (else the configured embedder, loaded only then).

    ``config.objective`` picks the trainer (:mod:`.objectives`): lm (the paper's), node (the node
    head alone, no LLM is loaded), joint, or label; the head's parameters learn at ``config.head_lr``.
    """
    progress = progress or NO_PROGRESS
    from ..settings import load_settings

    settings = settings or load_settings()
    seed_everything(config.seed)
    check_rates(config)
    trainer = trainer_for(config)
    trainer.check(config)
    if splits is None:
        splits = load_splits(config.dataset, retrieved=config.retrieved, tsv=config.tsv, settings=settings,
                             seed=config.seed, limit=config.limit)
    if config.batch_size < 1 or config.grad_accum < 1:
        raise UsageError("--batch-size and --grad-accum must be at least 1")
    train_set, val_set = splits["train"], splits["val"]
    if not train_set or not val_set:
        raise MissingInput("the train and validation splits must not be empty")
    if config.final:  # nothing is held out to choose an epoch by: the last one is kept
        train_set, val_set = train_set + val_set, []
    trainer.prepare(train_set + val_set, config, settings, embedder)
    model = trainer.build(config, train_set, settings, llm, progress)
    params, opt = optimiser(model, config)
    # optimiser steps per epoch: the schedule advances once per step, so it ends where it should
    steps_per_epoch = math.ceil(math.ceil(len(train_set) / config.batch_size) / config.grad_accum)
    sched = lr_schedule(opt, steps_per_epoch, config)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    trainer.write_files(model, out)
    run = _resume(out, config, model, opt, sched) if config.resume and (out / RESUME).is_file() else _Run()
    header = {"format": FORMAT, "model": model.config.to_dict(), "train": config.to_dict(),
              "sizes": {**{k: len(v) for k, v in splits.items()}, "train": len(train_set), "val": len(val_set)}}

    started = time.perf_counter()
    deadline = started + config.max_minutes * 60 if config.max_minutes is not None else math.inf
    stopped = "early stopping" if run.bad_epochs >= config.patience else "epochs"
    lengths = [text_length(s) for s in train_set]
    for epoch in range(run.epoch, config.epochs if stopped == "epochs" else run.epoch):
        batches = epoch_batches(lengths, config, epoch)
        with progress.phase(f"epoch {epoch + 1}/{config.epochs}", total=len(train_set), unit="samples") as advance:
            step_losses, seen, epoch_time, out_of_time = train_epoch(model, train_set, batches, params, opt, sched, config, deadline, advance)
        if out_of_time:
            stopped = "time budget"
        run.trained, run.train_time = run.trained + seen, run.train_time + epoch_time
        val_start = time.perf_counter()
        with progress.phase(f"validation {epoch + 1}/{config.epochs}", total=None, unit="samples"):
            val_loss, val_accuracy = trainer.validate(model, val_set, config) if val_set else (None, None)
        train_loss = sum(step_losses) / len(step_losses)
        run.history.append({"epoch": epoch + 1, "train_loss": train_loss,
                            **({"val_loss": val_loss} if val_loss is not None else {}),
                            **({"val_accuracy": val_accuracy} if val_accuracy is not None else {}),
                            "lr": opt.param_groups[0]["lr"], "samples": seen, "train_seconds": epoch_time,
                            "val_seconds": time.perf_counter() - val_start, "step_losses": step_losses})
        progress.note(f"epoch {epoch + 1}/{config.epochs}: train loss {train_loss:.4f}"
                      + (f", validation loss {val_loss:.4f}" if val_loss is not None else "")
                      + (f", validation accuracy {val_accuracy:.4f}" if val_accuracy is not None else "")
                      + f", {seen / epoch_time:.2f} samples/s")
        # lower is better; with nothing held out (final) every epoch replaces the one before
        criterion = -math.inf if val_loss is None else -val_accuracy if val_accuracy is not None else val_loss
        if criterion < run.best_val or val_loss is None:
            run.best_val, run.best_epoch, run.bad_epochs = criterion, epoch + 1, 0
            save_weights(model, out)
        else:
            run.bad_epochs += 1
        _save_resume(out, model, opt, sched, epoch + 1, run)
        best = run.history[run.best_epoch - 1] if run.best_epoch else {}
        write_json(out / CONFIG, header | {"best": {"epoch": run.best_epoch, **{k: best[k] for k in ("val_loss", "val_accuracy") if k in best}}})
        write_json(out / "history.json", run.history)
        plot_curves(run.history, out / "curves.png", trainer.title(config, model.config))
        if stopped != "epochs":
            break
        if run.bad_epochs >= config.patience:
            stopped = "early stopping"
            break
    seconds = time.perf_counter() - started
    best_loss = run.history[run.best_epoch - 1].get("val_loss") if run.best_epoch else math.inf
    return TrainResult(out, len(run.history), run.best_epoch, best_loss, stopped, run.trained / run.train_time if run.trained else 0.0,
                       seconds, run.history, out / "curves.png" if run.history else None)


@dataclass
class _Run:
    """Where a run stands after each epoch: what a resumed run takes up again."""

    epoch: int = 0  # epochs completed
    history: list[dict] = field(default_factory=list)
    best_val: float = math.inf  # the criterion of the best epoch (lower is better)
    best_epoch: int = 0
    bad_epochs: int = 0  # epochs since the best, for early stopping
    trained: int = 0  # samples trained on in this process
    train_time: float = 0.0


def optimiser(model, config: TrainConfig) -> tuple[list[torch.nn.Parameter], torch.optim.AdamW]:
    """The trainable parameters and AdamW over them: the LLM side (LoRA adapters) at ``lr``, the GNN
    and projector at ``graph_lr``, the node head at ``head_lr``."""
    head = list(model.head.parameters()) if getattr(model, "head", None) is not None else []
    graph = model.graph_parameters() if isinstance(model, GRetrieverModel) else []
    apart = {id(p) for p in head + graph}
    rest = [p for p in model.parameters() if p.requires_grad and id(p) not in apart]  # the LLM side: LoRA adapters
    params = rest + graph + head
    if not params:
        raise UsageError(f"nothing to train: use a GNN (--gnn {'|'.join(g for g in Gnn if g != Gnn.NONE)}) or --lora")
    # the param groups are always in this order (resume restores the optimiser's state by position)
    groups = [g for g in ({"params": rest}, {"params": graph, "lr": config.graph_lr or config.lr},
                          {"params": head, "lr": config.head_lr}) if g["params"]]
    return params, torch.optim.AdamW(groups, lr=config.peak_lr, weight_decay=config.weight_decay, betas=(0.9, 0.95))


def epoch_batches(lengths: list[int], config: TrainConfig, epoch: int) -> list[list[int]]:
    """One epoch's batches of sample indices, of similar length, in a seeded order: bucketed by what
    one optimiser step sees, so accumulated half batches add up to a whole one."""
    step_size = config.batch_size * config.grad_accum
    return [whole[i:i + config.batch_size] for whole in bucketed_batches(lengths, step_size, config.seed + epoch)
            for i in range(0, len(whole), config.batch_size)]


def train_epoch(model, train_set, batches, params, opt, sched, config: TrainConfig, deadline: float, advance) -> tuple[list[float], int, float, bool]:
    """One pass over ``batches``; returns the batch losses, samples seen, seconds, and whether the
    time budget cut it short."""
    model.train()
    step_losses, seen, began, out_of_time = [], 0, time.perf_counter(), False
    opt.zero_grad(set_to_none=True)
    for n, indices in enumerate(batches):
        batch = [train_set[j] for j in indices]
        loss = model(batch)
        (loss / config.grad_accum).backward()
        out_of_time = time.perf_counter() > deadline
        # step after every grad_accum batches, after the epoch's last batch, and before a budget cut
        if (n + 1) % config.grad_accum == 0 or n + 1 == len(batches) or out_of_time:
            torch.nn.utils.clip_grad_norm_(params, config.grad_clip)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
        step_losses.append(loss.item())
        seen += len(batch)
        advance(len(batch))
        if out_of_time:
            break
    return step_losses, seen, time.perf_counter() - began, out_of_time


def _resume(out: Path, config: TrainConfig, model, opt, sched) -> _Run:
    """Load the weights, optimiser, schedule and random state an interrupted run saved in ``out``."""
    saved = read_config(out)
    kept = {k: saved["train"].get(k, default) for k, default in (("grad_accum", 1), ("final", False))}
    if ModelConfig.from_dict(saved["model"]).to_dict() != model.config.to_dict() or kept != {"grad_accum": config.grad_accum, "final": config.final}:
        raise CheckpointMismatch(f"{out}: holds a checkpoint of another model configuration; use another --out or --no-resume")
    state = torch.load(out / RESUME, map_location="cpu", weights_only=True)
    model.load_state_dict(state["weights"], strict=False)
    try:
        opt.load_state_dict(state["optimizer"])
    except ValueError:  # saved before the graph side had its own param group
        raise CheckpointMismatch(f"{out}: its optimiser state groups the parameters differently; use another --out or --no-resume") from None
    sched.load_state_dict(state["scheduler"])
    torch.set_rng_state(state["torch_rng"])
    return _Run(state["epoch"], state["history"], state["best_val"], state["best_epoch"], state["bad_epochs"])


def check_rates(config: TrainConfig) -> None:
    """Every learning rate positive and the floor not negative, before anything is loaded (the
    optimiser would otherwise stop on them with a traceback, or train nothing at 0)."""
    rates = {"--lr": config.lr, "--graph-lr": config.graph_lr, "--head-lr": config.head_lr, "--encoder-lr": config.encoder_lr}
    for option, rate in rates.items():
        if rate is not None and rate <= 0:
            raise UsageError(f"{option} must be positive, got {rate}")
    if config.min_lr < 0:
        raise UsageError(f"--min-lr must not be negative, got {config.min_lr}")


def _save_resume(out: Path, model, opt, sched, epoch: int, run: _Run) -> None:
    with atomic_path(out / RESUME) as tmp:
        torch.save({"weights": model.trainable_state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                    "torch_rng": torch.get_rng_state(), "epoch": epoch, "history": run.history, "best_val": run.best_val,
                    "best_epoch": run.best_epoch, "bad_epochs": run.bad_epochs}, tmp)
