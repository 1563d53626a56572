"""The GNN + LLM model of G-Retriever: graph encoder, projector, frozen or LoRA-tuned LLM, training,
evaluation and answering.

The names below are imported on first use (PEP 562): ``gr_neo4j.model.config`` (the dataclasses
whose defaults the CLI shows) stays light, and torch, PyG, transformers and peft load only when a
model is built. ``gr_neo4j.answer.load_answerer`` is where answering brings them in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes
from .config import ModelConfig, TrainConfig
from .prompts import PROMPT_VERSION

_LAZY = {
    "answer": "checkpoint", "load_checkpoint": "checkpoint", "GNN_TYPES": "encoder", "GraphEncoder": "encoder",
    "EvalResult": "evaluation", "evaluate": "evaluation", "GRetrieverModel": "gretriever",
    "TrainResult": "training", "train": "training",
}

if TYPE_CHECKING:
    from .checkpoint import answer, load_checkpoint
    from .encoder import GNN_TYPES, GraphEncoder
    from .evaluation import EvalResult, evaluate
    from .gretriever import GRetrieverModel
    from .training import TrainResult, train


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "GNN_TYPES", "PROMPT_VERSION", "EvalResult", "GRetrieverModel", "GraphEncoder", "ModelConfig", "TrainConfig",
    "TrainResult", "answer", "evaluate", "load_checkpoint", "train",
]
