"""Checkpoints: only the learnt weights plus the configuration that rebuilds the model around them.

A checkpoint directory holds::

    checkpoint.json      {"format", "model": ModelConfig, "train": TrainConfig, "best": {...}}
    weights.safetensors  the best graph encoder and projector, and the node head (``head.``) where
                         the objective (``model.objective``) is node or joint; node: only the head
    adapter/             with LoRA, the best adapters in peft's format
                         (``PeftModel.from_pretrained(llm, "CKPT/adapter")`` loads them)
    last.pt              resume state: last weights, optimiser, scheduler, epoch, history, RNG states
    history.json, curves.png (written by training)

The frozen LLM is never copied: ``checkpoint.json`` names it, and loading asks :mod:`gr_neo4j.llm`
for it. The file is not called ``config.json``: Hugging Face tools take a directory holding that
name for a model of theirs. Checkpoints written before (``config.json``, LoRA weights inside
``weights.safetensors``) still load.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from ..atomic import atomic_path, atomic_write_text
from ..defaults import Decoding, Objective
from ..errors import BadInput, CheckpointMismatch, MissingInput, NotReady
from ..progress import Progress
from ..samples import SubgraphSample
from .batching import sorted_batches
from .config import ModelConfig
from .gretriever import GRetrieverModel
from .prompts import PROMPT_VERSION

FORMAT = "gr-neo4j-checkpoint/1"
CONFIG = "checkpoint.json"
LEGACY_CONFIG = "config.json"  # the name before adapters were saved in peft's format
WEIGHTS = "weights.safetensors"
ADAPTER = "adapter"
RESUME = "last.pt"
LLM_PREFIX = "llm."  # trainable tensors under this prefix are the LoRA adapters


def write_json(path: Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, default=str) + "\n")


def save_weights(model: GRetrieverModel, out: Path) -> None:
    """Write the encoder and projector to ``out/weights.safetensors`` and, with LoRA, the adapters
    to ``out/adapter/`` through peft; each file replaces its old version atomically."""
    state = {k: v for k, v in model.trainable_state_dict().items() if not k.startswith(LLM_PREFIX)}
    with atomic_path(out / WEIGHTS) as tmp:
        save_file(state, str(tmp))
    if model.config.lora:
        adapter = out / ADAPTER
        adapter.mkdir(exist_ok=True)
        # peft writes a directory; its two files (a fixed config, the weights) are moved in one by one.
        with tempfile.TemporaryDirectory(dir=out, prefix=".adapter.") as tmp:
            model.llm.save_pretrained(tmp)
            for name in sorted(os.listdir(tmp), key=lambda n: n.endswith(".json")):  # weights before config
                os.replace(Path(tmp) / name, adapter / name)


def load_weights(model: GRetrieverModel, state: dict[str, torch.Tensor], source: Path | str) -> None:
    """Load trainable weights; every expected tensor must be present and nothing else. Without
    LoRA tensors in ``state`` (the current layout) the adapters are expected from :func:`load_adapter`."""
    expected = set(model.trainable_state_dict())
    if not any(k.startswith(LLM_PREFIX) for k in state):
        expected = {k for k in expected if not k.startswith(LLM_PREFIX)}
    missing, unexpected = expected - set(state), set(state) - expected
    if missing or unexpected:
        raise CheckpointMismatch(
            f"{source}: weights do not fit the model (missing: {sorted(missing)[:5]}, unexpected: {sorted(unexpected)[:5]})"
        )
    model.load_state_dict(state, strict=False)


def load_adapter(model: GRetrieverModel, adapter: Path) -> None:
    """Load LoRA adapters saved in peft's format into the model's (peft-wrapped) LLM."""
    from peft import load_peft_weights, set_peft_model_state_dict

    if not (adapter / "adapter_config.json").is_file():
        raise MissingInput(f"{adapter.parent}: trained with LoRA but has no adapters in {adapter}")
    state = load_peft_weights(str(adapter), device="cpu")
    lora = [n for n, p in model.llm.named_parameters() if p.requires_grad]
    result = set_peft_model_state_dict(model.llm, state)
    if result.unexpected_keys or len(state) != len(lora):
        raise CheckpointMismatch(f"{adapter}: adapters do not fit the model ({len(state)} tensors for {len(lora)} LoRA weights)")


def config_path(checkpoint_dir: str | Path) -> Path:
    """``checkpoint.json``, or ``config.json`` in a checkpoint written before the rename."""
    checkpoint_dir = Path(checkpoint_dir)
    path = checkpoint_dir / CONFIG
    legacy = checkpoint_dir / LEGACY_CONFIG
    return legacy if not path.is_file() and legacy.is_file() else path


def read_config(checkpoint_dir: str | Path) -> dict:
    path = config_path(checkpoint_dir)
    if not path.is_file():
        raise MissingInput(f"{checkpoint_dir}: not a checkpoint directory (no {CONFIG})")
    try:
        config = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        found = config.get("format") if isinstance(config, dict) else None
        raise CheckpointMismatch(f"{path}: unknown checkpoint format {found!r} (expected {FORMAT})")
    version = config["model"].get("prompt_version")
    if version != PROMPT_VERSION:
        raise CheckpointMismatch(f"{path}: trained with prompt {version}, this version of gr-neo4j uses {PROMPT_VERSION}")
    return config


def load_llm_named(name: str, settings=None, progress: Progress | None = None):
    """(model, tokenizer) of the LLM a checkpoint names ('' = the configured default); ``progress``
    is told about a first-use GGUF conversion."""
    from .. import llm as llm_module
    from ..settings import load_settings

    settings = settings or load_settings()
    if not name or name == llm_module.llm_source(settings).name:
        return llm_module.load_llm(settings, progress=progress)
    return llm_module.load_llm_from(name)


def load_node_model(checkpoint_dir: str | Path):
    """The node head of a checkpoint trained with objective node or joint, alone (no LLM is
    loaded), as a :class:`~.answer_head.NodeModel` in eval mode."""
    from .answer_head import NodeModel

    checkpoint_dir = Path(checkpoint_dir)
    config = ModelConfig.from_dict(read_config(checkpoint_dir)["model"])
    if not config.has_head:
        raise CheckpointMismatch(f"{checkpoint_dir}: trained with objective {config.objective}, it has no node head")
    weights = _weights_file(checkpoint_dir)
    model = NodeModel(config)
    state = {k: v for k, v in load_file(str(weights)).items() if k.startswith("head.")}
    load_weights(model, state, weights)
    return model.eval()


def load_label_model(checkpoint_dir: str | Path):
    """The label classifier of a checkpoint trained with objective label (no LLM), as a
    :class:`~.label_model.LabelModel` in eval mode."""
    from .label_model import LabelModel

    checkpoint_dir = Path(checkpoint_dir)
    config = ModelConfig.from_dict(read_config(checkpoint_dir)["model"])
    if config.objective != Objective.LABEL:
        raise CheckpointMismatch(f"{checkpoint_dir}: trained with objective {config.objective}, it has no label classifier")
    weights = _weights_file(checkpoint_dir)
    model = LabelModel.from_checkpoint(checkpoint_dir, config)
    load_weights(model, load_file(str(weights)), weights)
    return model.eval()


def _weights_file(checkpoint_dir: Path) -> Path:
    weights = checkpoint_dir / WEIGHTS
    if not weights.is_file():
        raise NotReady(f"{checkpoint_dir}: no {WEIGHTS} (training did not finish an epoch)")
    return weights


def load_checkpoint(checkpoint_dir: str | Path, llm=None, settings=None, progress: Progress | None = None) -> GRetrieverModel:
    """The trained model of a checkpoint directory, in eval mode.

    Args:
        checkpoint_dir: written by :func:`gr_neo4j.model.training.train`.
        llm: an already loaded ``(model, tokenizer)`` to use instead of the one the config names.
        settings: used to find the LLM (default: :func:`gr_neo4j.settings.load_settings`).
        progress: told about a first-use conversion of the LLM.
    """
    checkpoint_dir = Path(checkpoint_dir)
    config = ModelConfig.from_dict(read_config(checkpoint_dir)["model"])
    if config.objective == Objective.NODE:
        raise CheckpointMismatch(f"{checkpoint_dir}: trained with objective node, a node head without an LLM (see load_node_model)")
    if config.objective == Objective.LABEL:
        raise CheckpointMismatch(f"{checkpoint_dir}: trained with objective label, a classifier without an LLM (see load_label_model)")
    weights = _weights_file(checkpoint_dir)
    llm_model, tokenizer = llm if llm is not None else load_llm_named(config.llm, settings, progress)
    model = GRetrieverModel(llm_model, tokenizer, config)
    state = load_file(str(weights))
    load_weights(model, state, weights)
    if config.lora and not any(k.startswith(LLM_PREFIX) for k in state):
        load_adapter(model, checkpoint_dir / ADAPTER)
    return model.eval()


def answer(model: GRetrieverModel, samples: Sequence[SubgraphSample], batch_size: int = 8,
           max_new_tokens: int | None = None, decoding: Decoding | str = Decoding.FREE,
           advance: Callable[[int], None] | None = None) -> list[str]:
    """Greedy answers of the model, one per sample, in order (``decoding``: see :class:`Decoding`).

    Batches are made of samples of similar length (:func:`.batching.sorted_batches`) to pad less;
    ``advance(n)`` is called after each batch of ``n`` samples (a progress callback)."""
    model.eval()
    out: list[str] = [""] * len(samples)
    for indices in sorted_batches(samples, batch_size):
        for i, text in zip(indices, model.generate([samples[i] for i in indices], max_new_tokens, decoding)):
            out[i] = text
        if advance is not None:
            advance(len(indices))
    return out
