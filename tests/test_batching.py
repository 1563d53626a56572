import math
import random

from test_model_support import tiny_samples

from gr_neo4j.model.batching import bucketed_batches, sorted_batches, text_length
from gr_neo4j.model.checkpoint import answer


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


def test_sorted_batches_cover_every_sample_once_shortest_first():
    samples = tiny_samples(11)
    for i, s in enumerate(samples):
        s.desc = "x" * (97 * i % 13)
    batches = sorted_batches(samples, 4)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(11)) and [len(b) for b in batches] == [4, 4, 3]
    assert [text_length(samples[i]) for i in flat] == sorted(text_length(s) for s in samples)


def test_answers_come_back_in_the_callers_order_whatever_the_batches():
    class Echo:  # generates each sample's question: the answer says whose it is
        def eval(self):
            return self

        def generate(self, batch, max_new_tokens, decoding):
            return [s.question for s in batch]

    samples = tiny_samples(9)
    for i, s in enumerate(samples):
        s.question, s.desc = f"q{i}", "x" * (9 - i)
    seen = []
    assert answer(Echo(), samples, batch_size=4, advance=seen.append) == [f"q{i}" for i in range(9)]
    assert seen == [4, 4, 1]
