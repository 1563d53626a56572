import math
import random

from gr_neo4j.model.batching import bucketed_batches


def _padded(lengths, batches):
    return sum(len(b) * max(lengths[i] for i in b) for b in batches)


def test_every_sample_once_in_full_batches():
    lengths = [random.Random(i).randint(5, 200) for i in range(1421)]
    batches = bucketed_batches(lengths, 16, seed=3)
    assert sorted(i for b in batches for i in b) == list(range(1421))
    assert len(batches) == math.ceil(1421 / 16)  # the learning-rate schedule counts on it
    assert sum(len(b) < 16 for b in batches) == 1


def test_fixed_by_seed_and_random_across_seeds():
    lengths = list(range(300))
    assert bucketed_batches(lengths, 8, seed=1) == bucketed_batches(lengths, 8, seed=1)
    assert bucketed_batches(lengths, 8, seed=1) != bucketed_batches(lengths, 8, seed=2)


def test_pads_less_than_random_batches():
    rng = random.Random(0)
    lengths = [rng.randint(20, 130) for _ in range(1000)]
    order = list(range(1000))
    rng.shuffle(order)
    shuffled = [order[i:i + 16] for i in range(0, 1000, 16)]
    assert _padded(lengths, bucketed_batches(lengths, 16, seed=0)) < 0.8 * _padded(lengths, shuffled)
