"""A learned correction to how the ``paths`` mode ranks relation paths.

The cosine of the question to a path text ("directed by release year") ranks the right relation
path first for only about half of MetaQA's 2- and 3-hop questions: "when were the films directed by
X released" and "what films share a director with X" read alike to a sentence encoder. A ranker
trained on a dataset's own questions (``gr-neo4j train-paths``, :mod:`.path_training`) adds a
bilinear term and a per-length bias to that cosine::

    score(q, p, L) = q . p + q^T W p + bias[L - 1]

q ``[D]`` question vector, p ``[D]`` path-text vector (both unit length, the dataset's embedder),
L the number of relations of the path, W ``[D, D]``. W starts at zero, so an untrained ranker is the
cosine. It is stored on the dataset's ``Dataset`` node (it travels with the database and goes with
``drop``) and used by every client that retrieves from that dataset; retrieval can switch it off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..connection import Connection


@dataclass(frozen=True)
class PathRanker:
    """``weight`` ``[D, D]``, ``bias`` ``[H]`` (paths of 1..H relations; longer ones use the last),
    ``embedder``: the model the vectors come from; ``report``: how it was trained and what it scored."""

    weight: np.ndarray
    bias: np.ndarray
    embedder: str
    report: dict = field(default_factory=dict)

    def scores(self, q: np.ndarray, paths: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """``[P]`` scores of path vectors ``paths`` ``[P, D]`` with ``lengths`` ``[P]`` (relations)."""
        if len(paths) == 0:
            return np.zeros(0, dtype=np.float32)
        q = np.asarray(q, dtype=np.float32)
        at = np.clip(np.asarray(lengths, dtype=np.int64) - 1, 0, len(self.bias) - 1)
        return (paths @ (q + self.weight.T @ q) + self.bias[at]).astype(np.float32)

    def to_properties(self) -> dict:
        """The Dataset node properties it is stored as."""
        return {
            "weight": self.weight.astype(np.float64).reshape(-1).tolist(),
            "dimension": int(self.weight.shape[0]),
            "bias": self.bias.astype(np.float64).tolist(),
            "embedder": self.embedder,
            "report": json.dumps(self.report),
        }

    @classmethod
    def from_record(cls, rec) -> PathRanker | None:
        if rec is None or rec["weight"] is None:
            return None
        d = int(rec["dimension"])
        return cls(
            np.asarray(rec["weight"], dtype=np.float32).reshape(d, d),
            np.asarray(rec["bias"], dtype=np.float32),
            rec["embedder"],
            json.loads(rec["report"] or "{}"),
        )


def save_ranker(conn: Connection, dataset: str, ranker: PathRanker) -> None:
    """Store ``ranker`` on ``dataset``'s node (replacing any); the dataset must be loaded."""
    rows = conn.write("path_ranker_save", dataset=dataset, **ranker.to_properties())
    if not rows:
        raise ValueError(f"no dataset '{dataset}' is loaded")


def load_ranker(conn: Connection, dataset: str) -> PathRanker | None:
    """The ranker stored for ``dataset``, or None."""
    rows = conn.read("path_ranker_get", dataset=dataset)
    return PathRanker.from_record(rows[0]) if rows else None
