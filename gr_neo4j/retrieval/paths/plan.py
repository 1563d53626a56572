"""The path plan: which relation path a question asks for, read from its words.

MetaQA's 3-hop questions are where the relation-path ranker (:mod:`.ranker`) errs most: it
compares each path's text with the question's vector, and "who directed movies for the writer of
NAME" (written by, back along written by, directed by) reads much like "who acted in the movies
directed by the director of NAME". Like RoG's planning step, but as a classifier rather than a
generator, the plan is a softmax over the relation paths seen as positives in training (each a
sequence of (relation text, walked backwards) steps) of the question with its names masked, on the
hop model's features (:func:`~.hops.hop_features`: sentence vector and hashed word n-grams).
Its log-probability, times a ``strength`` tuned on held-out training questions, is added to each
path's ranker score; a path it never saw scores as its least likely seen one, so a question
unlike any in training falls back to the ranker.

On 947 MetaQA 3-hop dev questions (after the first 300) and tested on the first 300, a probe
raised the held-out top-1 path from 0.732 (ranker) to 0.812–0.847 for strengths 0.025–0.1.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .hops import NGRAM_BUCKETS, hop_features, hop_logits, ngram_rows

Step = tuple[str, bool]  # (relation text, walked backwards), as in :mod:`.ranker`
Signature = tuple[Step, ...]


@dataclass(frozen=True)
class PathPlan:
    """``paths`` ``[S]`` the relation paths it knows, ``weight`` ``[S, D + B]`` and ``bias``
    ``[S]`` of its softmax, ``strength``: how much its log-probability weighs against the ranker's
    score (in cosine units)."""

    paths: tuple[Signature, ...]
    weight: np.ndarray
    bias: np.ndarray
    strength: float

    def log_probabilities(self, masked_q: np.ndarray, masked_text: str) -> dict[Signature, float]:
        """Relation path -> its log-probability for the masked question (``masked_q`` ``[D]``)."""
        x = hop_features(np.asarray(masked_q, dtype=np.float32)[None], [masked_text], self.weight.shape[1] - len(masked_q))[0]
        logits = self.weight @ x + self.bias
        logits = logits - logits.max()
        lp = logits - np.log(np.exp(logits).sum())
        return dict(zip(self.paths, lp.tolist()))

    def to_properties(self) -> dict:
        return {
            "plan_paths": json.dumps([[[rel, back] for rel, back in p] for p in self.paths]),
            "plan_weight": self.weight.astype(np.float64).reshape(-1).tolist(),
            "plan_bias": self.bias.astype(np.float64).tolist(),
            "plan_strength": float(self.strength),
        }

    @classmethod
    def from_record(cls, rec) -> PathPlan | None:
        if rec.get("plan_paths") is None:
            return None
        paths = tuple(tuple((rel, bool(back)) for rel, back in p) for p in json.loads(rec["plan_paths"]))
        bias = np.asarray(rec["plan_bias"], dtype=np.float32)
        weight = np.asarray(rec["plan_weight"], dtype=np.float32).reshape(len(bias), -1)
        return cls(paths, weight, bias, float(rec["plan_strength"]))


def plan_term(plan_lp: dict[Signature, float], paths: Sequence[Signature]) -> np.ndarray:
    """``[P]`` the plan's log-probability of each of ``paths``; one it does not know gets the
    least of those it knows for this question (no worse than any, no better)."""
    floor = min(plan_lp.values()) if plan_lp else 0.0
    return np.array([plan_lp.get(tuple(p), floor) for p in paths], dtype=np.float32)


def fit_path_plan(
    masked_q: np.ndarray, masked_texts: Sequence[str], positives: Sequence[Sequence[Signature]],
    epochs: int = 300, lr: float = 0.05, seed: int = 0,
) -> PathPlan:
    """Fit the softmax over every path that is a positive somewhere in ``positives`` (per
    question, its positive relation paths) from the masked questions (``masked_q`` ``[N, D]``,
    ``masked_texts`` ``[N]``): the loss is minus the log of the probability on a question's
    positives together, as several paths can be right. ``strength`` is left at 0 for the caller
    to tune (:func:`tune_strength`)."""
    import torch

    paths = tuple(sorted({tuple(p) for ps in positives for p in ps}))
    index = {p: i for i, p in enumerate(paths)}
    torch.manual_seed(seed)
    dense = torch.from_numpy(np.asarray(masked_q, dtype=np.float32))
    grams = ngram_rows(masked_texts)
    target = torch.zeros(len(masked_texts), len(paths), dtype=torch.bool)
    for i, ps in enumerate(positives):
        for p in ps:
            target[i, index[tuple(p)]] = True
    weight = torch.zeros(len(paths), dense.shape[1] + NGRAM_BUCKETS, requires_grad=True)
    bias = torch.zeros(len(paths), requires_grad=True)
    opt = torch.optim.Adam([weight, bias], lr=lr, weight_decay=1e-5)
    for _ in range(epochs):
        lp = torch.log_softmax(hop_logits(dense, grams, weight, bias), dim=1)
        loss = -torch.logsumexp(lp.masked_fill(~target, -1e9), dim=1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return PathPlan(paths, weight.detach().numpy().copy(), bias.detach().numpy().copy(), 0.0)


STRENGTHS = (0.0, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5)  # cosine units per nat; 0: the ranker alone
