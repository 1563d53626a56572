"""Embed phase: every distinct text of a load is encoded once, in length-sorted batches.

MetaQA has 43k entity names but only 9 relation texts, and WebQSP repeats its relations across
thousands of subgraphs, so encoding distinct texts (not rows) is most of the saving. Rows that are
already in the database with an embedding from the same model never reach this phase (see
`pipeline`), which is what makes a re-load cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..embedder import Embedder

# Texts per call to the model: big enough for efficient batches, small enough for a lively progress bar.
CHUNK = 4096


@dataclass
class TextVectors:
    """Distinct texts and their vectors: `matrix` is [len(texts), D] float32, unit length."""

    index: dict[str, int]
    matrix: np.ndarray

    def __len__(self) -> int:
        return len(self.index)

    @classmethod
    def from_known(cls, known: dict[str, list[float]], dimension: int) -> TextVectors:
        """Vectors read back from the database (texts that a resumed load need not encode again)."""
        matrix = np.asarray(list(known.values()), dtype=np.float32).reshape(len(known), dimension)
        return cls({t: i for i, t in enumerate(known)}, matrix)

    def merged(self, other: TextVectors) -> TextVectors:
        offset = len(self.index)
        index = {**self.index, **{t: i + offset for t, i in other.index.items()}}
        return TextVectors(index, np.concatenate([self.matrix, other.matrix]))

    def rows_of(self, texts: list[str]) -> np.ndarray:
        """[len(texts)] row numbers into `matrix`."""
        return np.fromiter((self.index[t] for t in texts), dtype=np.int64, count=len(texts))


def embed_distinct(
    embedder: Embedder,
    texts: Iterable[str],
    batch_size: int = 256,
    advance: Callable[[int], None] | None = None,
) -> TextVectors:
    """Encode each distinct text once; `advance(n)` is called after every chunk (progress)."""
    distinct = list(dict.fromkeys(texts))
    # Sorting by length keeps padding low across chunks (the model only sorts inside one call).
    order = sorted(range(len(distinct)), key=lambda i: len(distinct[i]))
    matrix = np.zeros((len(distinct), embedder.dimension), dtype=np.float32)
    for start in range(0, len(order), CHUNK):
        rows = order[start : start + CHUNK]
        matrix[rows] = embedder.encode([distinct[i] for i in rows], batch_size=batch_size)
        if advance:
            advance(len(rows))
    return TextVectors({t: i for i, t in enumerate(distinct)}, matrix)
