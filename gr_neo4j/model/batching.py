"""Length-bucketed batches: shuffled buckets for training, sorted ones for evaluation.

A batch is padded to its longest sample, so batches of random samples spend much of their compute
on padding (ExplaGraphs as the label classifier reads it: 46 % more tokens than the samples hold).
The usual remedy: shuffle, sort each pool of ``pool * batch_size`` samples by length, cut the pools
into batches and shuffle the batches, so each batch holds samples of about one length while the
order stays random from epoch to epoch.

transformers' ``get_length_grouped_indices`` (its Trainer's ``group_by_length``) sorts pools the
same way but leaves each pool's batches in descending length; where length tracks the label (the
tests' stance graphs: ``desires`` against ``not desires``), that feeds one label's batches, then
the other's, every epoch, and the classifier did not learn. Shuffling the batches avoids it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ..samples import SubgraphSample

POOL = 8  # batches per sorted pool: larger pools pad less and shuffle less


def text_length(sample: SubgraphSample) -> int:
    """Characters of the question and the textualised graph, a proxy for the tokens a sample takes."""
    return len(sample.question) + len(sample.desc)


def bucketed_batches(lengths: Sequence[int], batch_size: int, seed: int, pool: int = POOL) -> list[list[int]]:
    """Indices of ``lengths`` in batches of at most ``batch_size``, each of similar lengths, in a
    random order fixed by ``seed``; every index appears exactly once."""
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(lengths), generator=generator).tolist()
    span = batch_size * pool
    batches = []
    for start in range(0, len(order), span):
        chunk = sorted(order[start:start + span], key=lengths.__getitem__)
        batches += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


def sorted_batches(samples: Sequence[SubgraphSample], batch_size: int) -> list[list[int]]:
    """Indices of ``samples`` by ascending :func:`text_length`, in batches of at most ``batch_size``:
    for evaluation, where order does not matter but padding does (MetaQA's textualized subgraphs
    run from 20 to 1,500 tokens, so one long sample in a batch of 16 pads fifteen others to it)."""
    order = sorted(range(len(samples)), key=lambda i: text_length(samples[i]))
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
