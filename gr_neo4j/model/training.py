"""Training of the GNN + LLM model: AdamW, one warm-up epoch then half-cycle cosine, gradient
clipping, early stopping on the validation loss, fixed seeds, resumable checkpoints.

The defaults are the paper's (lr 1e-5, weight decay 0.05, betas 0.9/0.95, clip 0.1, patience 2,
batch 4, 10 epochs). Only the trainable weights are saved (see :mod:`.checkpoint`).

``grad_accum`` sums the gradients of that many batches before one optimiser step (an effective
batch of ``batch_size * grad_accum`` when memory allows only small batches). Its default is 1
because G-Retriever's ``grad_steps=2`` does not accumulate: its optimiser steps after every batch
and ``grad_steps`` only spaces the learning-rate updates, which the per-step schedule here covers.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import torch

from ..errors import GrNeo4jError
from ..samples import SubgraphSample
from .checkpoint import CONFIG, FORMAT, RESUME, WEIGHTS, load_llm_named, read_config, save_weights, write_json
from .datasets import load_splits
from .gretriever import GRetrieverModel, ModelConfig
from .plot import plot_curves


@dataclass
class TrainConfig:
    dataset: str
    out: Path
    retrieved: Path | None = None  # samples file from `gr-neo4j retrieve --out`
    tsv: Path | None = None  # ExplaGraphs TSV: whole graphs, no retrieval
    llm: str | None = None  # hub id or path; None = the configured LLM (settings)
    epochs: int = 10
    batch_size: int = 4
    grad_accum: int = 1  # batches whose gradients are summed before one optimiser step
    eval_batch_size: int = 16
    lr: float = 1e-5
    weight_decay: float = 0.05
    warmup_epochs: float = 1.0
    grad_clip: float = 0.1
    patience: int = 2
    lora: bool = False
    gnn: str = "gt"
    gnn_layers: int = 4
    gnn_hidden: int = 1024
    gnn_heads: int = 4
    graph_tokens: int = 1
    max_txt_len: int = 512
    max_new_tokens: int = 32
    seed: int = 42  # split seed and training seed
    limit: int | None = None  # at most this many samples per split (quick runs)
    max_minutes: float | None = None  # wall-clock budget; the running epoch is cut short
    resume: bool = True
    show_progress: bool = True

    def to_dict(self) -> dict:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in known}
        for key in ("out", "retrieved", "tsv"):
            if values.get(key):
                values[key] = Path(values[key])
        return cls(**values)


@dataclass
class TrainResult:
    out: Path
    epochs_run: int  # epochs completed, counting a resumed run's earlier ones
    best_epoch: int
    best_val_loss: float
    stopped: str  # 'epochs', 'early stopping' or 'time budget'
    train_samples_per_s: float  # optimisation steps only (validation excluded)
    seconds: float  # the whole run, validation and checkpointing included
    history: list[dict] = field(default_factory=list)
    curves: Path | None = None


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def lr_factor(step: int, steps_per_epoch: int, epochs: int, warmup_epochs: float) -> float:
    """Linear warm-up over ``warmup_epochs``, then a half cosine from 1 to 0 (G-Retriever's schedule)."""
    e = step / steps_per_epoch
    if e < warmup_epochs:
        return e / warmup_epochs
    span = max(epochs - warmup_epochs, 1e-8)
    return 0.5 * (1.0 + math.cos(math.pi * min((e - warmup_epochs) / span, 1.0)))


def model_config(config: TrainConfig, llm_name: str, embed_dim: int, embedder: str) -> ModelConfig:
    return ModelConfig(llm=llm_name, embed_dim=embed_dim, embedder=embedder, gnn=config.gnn, gnn_layers=config.gnn_layers,
                       gnn_hidden=config.gnn_hidden, gnn_heads=config.gnn_heads, graph_tokens=config.graph_tokens,
                       lora=config.lora, max_txt_len=config.max_txt_len, max_new_tokens=config.max_new_tokens)


@torch.no_grad()
def mean_loss(model: GRetrieverModel, samples: Sequence[SubgraphSample], batch_size: int) -> float:
    model.eval()
    total = 0.0
    for i in range(0, len(samples), batch_size):
        batch = samples[i:i + batch_size]
        total += model(batch).item() * len(batch)
    return total / max(len(samples), 1)


def _progress(enabled: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("loss {task.fields[loss]:.4f}"), TextColumn("{task.fields[rate]:.2f} samples/s"),
                    TimeElapsedColumn(), TimeRemainingColumn(), disable=not enabled)


def train(config: TrainConfig, settings=None, llm=None, splits: dict[str, list[SubgraphSample]] | None = None) -> TrainResult:
    """Train and write a checkpoint directory ``config.out``.

    Args:
        config: what to train and how.
        settings: for the LLM, the embedder and the cache (default: ``load_settings()``).
        llm: an already loaded ``(model, tokenizer)`` (else the one named by ``config.llm``/settings).
        splits: ready ``{'train', 'val', 'test'}`` samples (else read from ``config.retrieved``/``tsv``).
    """
    from ..settings import load_settings

    settings = settings or load_settings()
    out = Path(config.out)
    seed_everything(config.seed)
    if splits is None:
        splits = load_splits(config.dataset, retrieved=config.retrieved, tsv=config.tsv, settings=settings,
                             seed=config.seed, limit=config.limit)
    if config.batch_size < 1 or config.grad_accum < 1:
        raise GrNeo4jError("--batch-size and --grad-accum must be at least 1")
    train_set, val_set = splits["train"], splits["val"]
    if not train_set or not val_set:
        raise GrNeo4jError("the train and validation splits must not be empty")
    embed_dim = int(train_set[0].data.x.size(1))
    if llm is None:
        llm = load_llm_named(config.llm or "", settings)
    llm_name = config.llm or _configured_llm_name(settings)
    embedder = _embedder_name(settings) if config.tsv is not None else ""
    mcfg = model_config(config, llm_name, embed_dim, embedder)
    model = GRetrieverModel(llm[0], llm[1], mcfg)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise GrNeo4jError("nothing to train: use a GNN (--gnn gt|gat|gcn) or --lora")
    opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay, betas=(0.9, 0.95))
    # optimiser steps per epoch: the schedule advances once per step, so it ends where it should
    steps_per_epoch = math.ceil(math.ceil(len(train_set) / config.batch_size) / config.grad_accum)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: lr_factor(s, steps_per_epoch, config.epochs, config.warmup_epochs))

    history: list[dict] = []
    best_val, best_epoch, bad_epochs, start_epoch = math.inf, 0, 0, 0
    out.mkdir(parents=True, exist_ok=True)
    if config.resume and (out / RESUME).is_file():
        saved = read_config(out)
        if saved["model"] != mcfg.to_dict() or saved["train"].get("grad_accum", 1) != config.grad_accum:
            raise GrNeo4jError(f"{out}: holds a checkpoint of another model configuration; use another --out or --no-resume")
        state = torch.load(out / RESUME, map_location="cpu", weights_only=True)
        model.load_state_dict(state["weights"], strict=False)
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        history, best_val, best_epoch, bad_epochs = state["history"], state["best_val"], state["best_epoch"], state["bad_epochs"]
        start_epoch = state["epoch"]
    header = {"format": FORMAT, "model": mcfg.to_dict(), "train": config.to_dict(),
              "sizes": {k: len(v) for k, v in splits.items()}}

    started, trained, train_time, stopped = time.perf_counter(), 0, 0.0, "epochs"
    deadline = started + config.max_minutes * 60 if config.max_minutes is not None else math.inf
    if bad_epochs >= config.patience:
        stopped = "early stopping"
    with _progress(config.show_progress) as progress:
        for epoch in range(start_epoch, config.epochs if stopped == "epochs" else start_epoch):
            model.train()
            order = torch.randperm(len(train_set), generator=torch.Generator().manual_seed(config.seed + epoch)).tolist()
            task = progress.add_task(f"epoch {epoch + 1}/{config.epochs}", total=len(train_set), loss=math.nan, rate=0.0)
            step_losses, epoch_start, seen = [], time.perf_counter(), 0
            starts = range(0, len(order), config.batch_size)
            opt.zero_grad(set_to_none=True)
            for n, i in enumerate(starts):
                batch = [train_set[j] for j in order[i:i + config.batch_size]]
                loss = model(batch)
                (loss / config.grad_accum).backward()
                out_of_time = time.perf_counter() > deadline
                # step after every grad_accum batches, after the epoch's last batch, and before a budget cut
                if (n + 1) % config.grad_accum == 0 or n + 1 == len(starts) or out_of_time:
                    torch.nn.utils.clip_grad_norm_(params, config.grad_clip)
                    opt.step()
                    sched.step()
                    opt.zero_grad(set_to_none=True)
                step_losses.append(loss.item())
                seen += len(batch)
                rate = seen / (time.perf_counter() - epoch_start)
                progress.update(task, advance=len(batch), loss=sum(step_losses[-20:]) / len(step_losses[-20:]), rate=rate)
                if out_of_time:
                    stopped = "time budget"
                    break
            trained, epoch_time = trained + seen, time.perf_counter() - epoch_start
            train_time += epoch_time
            val_start = time.perf_counter()
            val_loss = mean_loss(model, val_set, config.eval_batch_size)
            history.append({"epoch": epoch + 1, "train_loss": sum(step_losses) / len(step_losses), "val_loss": val_loss,
                            "lr": opt.param_groups[0]["lr"], "samples": seen, "train_seconds": epoch_time,
                            "val_seconds": time.perf_counter() - val_start, "step_losses": step_losses})
            progress.update(task, description=f"epoch {epoch + 1}/{config.epochs} val {val_loss:.4f}")
            if val_loss < best_val:
                best_val, best_epoch, bad_epochs = val_loss, epoch + 1, 0
                save_weights(model, out / WEIGHTS)
            else:
                bad_epochs += 1
            _save_resume(out, model, opt, sched, epoch + 1, history, best_val, best_epoch, bad_epochs)
            write_json(out / CONFIG, header | {"best": {"epoch": best_epoch, "val_loss": best_val}})
            write_json(out / "history.json", history)
            plot_curves(history, out / "curves.png", f"{config.dataset}: {mcfg.gnn} + {llm_name}{' + LoRA' if config.lora else ''}")
            if stopped != "epochs":
                break
            if bad_epochs >= config.patience:
                stopped = "early stopping"
                break
    seconds = time.perf_counter() - started
    return TrainResult(out, len(history), best_epoch, best_val, stopped, trained / train_time if trained else 0.0, seconds,
                       history, out / "curves.png" if history else None)


def _save_resume(out: Path, model, opt, sched, epoch, history, best_val, best_epoch, bad_epochs) -> None:
    tmp = out / (RESUME + ".tmp")
    torch.save({"weights": model.trainable_state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "torch_rng": torch.get_rng_state(), "epoch": epoch, "history": history, "best_val": best_val,
                "best_epoch": best_epoch, "bad_epochs": bad_epochs}, tmp)
    tmp.replace(out / RESUME)


def _configured_llm_name(settings) -> str:
    from ..llm import llm_source

    return llm_source(settings).name


def _embedder_name(settings) -> str:
    from ..embedder import embedder_source

    return embedder_source(settings).name
