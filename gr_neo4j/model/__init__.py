"""The GNN + LLM model of G-Retriever: graph encoder, projector, frozen or LoRA-tuned LLM, training,
evaluation and answering."""

from .checkpoint import answer, load_checkpoint
from .encoder import GNN_TYPES, GraphEncoder
from .gretriever import GRetrieverModel, ModelConfig
from .prompts import PROMPT_VERSION

__all__ = ["GNN_TYPES", "PROMPT_VERSION", "GRetrieverModel", "GraphEncoder", "ModelConfig", "answer", "load_checkpoint"]
