"""The GNN + LLM model of G-Retriever: graph encoder, projector, frozen or LoRA-tuned LLM, training,
evaluation and answering."""

from .checkpoint import answer, load_checkpoint
from .encoder import GNN_TYPES, GraphEncoder
from .evaluation import EvalResult, evaluate
from .gretriever import GRetrieverModel, ModelConfig
from .prompts import PROMPT_VERSION
from .training import TrainConfig, TrainResult, train

__all__ = [
    "GNN_TYPES", "PROMPT_VERSION", "EvalResult", "GRetrieverModel", "GraphEncoder", "ModelConfig", "TrainConfig",
    "TrainResult", "answer", "evaluate", "load_checkpoint", "train",
]
