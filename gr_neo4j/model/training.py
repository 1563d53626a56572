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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from ..atomic import atomic_path
from ..defaults import Gnn, Objective
from ..errors import CheckpointMismatch, MissingInput, UsageError
from ..ingest.facts import Answers
from ..metrics import kind_of
from ..progress import NO_PROGRESS, Progress
from ..samples import SubgraphSample
from .answer_head import NodeModel, fill_question_vectors, positive_weight
from .batching import bucketed_batches, sorted_batches, text_length
from .checkpoint import CONFIG, FORMAT, RESUME, load_llm_named, read_config, save_weights, write_json
from .config import ModelConfig, TrainConfig
from .datasets import load_splits
from .gretriever import GRetrieverModel
from .label_model import ENCODER, LabelModel
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
    from transformers import get_cosine_with_min_lr_schedule_with_warmup

    return get_cosine_with_min_lr_schedule_with_warmup(
        opt, num_warmup_steps=round(steps_per_epoch * config.warmup_epochs), num_training_steps=steps_per_epoch * config.epochs,
        min_lr_rate=min(config.min_lr / config.peak_lr, 1.0) if config.peak_lr > 0 else 0.0)


def model_config(config: TrainConfig, llm_name: str, embed_dim: int, embedder: str) -> ModelConfig:
    return ModelConfig(llm=llm_name, embed_dim=embed_dim, embedder=embedder, gnn=config.gnn, gnn_layers=config.gnn_layers,
                       gnn_hidden=config.gnn_hidden, gnn_heads=config.gnn_heads, graph_tokens=config.graph_tokens,
                       lora=config.lora, lora_r=config.lora_r, lora_alpha=config.lora_alpha, lora_targets=list(config.lora_targets),
                       max_txt_len=config.max_txt_len, max_new_tokens=config.max_new_tokens,
                       objective=config.objective, head_hidden=config.head_hidden, head_layers=config.head_layers,
                       candidates=config.candidates)


def build_model(config: TrainConfig, train_set: Sequence[SubgraphSample], settings, llm, progress: Progress):
    """The model an objective trains: the GNN + LLM (lm), the node head alone without any LLM
    (node), or both (joint), a head weighting the answer nodes in its loss; or the label classifier
    fine-tuned from the embedder's encoder or ``config.encoder`` (label)."""
    objective = Objective(config.objective)
    embed_dim = int(train_set[0].data.x.size(1))
    embedder_name = _embedder_name(settings) if config.tsv is not None else ""
    if objective == Objective.LABEL:
        from ..embedder import embedder_source
        from .label_model import labels_of

        if config.encoder:  # any encoder: a hub id or a directory
            name, location = config.encoder, config.encoder
        else:
            source = embedder_source(settings)
            name, location = source.name, source.location
        mcfg = replace(model_config(config, "", embed_dim, name), labels=labels_of(config.dataset))
        return LabelModel.from_pretrained(location, mcfg)
    if objective == Objective.NODE:
        model = NodeModel(model_config(config, "", embed_dim, embedder_name))
    else:
        if llm is None:
            llm = load_llm_named(config.llm or "", settings, progress)
        llm_name = config.llm or _configured_llm_name(settings)
        model = GRetrieverModel(llm[0], llm[1], model_config(config, llm_name, embed_dim, embedder_name))
        model.node_weight = config.node_weight
    if objective != Objective.LM:
        model.pos_weight = positive_weight(train_set)
    return model


@torch.no_grad()
def mean_loss(model: GRetrieverModel, samples: Sequence[SubgraphSample], batch_size: int) -> float:
    model.eval()
    total = 0.0
    for indices in sorted_batches(samples, batch_size):
        total += model([samples[i] for i in indices]).item() * len(indices)
    return total / max(len(samples), 1)


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

    ``config.objective``: lm (the paper's), node (the node head alone, no LLM is loaded) or joint;
    the head's parameters learn at ``config.head_lr``.
    """
    progress = progress or NO_PROGRESS
    from ..settings import load_settings

    settings = settings or load_settings()
    out = Path(config.out)
    seed_everything(config.seed)
    check_rates(config)
    if config.encoder and Objective(config.objective) != Objective.LABEL:
        raise UsageError("--encoder names the encoder of --objective label; the other objectives train a GNN on the samples' vectors")
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
    objective = Objective(config.objective)
    if objective in (Objective.NODE, Objective.JOINT):
        if kind_of(config.dataset) != Answers.ENTITIES:
            raise UsageError(f"--objective {objective} scores nodes as answers: only for knowledge-graph QA, not {config.dataset}")
        fill_question_vectors(train_set + val_set, settings, embedder)
    model = build_model(config, train_set, settings, llm, progress)
    mcfg = model.config
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
    opt = torch.optim.AdamW(groups, lr=config.peak_lr, weight_decay=config.weight_decay, betas=(0.9, 0.95))
    # optimiser steps per epoch: the schedule advances once per step, so it ends where it should
    steps_per_epoch = math.ceil(math.ceil(len(train_set) / config.batch_size) / config.grad_accum)
    sched = lr_schedule(opt, steps_per_epoch, config)

    history: list[dict] = []
    best_val, best_epoch, bad_epochs, start_epoch = math.inf, 0, 0, 0
    out.mkdir(parents=True, exist_ok=True)
    if isinstance(model, LabelModel):
        model.save_encoder(out / ENCODER)
    if config.resume and (out / RESUME).is_file():
        saved = read_config(out)
        kept = {k: saved["train"].get(k, default) for k, default in (("grad_accum", 1), ("final", False))}
        if ModelConfig.from_dict(saved["model"]).to_dict() != mcfg.to_dict() or kept != {"grad_accum": config.grad_accum, "final": config.final}:
            raise CheckpointMismatch(f"{out}: holds a checkpoint of another model configuration; use another --out or --no-resume")
        state = torch.load(out / RESUME, map_location="cpu", weights_only=True)
        model.load_state_dict(state["weights"], strict=False)
        try:
            opt.load_state_dict(state["optimizer"])
        except ValueError:  # saved before the graph side had its own param group
            raise CheckpointMismatch(f"{out}: its optimiser state groups the parameters differently; use another --out or --no-resume") from None
        sched.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
        history, best_val, best_epoch, bad_epochs = state["history"], state["best_val"], state["best_epoch"], state["bad_epochs"]
        start_epoch = state["epoch"]
    header = {"format": FORMAT, "model": mcfg.to_dict(), "train": config.to_dict(),
              "sizes": {**{k: len(v) for k, v in splits.items()}, "train": len(train_set), "val": len(val_set)}}

    started, trained, train_time, stopped = time.perf_counter(), 0, 0.0, "epochs"
    deadline = started + config.max_minutes * 60 if config.max_minutes is not None else math.inf
    if bad_epochs >= config.patience:
        stopped = "early stopping"
    lengths = [text_length(s) for s in train_set]
    for epoch in range(start_epoch, config.epochs if stopped == "epochs" else start_epoch):
        model.train()
        # bucketed by what one optimiser step sees, so accumulated half batches add up to a whole one
        step_size = config.batch_size * config.grad_accum
        batches = [whole[i:i + config.batch_size] for whole in bucketed_batches(lengths, step_size, config.seed + epoch)
                   for i in range(0, len(whole), config.batch_size)]
        step_losses, epoch_start, seen = [], time.perf_counter(), 0
        opt.zero_grad(set_to_none=True)
        with progress.phase(f"epoch {epoch + 1}/{config.epochs}", total=len(train_set), unit="samples") as advance:
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
                    stopped = "time budget"
                    break
        trained, epoch_time = trained + seen, time.perf_counter() - epoch_start
        train_time += epoch_time
        val_start = time.perf_counter()
        val_loss, val_accuracy = validate(model, val_set, config, epoch, progress) if val_set else (None, None)
        train_loss = sum(step_losses) / len(step_losses)
        history.append({"epoch": epoch + 1, "train_loss": train_loss,
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
        if criterion < best_val or val_loss is None:
            best_val, best_epoch, bad_epochs = criterion, epoch + 1, 0
            save_weights(model, out)
        else:
            bad_epochs += 1
        _save_resume(out, model, opt, sched, epoch + 1, history, best_val, best_epoch, bad_epochs)
        best = history[best_epoch - 1] if best_epoch else {}
        write_json(out / CONFIG, header | {"best": {"epoch": best_epoch, **{k: best[k] for k in ("val_loss", "val_accuracy") if k in best}}})
        write_json(out / "history.json", history)
        plot_curves(history, out / "curves.png", curves_title(config, mcfg))
        if stopped != "epochs":
            break
        if bad_epochs >= config.patience:
            stopped = "early stopping"
            break
    seconds = time.perf_counter() - started
    best_loss = history[best_epoch - 1].get("val_loss") if best_epoch else math.inf
    return TrainResult(out, len(history), best_epoch, best_loss, stopped, trained / train_time if trained else 0.0, seconds,
                       history, out / "curves.png" if history else None)


def validate(model, val_set: Sequence[SubgraphSample], config: TrainConfig, epoch: int, progress: Progress) -> tuple[float, float | None]:
    """The validation loss, and a classifier's validation accuracy (None for the other models)."""
    with progress.phase(f"validation {epoch + 1}/{config.epochs}", total=None, unit="samples"):
        # a classifier is kept by its validation accuracy, what it is judged by: its loss rises
        # as it grows confident on a few samples while the accuracy can still improve
        if isinstance(model, LabelModel):
            return model.loss_and_accuracy(val_set, config.eval_batch_size)
        return mean_loss(model, val_set, config.eval_batch_size), None


def check_rates(config: TrainConfig) -> None:
    """Every learning rate positive and the floor not negative, before anything is loaded (the
    optimiser would otherwise stop on them with a traceback, or train nothing at 0)."""
    rates = {"--lr": config.lr, "--graph-lr": config.graph_lr, "--head-lr": config.head_lr, "--encoder-lr": config.encoder_lr}
    for option, rate in rates.items():
        if rate is not None and rate <= 0:
            raise UsageError(f"{option} must be positive, got {rate}")
    if config.min_lr < 0:
        raise UsageError(f"--min-lr must not be negative, got {config.min_lr}")


def curves_title(config: TrainConfig, mcfg: ModelConfig) -> str:
    objective = Objective(config.objective)
    if objective == Objective.NODE:
        return f"{config.dataset}: node head ({mcfg.gnn})"
    if objective == Objective.LABEL:
        return f"{config.dataset}: label classifier ({mcfg.embedder})"
    return f"{config.dataset}: {mcfg.gnn} + {mcfg.llm}{' + LoRA' if config.lora else ''}"


def _save_resume(out: Path, model, opt, sched, epoch, history, best_val, best_epoch, bad_epochs) -> None:
    with atomic_path(out / RESUME) as tmp:
        torch.save({"weights": model.trainable_state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                    "torch_rng": torch.get_rng_state(), "epoch": epoch, "history": history, "best_val": best_val,
                    "best_epoch": best_epoch, "bad_epochs": bad_epochs}, tmp)


def _configured_llm_name(settings) -> str:
    from ..llm import llm_source

    return llm_source(settings).name


def _embedder_name(settings) -> str:
    from ..embedder import embedder_source

    return embedder_source(settings).name
