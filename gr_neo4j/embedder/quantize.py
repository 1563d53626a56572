"""Quantise the ONNX export of the embedding model to int8 once, into the cache beside it.

    int8_dir = ensure_quantized(source.name, source.location, settings.cache_dir / "embedder", progress)

ONNX Runtime's dynamic quantisation: every MatMul's weights become int8 with one scale per output
channel, activations are quantised per batch at run time. It needs no calibration data and runs
with the same `OnnxEncoder`. On this project's 2-core AVX2 CPU it embeds MetaQA's texts 1.3-1.4x as
fast as the float32 export, 2.4-2.5x torch (scripts/bench_embed.py, scripts/bench_load.py), at a
cosine to the float32 vectors of 0.99 on average; the README gives the measured retrieval figures
next to float32's.

The directory `<export>-int8` holds the export's files with the quantised `model.onnx`; its
`embedder.json` adds "quantization". It is checked before it is kept: on the export's probe texts
every int8 vector must have cosine >= 0.95 to the float32 one and 0.98 on average (a guard against
a broken quantisation, not the quality measure), else it is refused and nothing is cached. Built
in a temporary sibling and renamed into place under a file lock, like the export.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..progress import NO_PROGRESS, Progress
from .export import MARKER, PROBES, built, cache_dir_for, complete, ensure_exported

# What was done to the weights; a change here redoes old caches rather than misreading them.
QUANTIZATION = {"weights": "int8", "per_channel": True, "activations": "dynamic uint8", "format": 1}
MIN_PROBE_COSINE = 0.95
MIN_MEAN_PROBE_COSINE = 0.98


def quantized_dir_for(name: str, location: str, cache_root: Path) -> Path:
    """`cache_root/<model name>-<hash of its location>-int8`."""
    export = cache_dir_for(name, location, cache_root)
    return export.with_name(f"{export.name}-int8")


def quantized(name: str, location: str, cache_root: Path) -> Path | None:
    """The directory of a complete int8 model of the weights at `location` as they are now, else None."""
    return complete(quantized_dir_for(name, location, cache_root), location, quantization=QUANTIZATION)


def ensure_quantized(name: str, location: str, cache_root: Path, progress: Progress | None = None) -> Path:
    """The int8 model's directory, exporting and quantising first where the cache lacks them."""
    if (found := quantized(name, location, cache_root)) is not None:
        return found
    export = ensure_exported(name, location, cache_root, progress)
    return built(quantized_dir_for(name, location, cache_root), lambda: quantized(name, location, cache_root),
                 lambda out: _quantize_into(name, export, out, progress or NO_PROGRESS))


def _quantize_into(name: str, export: Path, out: Path, progress: Progress) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from .onnx import OnnxEncoder

    progress.note(f"quantising the embedding model {name} to int8 (first use only)")
    for path in export.iterdir():
        if path.name not in ("model.onnx", MARKER) and path.is_file():
            shutil.copy2(path, out / path.name)
    with _root_logger_quiet():
        # DefaultTensorType: the fused attention's outputs carry no type, which the quantiser needs.
        quantize_dynamic(str(export / "model.onnx"), str(out / "model.onnx"), weight_type=QuantType.QInt8,
                         per_channel=True, extra_options={"DefaultTensorType": 1})
    meta = json.loads((export / MARKER).read_text()) | {"quantization": QUANTIZATION}
    check(name, OnnxEncoder(out, meta).encode(PROBES), OnnxEncoder(export).encode(PROBES))
    (out / MARKER).write_text(json.dumps(meta, indent=1))


@contextmanager
def _root_logger_quiet() -> Iterator[None]:
    """The quantiser logs a pre-processing hint with `logging.warning`, which would also give the
    root logger a stderr handler for the rest of the process; a null handler and level ERROR stop both."""
    root = logging.getLogger()
    level, handler = root.level, logging.NullHandler()
    root.addHandler(handler)
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def check(name: str, vectors: np.ndarray, reference: np.ndarray) -> None:
    """Refuse int8 probe vectors [P, D] too far from the float32 ones [P, D]."""
    cosine = (vectors * reference).sum(axis=1)
    if vectors.shape != reference.shape or cosine.min() < MIN_PROBE_COSINE or cosine.mean() < MIN_MEAN_PROBE_COSINE:
        raise UsageError(
            f"the int8 quantisation of {name} strays too far from its float32 export (probe cosine min "
            f"{cosine.min():.4f}, mean {cosine.mean():.4f}); use GR_NEO4J_EMBEDDER_BACKEND=onnx"
        )
