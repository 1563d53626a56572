"""Export a sentence-transformers model to ONNX once, from its own weights, into the cache.

    onnx_dir = ensure_exported(source.name, source.location, settings.cache_dir / "embedder", progress)

The directory holds `model.onnx` (input_ids, attention_mask [B, S] int64 -> embedding [B, D]
float32, pooling and L2 normalisation inside the graph), `tokenizer.json` and `embedder.json`
(dimension, max_seq_length, pad id, architecture, parameters, and the fingerprint of the weights
it came from). Nothing is downloaded: the export traces the model that sentence-transformers loads
from `source.location` (the packaged default is a local directory).

Why not sentence-transformers' own `backend="onnx"`: it needs optimum-onnx, which pins
transformers < 4.58 while sentence-transformers 6 needs transformers 5 (see docs/design.md).

The export is checked before it is kept: on a fixed set of probe texts (short, long, truncated,
padded in one batch) every ONNX vector must have cosine > 0.9999 to the torch vector, else the
export is refused with an error and nothing is cached. Like the LLM conversion (`gr_neo4j.llm`),
it is written into a temporary sibling directory and renamed into place when complete, under a
file lock, so a killed export never leaves a directory that looks usable.
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..atomic import build_directory
from ..errors import MissingInput, UsageError
from ..progress import NO_PROGRESS, Progress

# Bump when the exported graph or the files change, so old caches are redone rather than misread.
EXPORT_FORMAT = 1
MARKER = "embedder.json"
MIN_COSINE = 0.9999
# Short and long texts, one beyond any max_seq_length, non-ASCII and empty: one padded batch.
PROBES = [
    "",
    "directed by",
    "Tom Hanks",
    "what movies did Temuera Morrison act in",
    "Amélie — Le Fabuleux Destin d'Amélie Poulain (2001), 東京物語",
    "the films that share directors with the film Black Snow were in which genres " * 3,
    "word " * 600,
]


def cache_dir_for(name: str, location: str, cache_root: Path) -> Path:
    """`cache_root/<model name>-<hash of its location>`."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name.rstrip("/").rpartition("/")[2] or "model")[:60]
    return Path(cache_root) / f"{safe}-{hashlib.sha1(location.encode()).hexdigest()[:8]}"


def fingerprint(location: str) -> dict:
    """What the export depends on: the files of a local model (names, sizes, mtimes), or the hub id."""
    path = Path(location)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
    digest = hashlib.sha1()
    for p in files:
        s = p.stat()
        digest.update(f"{p.relative_to(path)}\0{s.st_size}\0{s.st_mtime_ns}\n".encode())
    return {"format": EXPORT_FORMAT, "source": location, "files": digest.hexdigest()}


def complete(target: Path, location: str, **expected) -> Path | None:
    """`target` if it holds a `model.onnx` made from the weights at `location` as they are now
    (and its marker carries the ``expected`` entries), else None."""
    try:
        meta = json.loads((target / MARKER).read_text())
    except (OSError, ValueError):
        return None
    current = meta.get("fingerprint") == fingerprint(location) and all(meta.get(k) == v for k, v in expected.items())
    return target if current and (target / "model.onnx").is_file() else None


def built(target: Path, find: Callable[[], Path | None], build: Callable[[Path], None]) -> Path:
    """`target`, first built by ``build`` (into a temporary sibling, under a lock) unless ``find`` finds it."""
    if find() is None:
        build_directory(target, lambda: find() is not None, build)
    return target


def exported(name: str, location: str, cache_root: Path) -> Path | None:
    """The cache directory of a complete export of the model at `location` as it is now, else None."""
    return complete(cache_dir_for(name, location, cache_root), location)


def ensure_exported(name: str, location: str, cache_root: Path, progress: Progress | None = None) -> Path:
    """The export directory of the model at `location`, exporting it first if the cache lacks it."""
    return built(cache_dir_for(name, location, cache_root), lambda: exported(name, location, cache_root),
                 lambda out: _export_into(name, location, out, progress or NO_PROGRESS))


def _export_into(name: str, location: str, out: Path, progress: Progress) -> None:
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    progress.note(f"exporting the embedding model {name} to ONNX (first use only)")
    hf_logging.disable_progress_bar()
    with progress.phase("export embedder to ONNX", total=3, unit="steps") as advance:
        try:
            model = SentenceTransformer(location, device="cpu")
        except OSError as exc:
            raise MissingInput(f"cannot load the embedding model {name} from {location}: {exc}") from None
        model.eval()
        backbone = getattr(model[0], "auto_model", None)
        if backbone is not None and hasattr(backbone, "set_attn_implementation"):
            # SDPA's fast paths branch on the mask in Python, which a trace would freeze.
            backbone.set_attn_implementation("eager")
        tokenizer = model.tokenizer
        with_types = "token_type_ids" in getattr(tokenizer, "model_input_names", ())
        wrapper = _pooled(model, with_types)
        ids = torch.tensor([[101, 2000, 2001, 102], [101, 2000, 102, 0]], dtype=torch.long)
        mask = (ids != 0).long()  # one padded row, so the mask's use is traced
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the tracer's and the legacy exporter's notices
            torch.onnx.export(
                wrapper, (ids, mask), str(out / "model.onnx"), input_names=["input_ids", "attention_mask"],
                output_names=["embedding"], opset_version=17, dynamo=False,
                dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"}, "embedding": {0: "batch"}},
            )
        advance(1)
        config = getattr(backbone, "config", None)
        if getattr(config, "model_type", None) == "bert":
            _fuse_bert(out / "model.onnx", config)
        advance(1)
        tokenizer.save_pretrained(str(out))
        if not (out / "tokenizer.json").is_file():
            raise UsageError(f"cannot export {name} to ONNX: its tokenizer has no fast (tokenizer.json) form; use GR_NEO4J_EMBEDDER_BACKEND=torch")
        dimension = int((getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension)())
        meta = {
            "fingerprint": fingerprint(location),
            "name": name,
            "dimension": dimension,
            "max_seq_length": int(model.max_seq_length),
            "pad_id": int(tokenizer.pad_token_id or 0),
            "architecture": type(backbone).__name__ if backbone is not None else type(model).__name__,
            "parameters": int(sum(p.numel() for p in model.parameters())),
        }
        reference = model.encode(PROBES, normalize_embeddings=True, convert_to_numpy=True)
        _check(name, out, meta, reference)
        (out / MARKER).write_text(json.dumps(meta, indent=1))
        advance(1)


def _pooled(model, with_types: bool):
    """The whole sentence-transformers stack (transformer, pooling, dense...) plus L2 normalisation,
    as one module of (input_ids, attention_mask) [B, S] -> [B, D]. Built here so that importing this
    module needs no torch."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            if with_types:
                features["token_type_ids"] = torch.zeros_like(input_ids)
            vector = self.model(features)["sentence_embedding"]
            return torch.nn.functional.normalize(vector, p=2, dim=1)

    return Pooled().eval()


def _fuse_bert(path: Path, config) -> None:
    """ONNX Runtime's BERT fusions (attention, skip layer norm, GELU): about 1.4x on CPU."""
    from onnxruntime.transformers.optimizer import optimize_model

    fused = optimize_model(str(path), model_type="bert", num_heads=int(config.num_attention_heads), hidden_size=int(config.hidden_size), opt_level=1)
    fused.save_model_to_file(str(path))


def _check(name: str, out: Path, meta: dict, reference: np.ndarray) -> None:
    """Refuse an export whose vectors differ from the torch model's on the probe texts."""
    from .onnx import OnnxEncoder

    vectors = OnnxEncoder(out, meta).encode(PROBES, batch_size=len(PROBES))
    cosine = (vectors * reference).sum(axis=1)
    if vectors.shape != reference.shape or float(cosine.min()) < MIN_COSINE:
        worst = int(np.argmin(cosine))
        raise UsageError(
            f"the ONNX export of {name} does not match the torch model (cosine {cosine[worst]:.5f} on probe {worst}); "
            "use GR_NEO4J_EMBEDDER_BACKEND=torch"
        )
