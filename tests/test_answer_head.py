"""The question-conditioned node head: labels, shapes, and that it learns which node answers."""

from __future__ import annotations

import torch

from gr_neo4j.model.answer_head import AnswerHead, answer_mask, evaluate_head, topic_flags, train_head
from gr_neo4j.samples import SubgraphSample, load_samples, save_samples
from gr_neo4j.textualize import to_data

DIM = 16


def graphs(n: int, seed: int) -> tuple[list[SubgraphSample], torch.Tensor]:
    """n star graphs of 4-6 nodes around a topic node 0: the answer is the leaf whose vector is the
    question's (plus noise); the topic node is the question too, so only its flag tells it apart."""
    g = torch.Generator().manual_seed(seed)
    samples, qs = [], []
    for i in range(n):
        size = 4 + i % 3
        q = torch.nn.functional.normalize(torch.randn(DIM, generator=g), dim=0)
        x = torch.nn.functional.normalize(torch.randn(size, DIM, generator=g), dim=1)
        answer = 1 + i % (size - 1)
        x[answer] = torch.nn.functional.normalize(q + 0.1 * torch.randn(DIM, generator=g), dim=0)
        x[0] = q
        edge_index = torch.tensor([[0] * (size - 1), list(range(1, size))])
        texts = [f"node {i}.{j}" for j in range(size)]
        data = to_data(x, edge_index, torch.randn(size - 1, DIM, generator=g))
        samples.append(SubgraphSample(str(i), f"q{i}", texts[answer], "", data, "metaqa", texts, [j == 0 for j in range(size)]))
        qs.append(q)
    return samples, torch.stack(qs)


def test_answer_mask_normalises_and_reads_several_answers():
    assert answer_mask(["The Matrix", "Keanu Reeves", "1999"], "matrix|1999").tolist() == [1.0, 0.0, 1.0]
    assert answer_mask(["x"], "").tolist() == [0.0]


def test_topic_flags_default_to_zero_when_a_sample_does_not_say():
    samples, _ = graphs(2, 0)
    samples[1].topic = []
    flags = topic_flags(samples)
    assert flags.tolist()[:4] == [1.0, 0.0, 0.0, 0.0] and flags[4:].sum() == 0 and len(flags) == 4 + 5


def test_the_head_learns_which_node_answers():
    train, q_train = graphs(200, 0)
    test, q_test = graphs(60, 1)
    head = AnswerHead("gt", DIM, hidden=32, layers=2, heads=4, dropout=0.0)
    before = evaluate_head(head, test, q_test)
    probs = head.score(test[:3], q_test[:3])
    assert [len(p) for p in probs] == [4, 5, 6] and all(((p >= 0) & (p <= 1)).all() for p in probs)
    losses = train_head(head, train, q_train, epochs=30, lr=3e-3)
    after = evaluate_head(head, test, q_test)
    assert losses[-1] < losses[0]
    assert after.hit_at_1 >= 0.9 > before.hit_at_1 and after.f1 >= 0.8


def test_samples_keep_their_topic_flags_and_older_files_load(tmp_path):
    samples, _ = graphs(2, 0)
    path = save_samples(tmp_path / "s.pt", samples)
    assert [s.topic for s in load_samples(path)] == [s.topic for s in samples]
    blob = torch.load(path, weights_only=True)
    for d in blob["samples"]:
        del d["topic"]  # a file written before topic flags existed
    torch.save(blob, path)
    assert [s.topic for s in load_samples(path)] == [[], []]
