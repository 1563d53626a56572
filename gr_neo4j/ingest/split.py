"""G-Retriever's 60/20/20 random split (seed 42), reproduced without scikit-learn.

G-Retriever calls `train_test_split(indices, test_size=0.4, random_state=42)` and splits the 40 %
again with `test_size=0.5, random_state=42`. scikit-learn's shuffle split draws
`RandomState(seed).permutation(n)`, takes the first ceil(test_size * n) positions as test and the
rest as train; the same arithmetic here gives the identical index lists.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def train_test(items: np.ndarray, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's `train_test_split(items, test_size=…, random_state=seed)` for one array: (train, test)."""
    n = len(items)
    n_test = math.ceil(test_size * n)
    permutation = np.random.RandomState(seed).permutation(n)
    return items[permutation[n_test:]], items[permutation[:n_test]]


def paper_split(n: int, seed: int = 42) -> dict[str, list[int]]:
    """Row indices 0..n-1 -> {'train': [...], 'val': [...], 'test': [...]} as G-Retriever splits them."""
    indices = np.arange(n)
    train, rest = train_test(indices, 0.4, seed)
    val, test = train_test(rest, 0.5, seed)
    return {"train": train.tolist(), "val": val.tolist(), "test": test.tolist()}


def split_of_rows(n: int, seed: int = 42) -> list[str]:
    """[n] split name of every row under `paper_split`."""
    names = [""] * n
    for name, rows in paper_split(n, seed).items():
        for i in rows:
            names[i] = name
    return names


def split_of_groups(groups: Sequence[str], seed: int = 42) -> dict[str, str]:
    """G-Retriever's scene-graph split: image ids (in first-appearance order) -> split name.

    The ids are shuffled with `np.random.seed(seed); np.random.permutation(ids)` first and then
    split 60/20/20 like `paper_split`, exactly as its preprocessing does.
    """
    unique = np.array(list(dict.fromkeys(groups)), dtype=object)
    shuffled = np.random.RandomState(seed).permutation(unique)  # == np.random.seed(seed); np.random.permutation
    train, rest = train_test(shuffled, 0.4, seed)
    val, test = train_test(rest, 0.5, seed)
    return {**{g: "train" for g in train}, **{g: "val" for g in val}, **{g: "test" for g in test}}
