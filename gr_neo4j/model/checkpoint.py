"""Checkpoints: only the learnt weights plus the configuration that rebuilds the model around them.

A checkpoint directory holds::

    config.json          {"format", "model": ModelConfig, "train": TrainConfig, "best": {...}}
    weights.safetensors  the best trainable weights (encoder, projector, LoRA adapters)
    last.pt              resume state: last weights, optimiser, scheduler, epoch, history, RNG states
    history.json, curves.png (written by training)

The frozen LLM is never copied: ``config.json`` names it, and loading asks :mod:`gr_neo4j.llm` for it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from ..errors import GrNeo4jError
from ..samples import SubgraphSample
from .gretriever import GRetrieverModel, ModelConfig
from .prompts import PROMPT_VERSION

FORMAT = "gr-neo4j-checkpoint/1"
CONFIG = "config.json"
WEIGHTS = "weights.safetensors"
RESUME = "last.pt"


def write_json(path: Path, obj) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n")
    tmp.replace(path)


def save_weights(model: GRetrieverModel, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    save_file(model.trainable_state_dict(), str(tmp))
    tmp.replace(path)


def load_weights(model: GRetrieverModel, state: dict[str, torch.Tensor], source: Path | str) -> None:
    """Load trainable weights; every trainable tensor must be present and nothing else."""
    expected = set(model.trainable_state_dict())
    missing, unexpected = expected - set(state), set(state) - expected
    if missing or unexpected:
        raise GrNeo4jError(
            f"{source}: weights do not fit the model (missing: {sorted(missing)[:5]}, unexpected: {sorted(unexpected)[:5]})"
        )
    model.load_state_dict(state, strict=False)


def read_config(checkpoint_dir: str | Path) -> dict:
    path = Path(checkpoint_dir) / CONFIG
    if not path.is_file():
        raise GrNeo4jError(f"{checkpoint_dir}: not a checkpoint directory (no {CONFIG})")
    try:
        config = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise GrNeo4jError(f"{path}: invalid JSON: {exc}") from None
    if config.get("format") != FORMAT:
        raise GrNeo4jError(f"{path}: unknown checkpoint format {config.get('format')!r} (expected {FORMAT})")
    version = config["model"].get("prompt_version")
    if version != PROMPT_VERSION:
        raise GrNeo4jError(f"{path}: trained with prompt {version}, this version of gr-neo4j uses {PROMPT_VERSION}")
    return config


def load_llm_named(name: str, settings=None):
    """(model, tokenizer) of the LLM a checkpoint names ('' = the configured default)."""
    from .. import llm as llm_module
    from ..settings import load_settings

    settings = settings or load_settings()
    if not name or name == llm_module.llm_source(settings).name:
        return llm_module.load_llm(settings)
    return llm_module.load_llm_from(name)


def load_checkpoint(checkpoint_dir: str | Path, llm=None, settings=None) -> GRetrieverModel:
    """The trained model of a checkpoint directory, in eval mode.

    Args:
        checkpoint_dir: written by :func:`gr_neo4j.model.training.train`.
        llm: an already loaded ``(model, tokenizer)`` to use instead of the one the config names.
        settings: used to find the LLM (default: :func:`gr_neo4j.settings.load_settings`).
    """
    checkpoint_dir = Path(checkpoint_dir)
    config = ModelConfig.from_dict(read_config(checkpoint_dir)["model"])
    weights = checkpoint_dir / WEIGHTS
    if not weights.is_file():
        raise GrNeo4jError(f"{checkpoint_dir}: no {WEIGHTS} (training did not finish an epoch)")
    llm_model, tokenizer = llm if llm is not None else load_llm_named(config.llm, settings)
    model = GRetrieverModel(llm_model, tokenizer, config)
    load_weights(model, load_file(str(weights)), weights)
    return model.eval()


def answer(model: GRetrieverModel, samples: Sequence[SubgraphSample], batch_size: int = 8,
           max_new_tokens: int | None = None) -> list[str]:
    """Greedy answers of the model, one per sample, in order."""
    model.eval()
    out: list[str] = []
    for i in range(0, len(samples), batch_size):
        out.extend(model.generate(samples[i:i + batch_size], max_new_tokens))
    return out
