"""`HashEmbedder`: a fast deterministic stand-in for the embedding model, for loads too large to
embed with the real one in a benchmark's time.

Each text gets a unit vector drawn from a random generator seeded by a hash of the text: the same
text always gets the same vector, different texts get unrelated ones. It is **not semantic**: the
cosine of a question to a node says nothing, so retrieval recall measured with it is a plumbing
figure (topic entities and relation paths still work; vector seeds and the path cosine are noise).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

DIMENSION = 384  # all-MiniLM-L6-v2's, so the store and its vector indexes have the real sizes


class HashEmbedder:
    """Encodes texts into ``[N, dimension]`` float32 unit vectors, one hash-seeded draw per text."""

    def __init__(self, dimension: int = DIMENSION):
        self.dimension = dimension
        self.name = f"hash-{dimension} (deterministic, not semantic)"

    def encode(self, texts: Sequence[str], batch_size: int = 256, show_progress: bool = False) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dimension, dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out
