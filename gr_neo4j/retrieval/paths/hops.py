"""The hop model: how many relations a question needs, read from its words.

A softmax over 1..H relations of ``V x + c``, x the features of the question with the entities it
names masked (:func:`~..linking.masked`, "NAME directed which movies"): its sentence vector ``[D]``
and its hashed word 1- to 3-grams ``[B]``, each of unit length. Why the n-grams: a sentence encoder
puts "NAME directed which movies" (one relation) next to "the director of NAME also directed which
movies" (two), and word order is what tells them apart. Fitted on all MetaQA dev questions but the
first 300 per hop count and tested on those 300 (masked by the linker, as ``ask`` masks them), the
vector alone predicted 0.737 / 0.987 / 0.997 of the 1- / 2- / 3-hop questions right, vector and
n-grams 0.997 / 1.0 / 1.0.

The weights live in the dataset's :class:`~.ranker.PathRanker` (``hops_q`` ``[H, D + B]``);
one of ``[H, D]``, stored before the n-grams existed, reads the vector alone.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np

NGRAM_BUCKETS = 4096  # 3 x 4096 weights: collisions among a dataset's few thousand n-grams are rare
NGRAM_SIZES = (1, 2, 3)
_WORD = re.compile(r"\w+")


def ngram_features(text: str, buckets: int = NGRAM_BUCKETS) -> np.ndarray:
    """``[buckets]`` counts of ``text``'s word 1- to 3-grams (lower case, with start and end
    marks) hashed by CRC-32 (stable across processes, unlike ``hash``), of unit length."""
    words = ["<s>", *_WORD.findall(text.casefold()), "</s>"]
    out = np.zeros(buckets, dtype=np.float32)
    for n in NGRAM_SIZES:
        for i in range(len(words) - n + 1):
            out[zlib.crc32(" ".join(words[i : i + n]).encode()) % buckets] += 1.0
    return out / max(float(np.linalg.norm(out)), 1e-12)


def hop_features(vectors: np.ndarray, texts: Sequence[str], buckets: int = NGRAM_BUCKETS) -> np.ndarray:
    """``[N, D + buckets]``: the masked questions' vectors ``[N, D]`` beside their n-grams."""
    grams = np.stack([ngram_features(t, buckets) for t in texts]) if len(texts) else np.zeros((0, buckets), np.float32)
    return np.concatenate([np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1), grams], axis=1)


def ngram_rows(texts: Sequence[str], buckets: int = NGRAM_BUCKETS):
    """``[N, buckets]`` the :func:`ngram_features` of ``texts`` as a sparse torch matrix: a few
    dozen of 4,096 entries are non-zero, so fitting multiplies by it sparsely (minutes, not tens)."""
    import torch

    rows, cols, vals = [], [], []
    for i, t in enumerate(texts):
        f = ngram_features(t, buckets)
        nz = np.flatnonzero(f)
        rows += [i] * len(nz)
        cols += nz.tolist()
        vals += f[nz].tolist()
    index = torch.tensor([rows, cols], dtype=torch.int64).reshape(2, -1)
    values = torch.tensor(vals, dtype=torch.float32)
    return torch.sparse_coo_tensor(index, values, (len(texts), buckets), check_invariants=True).coalesce()


def hop_logits(dense, grams, weight, bias):
    """``[N, C]`` logits of ``weight`` ``[C, D + B]`` and ``bias`` ``[C]`` over the features split
    in a dense part ``dense`` ``[N, D]`` and a sparse one ``grams`` ``[N, B]`` (:func:`ngram_rows`)."""
    import torch

    d = dense.shape[1]
    return dense @ weight[:, :d].T + torch.sparse.mm(grams, weight[:, d:].T) + bias


def hop_probabilities(weight: np.ndarray, bias: np.ndarray, vector: np.ndarray, text: str) -> np.ndarray:
    """``[H]`` P(1..H relations) of one masked question (``vector`` ``[D]``, ``text``) under
    ``weight`` ``[H, D]`` (vector only) or ``[H, D + B]`` and ``bias`` ``[H]``."""
    x = np.asarray(vector, dtype=np.float32)
    if weight.shape[1] > len(x):
        x = hop_features(x[None], [text], weight.shape[1] - len(x))[0]
    logits = weight @ x + bias
    e = np.exp(logits - logits.max())
    return (e / e.sum()).astype(np.float32)


def fit_hop_model(
    vectors: np.ndarray, texts: Sequence[str], hops: np.ndarray, max_hops: int,
    epochs: int = 300, lr: float = 0.05, seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``[H, D + B]`` weights and ``[H]`` biases of the softmax regression from masked questions
    (``vectors`` ``[N, D]``, ``texts`` ``[N]``) to their hop counts ``hops`` ``[N]`` (1..H):
    full-batch Adam with a little weight decay. Repeated (text, hop count) pairs, the rule in
    template-made datasets, are fitted once with their count as weight."""
    import torch

    labels = np.clip(np.asarray(hops, dtype=np.int64), 1, max_hops) - 1
    row: dict[tuple[str, int], int] = {}
    for i, key in enumerate(zip(texts, labels.tolist())):
        row.setdefault(key, i)
    first = np.fromiter(row.values(), dtype=np.int64, count=len(row))
    counts = np.bincount([row[k] for k in zip(texts, labels.tolist())], minlength=len(texts))[first]
    torch.manual_seed(seed)
    dense = torch.from_numpy(np.asarray(vectors, dtype=np.float32)[first])
    grams = ngram_rows([texts[i] for i in first])
    y = torch.from_numpy(labels[first])
    w = torch.from_numpy((counts / counts.sum()).astype(np.float32))
    weight = torch.zeros(max_hops, dense.shape[1] + NGRAM_BUCKETS, requires_grad=True)
    bias = torch.zeros(max_hops, requires_grad=True)
    opt = torch.optim.Adam([weight, bias], lr=lr, weight_decay=1e-4)
    for _ in range(epochs):
        loss = (torch.nn.functional.cross_entropy(hop_logits(dense, grams, weight, bias), y, reduction="none") * w).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return weight.detach().numpy().copy(), bias.detach().numpy().copy()
