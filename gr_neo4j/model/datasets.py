"""Training data of the model: subgraph samples and their fixed train/val/test split.

Two sources: a samples file written by ``gr-neo4j retrieve --out`` (any dataset, retrieved
subgraphs), or the dataset's own file where its loader can build samples from it (ExplaGraphs' TSV:
whole graphs, no retrieval, as the paper), embedded once and cached under
``settings.cache_dir/samples``. Either way the samples are split 60/20/20
with seed 42 exactly as G-Retriever does (``train_test_split`` twice), so train and eval agree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import MissingInput, UsageError
from ..ingest.source import LOADER_MODULES, facts_of
from ..samples import SubgraphSample, load_samples, save_samples

SPLITS = ("train", "val", "test")


def split_indices(n: int, seed: int = 42) -> dict[str, np.ndarray]:
    """G-Retriever's split: 60% train, then the remaining 40% halved into val and test (the loader's
    `paper_split`, so training and the Question splits in Neo4j agree)."""
    from ..ingest.split import paper_split

    if n < 5:
        raise MissingInput(f"{n} samples are too few to split 60/20/20")
    return {name: np.asarray(rows) for name, rows in paper_split(n, seed).items()}


def cached_file_samples(dataset: str, tsv: Path, settings) -> list[SubgraphSample]:
    """The samples the dataset's loader builds from its file ``tsv`` (ExplaGraphs: whole graphs),
    embedded with the configured embedder (cached)."""
    from ..embedder import embedder_source, load_embedder

    build = facts_of(dataset).samples_from_file
    if build is None:
        readable = [name for name in LOADER_MODULES if facts_of(name).samples_from_file]
        raise UsageError(f"training reads a dataset's own file only for {', '.join(readable)}; for {dataset!r} pass --retrieved FILE")
    tsv = Path(tsv).expanduser().resolve()
    if not tsv.is_file():
        raise MissingInput(f"{tsv}: no such {dataset} file")
    stat = tsv.stat()
    name = embedder_source(settings).name  # the cache key needs the name only: load the model on a miss
    # "v2": sample ids are 0-based rows (the loader's graph ids); older caches used line numbers
    key = hashlib.sha1(f"v2|{tsv}|{stat.st_size}|{stat.st_mtime_ns}|{name}".encode()).hexdigest()[:12]
    cache = settings.cache_dir / "samples" / f"{dataset}-{key}.pt"
    if cache.is_file():
        return load_samples(cache)
    samples = build(tsv, load_embedder(settings))
    save_samples(cache, samples)
    return samples


def load_split(dataset: str, split: str, *, retrieved: Path | None = None, tsv: Path | None = None,
               settings=None, seed: int = 42, limit: int | None = None) -> list[SubgraphSample]:
    """The samples of one split (``limit`` keeps the first ones, for quick runs)."""
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r} (choose from {', '.join(SPLITS)})")
    return load_splits(dataset, retrieved=retrieved, tsv=tsv, settings=settings, seed=seed, limit=limit)[split]


def load_splits(dataset: str, *, retrieved: Path | None = None, tsv: Path | None = None, settings=None,
                seed: int = 42, limit: int | None = None) -> dict[str, list[SubgraphSample]]:
    if retrieved is not None:
        samples = load_samples(retrieved)
        wrong = {s.dataset for s in samples} - {dataset}
        if wrong:
            raise MissingInput(f"{retrieved}: holds samples of {sorted(wrong)}, not only of dataset {dataset!r}")
    elif tsv is not None:
        if settings is None:
            from ..settings import load_settings

            settings = load_settings()
        samples = cached_file_samples(dataset, tsv, settings)
    else:
        raise UsageError("no training data: pass --retrieved FILE (from gr-neo4j retrieve --out) or, for ExplaGraphs, --tsv FILE")
    return split_samples(samples, seed, limit)


def split_samples(samples: Sequence[SubgraphSample], seed: int = 42, limit: int | None = None) -> dict[str, list[SubgraphSample]]:
    idx = split_indices(len(samples), seed)
    return {name: [samples[i] for i in ids[:limit]] for name, ids in idx.items()}
