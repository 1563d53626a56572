"""A learned correction to how the ``paths`` mode ranks relation paths.

The cosine of the question to a path text ("directed by release year") ranks the right relation
path first for only about half of MetaQA's 2- and 3-hop questions: "when were the films directed by
X released" and "what films share a director with X" read alike to a sentence encoder. A ranker
trained on a dataset's own questions (``gr-neo4j train-paths``, :mod:`.training`) adds to that
cosine a bilinear term, a term that reads the path step by step, and a length term::

    score(q, p) = q . p + q^T W p + (A^T q) . sum_i B[i, d_i]^T r_i + q . U[L - 1] + bias[L - 1]

q ``[D]`` question vector, p ``[D]`` path-text vector, r_i ``[D]`` the vector of the text of the
path's i-th relation and d_i whether it was walked backwards (all unit length, the dataset's
embedder), L the number of relations. W ``[D, D]`` reads the path as a bag of words; A ``[D, K]``
and B ``[H, 2, D, K]`` (low rank K) see which relation comes where and in which direction, which a
pooled sentence vector blurs ("films starring the director's actors" against "directors of the
actors' films"); U ``[H, D]`` lets the question choose the path length ("who directed X" is one
relation even when longer paths read alike). W, B and U start at zero, so an untrained ranker is
the cosine.

It also carries a hop model (:mod:`.hops`): a softmax over 1..H relations of the question
with the entities it names masked ("what movies did NAME act in"), so that ``--hops`` can be left
to the question: asked two deep, "what movies did X direct" otherwise finds the films of X's
co-directors too. It is stored on the dataset's ``Dataset`` node (it travels with the database and goes
with ``drop``) and used by every client that retrieves from that dataset; retrieval can switch it off.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...connection import Connection
from .hops import hop_probabilities
from .plan import PathPlan

Step = tuple[str, bool]  # (relation text, walked backwards)
PLAN_PROPERTIES = ("plan_paths", "plan_weight", "plan_bias", "plan_strength")
SCALE = 20.0  # logits = SCALE * score: cosines live in [-1, 1], too flat for a softmax


@dataclass(frozen=True)
class PathRanker:
    """``weight`` ``[D, D]``, ``bias`` ``[H]`` (paths of 1..H relations; longer ones use the last),
    ``embedder``: the model the vectors come from; ``report``: how it was trained and what it scored.
    ``step_q`` ``[D, K]``, ``step_rel`` ``[H, 2, D, K]`` and ``length_q`` ``[H, D]``: the step and
    length terms; ``hops_q`` ``[H, D + B]`` (``[H, D]`` in rankers stored before its n-grams) and
    ``hops_bias`` ``[H]``: the hop model; ``plan``: the path plan (:mod:`.plan`). None:
    absent, as in rankers stored before they existed."""

    weight: np.ndarray
    bias: np.ndarray
    embedder: str
    report: dict = field(default_factory=dict)
    step_q: np.ndarray | None = None
    step_rel: np.ndarray | None = None
    length_q: np.ndarray | None = None
    hops_q: np.ndarray | None = None
    hops_bias: np.ndarray | None = None
    plan: PathPlan | None = None

    @property
    def answer_floor(self) -> float | None:
        """The score under which a path that no word of the question asks for is not an answer
        (:func:`~.path_training.answer_floor`; None in rankers stored before it)."""
        floor = self.report.get("answer_floor")
        return None if floor is None else float(floor)

    def hop_probabilities(self, masked_q: np.ndarray, masked_text: str) -> np.ndarray | None:
        """``[H]`` the probability that the question needs 1..H relations, read from it with the
        entities it names masked (:func:`~..linking.masked`): ``masked_text`` and its vector
        ``masked_q`` ``[D]`` (:mod:`.hops`); None without a hop model."""
        if self.hops_q is None:
            return None
        return hop_probabilities(self.hops_q, self.hops_bias, masked_q, masked_text)

    def step_projection(self, rel_vectors: np.ndarray) -> np.ndarray | None:
        """``[H, 2, R, K]`` B[i, d]^T r of each relation vector ``rel_vectors`` ``[R, D]`` at each
        step position and direction (None without a step term). It depends on the ranker and the
        relation texts only, so a scorer computes it once per vocabulary, not per question."""
        if self.step_q is None:
            return None
        return np.einsum("rd,hbdk->hbrk", np.asarray(rel_vectors, dtype=np.float32), self.step_rel)

    def scores(
        self, q: np.ndarray, paths: np.ndarray, lengths: np.ndarray,
        steps: np.ndarray | None = None, backwards: np.ndarray | None = None, projection: np.ndarray | None = None,
    ) -> np.ndarray:
        """``[P]`` scores of path vectors ``paths`` ``[P, D]`` with ``lengths`` ``[P]`` (relations).
        ``steps`` ``[P, H']`` int: each step's row in ``projection`` (:meth:`step_projection` of
        the relation vectors; -1 past the path's end), ``backwards`` ``[P, H']`` bool; needed for
        the step term when the ranker has one."""
        if len(paths) == 0:
            return np.zeros(0, dtype=np.float32)
        q = np.asarray(q, dtype=np.float32)
        at = np.clip(np.asarray(lengths, dtype=np.int64) - 1, 0, len(self.bias) - 1)
        out = paths @ (q + self.weight.T @ q) + self.bias[at]
        if self.length_q is not None:
            out = out + (self.length_q @ q)[at]
        if self.step_q is not None and steps is not None:
            z = np.zeros((len(paths), self.step_q.shape[1]), dtype=np.float32)
            for i in range(min(steps.shape[1], projection.shape[0])):
                on = steps[:, i] >= 0
                z[on] += projection[i, backwards[on, i].astype(np.int64), steps[on, i]]
            out = out + z @ (self.step_q.T @ q)
        return out.astype(np.float32)

    def to_properties(self) -> dict:
        """The Dataset node properties it is stored as."""

        def flat(a: np.ndarray | None) -> list[float] | None:
            return None if a is None else a.astype(np.float64).reshape(-1).tolist()

        return {
            "weight": flat(self.weight),
            "dimension": int(self.weight.shape[0]),
            "bias": flat(self.bias),
            "embedder": self.embedder,
            "report": json.dumps(self.report),
            "step_q": flat(self.step_q),
            "step_rel": flat(self.step_rel),
            "length_q": flat(self.length_q),
            "hops_q": flat(self.hops_q),
            "hops_bias": flat(self.hops_bias),
            **(self.plan.to_properties() if self.plan is not None else dict.fromkeys(PLAN_PROPERTIES)),
        }

    @classmethod
    def from_record(cls, rec) -> PathRanker | None:
        if rec is None or rec["weight"] is None:
            return None
        d = int(rec["dimension"])
        bias = np.asarray(rec["bias"], dtype=np.float32)
        step_q = step_rel = length_q = None
        if rec["step_q"] is not None:
            step_q = np.asarray(rec["step_q"], dtype=np.float32).reshape(d, -1)
            step_rel = np.asarray(rec["step_rel"], dtype=np.float32).reshape(len(bias), 2, d, step_q.shape[1])
        if rec["length_q"] is not None:
            length_q = np.asarray(rec["length_q"], dtype=np.float32).reshape(len(bias), d)
        hops_q = hops_bias = None
        if rec["hops_q"] is not None:
            hops_bias = np.asarray(rec["hops_bias"], dtype=np.float32)
            hops_q = np.asarray(rec["hops_q"], dtype=np.float32).reshape(len(hops_bias), -1)
        return cls(
            np.asarray(rec["weight"], dtype=np.float32).reshape(d, d), bias, rec["embedder"], json.loads(rec["report"] or "{}"),
            step_q, step_rel, length_q, hops_q, hops_bias, PathPlan.from_record(rec),
        )


def step_arrays(paths: Sequence[Sequence[Step]], rel_row: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """``[P, H]`` the row (``rel_row``: relation text -> row of the projection) of each path's
    steps, -1 past its end, and ``[P, H]`` whether each step was walked backwards."""
    h = max((len(p) for p in paths), default=0)
    steps = np.full((len(paths), h), -1, dtype=np.int64)
    backwards = np.zeros((len(paths), h), dtype=bool)
    for i, path in enumerate(paths):
        for j, (rel, back) in enumerate(path):
            steps[i, j] = rel_row[rel]
            backwards[i, j] = back
    return steps, backwards


def save_ranker(conn: Connection, dataset: str, ranker: PathRanker) -> None:
    """Store ``ranker`` on ``dataset``'s node (replacing any); the dataset must be loaded."""
    rows = conn.write("path_ranker_save", dataset=dataset, **ranker.to_properties())
    if not rows:
        raise ValueError(f"no dataset '{dataset}' is loaded")


def load_ranker(conn: Connection, dataset: str) -> PathRanker | None:
    """The ranker stored for ``dataset``, or None."""
    rows = conn.read("path_ranker_get", dataset=dataset)
    return PathRanker.from_record(rows[0]) if rows else None
