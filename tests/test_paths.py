"""The ``paths`` selection on a hand-built movie graph, with path texts embedded by a fixed table."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from gr_neo4j.retrieval.candidates import Candidates, merge
from gr_neo4j.retrieval.modes import score, select
from gr_neo4j.retrieval.paths.hops import fit_hop_model
from gr_neo4j.retrieval.paths.ranker import PathRanker
from gr_neo4j.retrieval.paths.scoring import PathScorer, complete_steps, rank_paths, select_paths, walks
from gr_neo4j.retrieval.paths.training import STEP_RANK, PathExample, fit, hop_accuracy, top1
from gr_neo4j.retrieval.retriever import RetrievalParams

DIM = 16
NODES = ["A", "F1", "F2", "F3", "D", "Y1997", "Y2001", "G"]  # A: an actor, the topic entity
RELS = ["starred actors", "directed by", "release year", "has genre"]
EDGES = [  # (head, relation, tail), edge ids 0..8
    ("F1", 0, "A"), ("F2", 0, "A"),
    ("F1", 1, "D"), ("F2", 1, "D"), ("F3", 1, "D"),
    ("F1", 2, "Y1997"), ("F2", 2, "Y2001"), ("F3", 2, "Y1997"),
    ("F1", 3, "G"),
]
NODE_SIM = [0.5, 0.0, 0.05, 0.0, 0.0, 0.2, 0.3, 0.0]
Q = np.eye(DIM, dtype=np.float32)[0]


def unit(cos: float, k: int) -> np.ndarray:
    """A unit vector whose cosine with Q is ``cos`` (the rest on axis ``k``)."""
    v = np.zeros(DIM, dtype=np.float32)
    v[0], v[k] = cos, np.sqrt(1 - cos**2)
    return v


def scorer(table: dict[str, float]) -> PathScorer:
    keys = sorted(table)
    return PathScorer(SimpleNamespace(encode=lambda texts: np.stack([unit(table.get(t, 0.0), 1 + keys.index(t) if t in table else DIM - 1) for t in texts])))


def candidates(topic=("A",)) -> Candidates:
    index = {k: i for i, k in enumerate(NODES)}
    rel_attr = np.stack([unit(0.1 * (i + 1), 10 + i) for i in range(len(RELS))])
    return Candidates(
        kind="knowledge-graph", embedder=None, dimension=DIM,
        node_ids=[f"n{i}" for i in range(len(NODES))], node_keys=NODES, node_texts=NODES,
        node_sim=np.array(NODE_SIM, dtype=np.float32), x=None,
        edge_ids=[f"e{i}" for i in range(len(EDGES))],
        edge_index=np.array([[index[h] for h, _, _ in EDGES], [index[t] for _, _, t in EDGES]], dtype=np.int64),
        edge_rel=np.array([r for _, r, _ in EDGES], dtype=np.int64), rel_texts=RELS, rel_attr=rel_attr,
        topic=np.array([index[t] for t in topic], dtype=np.int64),
    )


TABLE = {
    "starred actors directed by": 0.9,
    "starred actors release year": 0.5,
    "starred actors": 0.4,
    "starred actors has genre": 0.1,
    "starred actors directed by directed by": 0.95,
}


def test_walks_count_every_walk_never_back_to_the_root_nor_straight_back():
    w = walks(candidates(), np.array([0]), 3)
    texts = {pid: " ".join(RELS[r] for r, _ in w.steps[pid]) for pid in range(1, len(w.steps))}
    ends = {}
    for L in range(3):
        for p, n, k in zip(w.path[L], w.node[L], w.count[L]):
            ends.setdefault(texts[int(p)], {}).setdefault(NODES[n], 0)
            ends[texts[int(p)]][NODES[n]] += int(k)
    assert ends["starred actors"] == {"F1": 1, "F2": 1}
    assert ends["starred actors directed by"] == {"D": 2}
    assert ends["starred actors release year"] == {"Y1997": 1, "Y2001": 1}
    # From D onwards: never back to the film just left; F3 is reached by two walks (via F1, via F2).
    assert ends["starred actors directed by directed by"] == {"F1": 1, "F2": 1, "F3": 2}
    # Back from a year to another film; never back to the root A.
    assert ends["starred actors release year release year"] == {"F3": 1}
    assert all("A" not in e for e in ends.values())
    assert [RELS[r] + (" (reversed)" if rev else "") for r, rev in w.steps[1]] == ["starred actors (reversed)"]


def test_the_best_path_alone_gives_its_end_and_the_walk_to_it():
    nodes, edges, answers, *_ = select_paths(candidates(), np.array(NODE_SIM), Q, scorer(TABLE), hops=2, roots=np.array([0]), max_paths=1)
    assert [NODES[n] for n in nodes] == ["A", "F1", "D"]
    assert edges.tolist() == [0, 2]
    assert [NODES[n] for n in answers] == ["D"]  # the graph's own answer: the end of the best path


def test_paths_share_the_budget_round_robin_and_ties_go_to_the_more_similar_end():
    # Round 1: D (via F1) for the best path -> 3 nodes; then release years: Y1997 and Y2001 both have
    # one walk, Y2001 is more similar to the question -> A-F2-Y2001, 5 nodes = the budget.
    # Edges: the two walks (root outwards), then the candidate edges between chosen nodes (F2-D).
    nodes, edges, answers, *_ = select_paths(candidates(), np.array(NODE_SIM), Q, scorer(TABLE), hops=2, roots=np.array([0]), max_paths=3, budget=5)
    assert [NODES[n] for n in nodes] == ["A", "F1", "F2", "D", "Y2001"]
    assert edges.tolist() == [0, 2, 1, 6, 3]
    assert [NODES[n] for n in answers] == ["D"]  # the best path's, not the others'


def test_ends_reached_by_more_walks_come_first():
    # hops 3: the best path ends at F3 (two walks), F1 and F2 (one each; F2 more similar).
    nodes, edges, answers, *_ = select_paths(candidates(), np.array(NODE_SIM), Q, scorer(TABLE), hops=3, roots=np.array([0]), max_paths=1, budget=5)
    assert [NODES[n] for n in nodes] == ["A", "F1", "F2", "F3", "D"]
    assert edges.tolist() == [0, 2, 4, 3, 1]
    assert [NODES[n] for n in answers] == ["F3", "F2", "F1"]  # most walks, then most similar


def test_paths_mode_roots_at_the_most_similar_nodes_without_topic_and_respects_the_budget():
    c = candidates(topic=())
    params = RetrievalParams(mode="paths", hops=1, topk=1, node_budget=3).resolved("metaqa", "knowledge-graph")
    s = score(c, Q)
    # No topic: the root is the most similar node, A (0.5); hop-1 paths from A: "starred actors",
    # whose ends F1 and F2 have one walk each: F2 (more similar) first.
    nodes, edges = select("paths", c, s, params, scorer(TABLE))
    assert [NODES[n] for n in nodes] == ["A", "F1", "F2"] and edges.tolist() == [1, 0]
    with pytest.raises(ValueError, match="PathScorer"):
        select("paths", c, s, params)


def test_no_candidates_no_selection():
    c = candidates()
    empty = replace(c, node_ids=[], node_keys=[], node_texts=[], node_sim=np.zeros(0, np.float32), edge_ids=[], edge_index=np.zeros((2, 0), np.int64), edge_rel=np.zeros(0, np.int64), topic=np.zeros(0, np.int64))
    nodes, edges, answers, *_ = select_paths(empty, np.zeros(0), Q, scorer(TABLE), 2, np.zeros(0, np.int64))
    assert nodes.tolist() == [] and edges.tolist() == [] and answers.tolist() == []


def test_an_answer_cap_keeps_every_end_of_the_best_paths_past_the_budget():
    # Budget 3 alone keeps A-F1-D (the best path's end and its walk). With an answer cap, the two best
    # paths ("... directed by", "... release year") first keep every end: D, Y1997, Y2001; then
    # budget // 3 = 1 more node may come from the other paths (none fits: each needs a new film).
    kw = dict(hops=2, roots=np.array([0]), max_paths=3, budget=3)
    nodes, *_ = select_paths(candidates(), np.array(NODE_SIM), Q, scorer(TABLE), **kw)
    assert [NODES[n] for n in nodes] == ["A", "F1", "D"]
    nodes, *_ = select_paths(candidates(), np.array(NODE_SIM), Q, scorer(TABLE), answer_cap=10, **kw)
    assert [NODES[n] for n in nodes] == ["A", "F1", "F2", "D", "Y1997", "Y2001"]
    # The cap bounds the all-answers step: at 4 nodes only the year through F1 fits (Y2001 needs F2
    # too); then one more node from the round robin (F2, the end of "starred actors").
    nodes, *_ = select_paths(candidates(), np.array(NODE_SIM), Q, scorer(TABLE), answer_cap=4, **kw)
    assert [NODES[n] for n in nodes] == ["A", "F1", "F2", "D", "Y1997"]


def test_two_named_entities_meet_first_with_a_walk_from_each():
    # "films A acted in that D directed": walked alone, A reaches F1 and F2 in one step, D reaches
    # F1, F2 and F3; they meet at F1 and F2 (total length 2). Those come first, each with both walks;
    # F3 (D's only) and the years do not fit a budget of 4.
    table = {"starred actors": 0.6, "directed by": 0.6}
    c = candidates(topic=("A", "D"))
    nodes, edges, answers, scores, *_ = select_paths(c, np.array(NODE_SIM), Q, scorer(table), hops=2, roots=c.topic, budget=4, answer_cap=60, meet=True)
    assert [NODES[n] for n in nodes] == ["A", "F1", "F2", "D"]
    assert set(edges.tolist()) == {0, 1, 2, 3}
    assert sorted(NODES[n] for n in answers) == ["F1", "F2"]  # where the names meet
    assert scores.tolist() == [1.0, 1.0]  # reached from both names
    # Without meeting, the all-answers step keeps D's films too (F3), past the budget.
    nodes, *_ = select_paths(c, np.array(NODE_SIM), Q, scorer(table), hops=2, roots=c.topic, budget=4, answer_cap=60)
    assert "F3" in [NODES[n] for n in nodes]


def test_the_paths_mode_meets_only_from_several_topic_entities():
    c = candidates(topic=("A", "D"))
    params = RetrievalParams(mode="paths", hops=2, node_budget=4).resolved("metaqa", "knowledge-graph")
    nodes, _ = select("paths", c, score(c, Q), params, scorer({"starred actors": 0.6, "directed by": 0.6}))
    assert [NODES[n] for n in nodes] == ["A", "F1", "F2", "D"]


def test_complete_steps_asks_for_the_best_paths_only_when_they_may_be_cut():
    c = candidates()
    # Nothing capped and no node on the way has as many relationships as the fan-out: complete.
    assert complete_steps(c, Q, scorer(TABLE), hops=2, roots=np.array([0]), fanout=50, capped=False) == []
    # F1 (passed through on the way to D) has 4 candidate relationships: a fan-out of 4 may have cut it.
    steps = complete_steps(c, Q, scorer(TABLE), hops=2, roots=np.array([0]), fanout=4, capped=False)
    assert steps == [[("starred actors", False), ("directed by", True)], [("starred actors", False), ("release year", True)]]
    assert complete_steps(c, Q, scorer(TABLE), hops=2, roots=np.array([0]), fanout=50, capped=True) == steps


def test_merge_adds_only_what_is_missing_and_keeps_indices():
    c = candidates()
    extra = replace(c, node_ids=["n4", "n9"], node_keys=["D", "F9"], node_texts=["D", "F9"], node_sim=np.array([0.0, 0.7], np.float32), edge_ids=["e2", "e99"], edge_index=np.array([[1, 1], [0, 0]], np.int64), edge_rel=np.array([1, 1], np.int64), topic=np.zeros(0, np.int64))
    m = merge(c, extra)
    assert m.node_keys == NODES + ["F9"] and m.node_sim[-1] == np.float32(0.7)
    assert m.edge_ids == c.edge_ids + ["e99"]
    assert m.edge_index[:, -1].tolist() == [len(NODES), NODES.index("D")]  # F9 -directed by-> D
    assert merge(c, c) is c


# -- the learned relation-path ranker -----------------------------------------------------------


def test_an_untrained_ranker_is_the_cosine_and_its_length_bias_reorders_paths():
    zero = PathRanker(np.zeros((DIM, DIM), np.float32), np.zeros(3, np.float32), "table")
    c = candidates()
    w = walks(c, np.array([0]), 2)
    plain = rank_paths(c, w, Q, scorer(TABLE), 3)
    same = rank_paths(c, w, Q, scorer(TABLE).using(zero), 3)
    assert [(p.pid, round(p.sim, 5)) for p in plain] == [(p.pid, round(p.sim, 5)) for p in same]
    assert RELS[w.steps[plain[0].pid][0][0]] == "starred actors" and len(w.steps[plain[0].pid]) == 2
    one_hop = replace(zero, bias=np.array([1.0, 0.0, 0.0], np.float32))
    top = rank_paths(c, w, Q, scorer(TABLE).using(one_hop), 1)[0]
    assert len(w.steps[top.pid]) == 1 and top.sim == pytest.approx(1.4, abs=1e-5)


def test_scorers_made_with_using_share_the_vector_cache():
    calls = []
    base = PathScorer(SimpleNamespace(encode=lambda texts: calls.append(list(texts)) or np.stack([unit(0.5, 1) for _ in texts])))
    ranked = base.using(PathRanker(np.zeros((DIM, DIM), np.float32), np.zeros(1, np.float32), "table"))
    base.vectors(["a b"])
    ranked.vectors(["a b", "c"])
    assert calls == [["a b"], ["c"]] and base.using(None).ranker is None


def test_fit_learns_which_path_each_kind_of_question_means():
    # Two kinds of question (axis 3 or axis 4 besides the shared axis 0) and two paths: the cosine
    # always prefers "x", but questions of the first kind mean "y". Held-out top-1: 0.5 -> 1.0.
    rng = np.random.default_rng(0)
    vectors = {"x": unit(0.6, 1), "y": unit(0.4, 2)}

    def example(kind: int) -> PathExample:
        q = np.eye(DIM, dtype=np.float32)[0] + 0.6 * np.eye(DIM, dtype=np.float32)[3 + kind] + 0.05 * rng.standard_normal(DIM).astype(np.float32)
        return PathExample(q / np.linalg.norm(q), 1, [(("x", False),), (("y", False),)], np.array([kind == 1, kind == 0]))

    train = [example(k % 2) for k in range(40)]
    held = [example(k % 2) for k in range(20)]
    assert top1(held, None, vectors) == 0.5
    ranker = fit(train, vectors, "table", max_hops=1, epochs=30, lr=1e-2)
    assert top1(held, ranker, vectors) == 1.0
    assert ranker.weight.shape == (DIM, DIM) and ranker.bias.shape == (1,)


def test_the_step_term_tells_paths_apart_that_read_alike():
    # "a b" and "b a" (and "a" walked either way) get the same path vector, as a pooled sentence
    # encoder nearly gives them; only the order and direction of the steps tell them apart.
    rng = np.random.default_rng(1)
    same = unit(0.5, 1)
    vectors = {"a b": same, "b a": same, "a": unit(0.3, 2), "b": unit(0.3, 5)}
    paths = [(("a", False), ("b", False)), (("b", False), ("a", False)), (("a", True),), (("a", False),)]

    def example(kind: int) -> PathExample:
        q = np.eye(DIM, dtype=np.float32)[0] + 0.6 * np.eye(DIM, dtype=np.float32)[6 + kind] + 0.05 * rng.standard_normal(DIM).astype(np.float32)
        positive = np.array([kind == 0, kind == 1, kind == 2, kind == 3])
        return PathExample(q / np.linalg.norm(q), 2, paths, positive)

    train = [example(k % 4) for k in range(80)]
    held = [example(k % 4) for k in range(40)]
    assert top1(held, None, vectors) <= 0.5
    ranker = fit(train, vectors, "table", max_hops=2, epochs=40, lr=1e-2)
    assert top1(held, ranker, vectors) == 1.0
    assert ranker.step_rel.shape == (2, 2, DIM, STEP_RANK) and ranker.length_q.shape == (2, DIM)
    stored = PathRanker.from_record(ranker.to_properties())  # as stored on the Dataset node and read back
    for a, b in ((stored.step_rel, ranker.step_rel), (stored.step_q, ranker.step_q), (stored.length_q, ranker.length_q), (stored.weight, ranker.weight)):
        assert np.allclose(a, b, atol=1e-6)


def test_answer_scores_sum_the_probability_of_every_ranked_path_that_ends_there():
    # Two readings of the question, 0.95 (three relations: F1, F2, F3) and 0.93 (one: F1, F2):
    # F1 and F2 are answers under both, so they come first with the summed probability.
    table = {"starred actors directed by directed by": 0.95, "starred actors": 0.93}
    _, _, answers, scores, *_ = select_paths(candidates(), np.array(NODE_SIM), Q, scorer(table), hops=3, roots=np.array([0]), budget=10)
    p = np.exp(20 * 0.95) / (np.exp(20 * 0.95) + np.exp(20 * 0.93))
    assert [NODES[a] for a in answers] == ["F2", "F1", "F3"]  # F2 before F1: closer to the question
    assert scores == pytest.approx([1.0, 1.0, p], abs=1e-3)


def test_the_hop_model_learns_how_many_relations_a_question_needs():
    # Three kinds of masked question, each near its own direction, need 1, 2 or 3 relations.
    rng = np.random.default_rng(0)
    centres = np.eye(3, 8, dtype=np.float32)
    hops = np.repeat([1, 2, 3], 20)
    x = centres[hops - 1] + 0.1 * rng.standard_normal((60, 8)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    texts = [f"q{i}" for i in range(60)]
    hops_q, hops_bias = fit_hop_model(x, texts, hops, 3)
    ranker = PathRanker(np.zeros((8, 8), np.float32), np.zeros(3, np.float32), "e", hops_q=hops_q, hops_bias=hops_bias)
    p = ranker.hop_probabilities(centres[1], "q")
    assert p.shape == (3,) and abs(float(p.sum()) - 1) < 1e-5 and int(np.argmax(p)) == 1
    examples = [PathExample(v, int(h), [], np.zeros(0, bool), int(h), f"q{i}") for i, (v, h) in enumerate(zip(x, hops))]
    assert hop_accuracy(examples, ranker, {f"q{i}": v for i, v in enumerate(x)}) == 1.0
    assert PathRanker(np.zeros((8, 8), np.float32), np.zeros(3, np.float32), "e").hop_probabilities(centres[0], "q") is None
