"""The path plan: which relation path a question asks for, from its words (no database needed)."""

from types import SimpleNamespace

import numpy as np
import pytest

from gr_neo4j.retrieval.paths.plan import PathPlan, fit_path_plan, plan_term
from gr_neo4j.retrieval.paths.ranker import PathRanker
from gr_neo4j.retrieval.paths.scoring import PathScorer
from gr_neo4j.retrieval.paths.training import PathExample, top1

WRITER_DIRECTED = (("written by", False), ("written by", True), ("directed by", False))
DIRECTOR_ACTED = (("directed by", False), ("directed by", True), ("starred actors", False))
ASKS = {
    WRITER_DIRECTED: ["who directed movies for the writer of NAME", "who directed the films written by the writer of NAME"],
    DIRECTOR_ACTED: ["who acted in the movies directed by the director of NAME", "who starred in films by the director of NAME"],
}


def _plan(dim: int = 4) -> PathPlan:
    texts = [t for p in ASKS for t in ASKS[p]] * 3
    positives = [[p] for p in ASKS for _ in ASKS[p]] * 3
    vectors = np.ones((len(texts), dim), np.float32) / 2  # one vector for all: only the words tell
    return fit_path_plan(vectors, texts, positives)


def test_the_plan_reads_which_relations_a_question_chains_from_its_words():
    plan = _plan()
    assert set(plan.paths) == set(ASKS) and plan.strength == 0.0
    lp = plan.log_probabilities(np.ones(4, np.float32) / 2, "who directed films for the writer of NAME")
    assert sum(np.exp(list(lp.values()))) == pytest.approx(1.0, abs=1e-5)
    assert lp[WRITER_DIRECTED] > lp[DIRECTOR_ACTED] + 1
    lp = plan.log_probabilities(np.ones(4, np.float32) / 2, "who acted in films directed by the director of NAME")
    assert lp[DIRECTOR_ACTED] > lp[WRITER_DIRECTED] + 1


def test_a_path_the_plan_never_saw_scores_as_its_least_likely_known_one():
    lp = {WRITER_DIRECTED: -0.1, DIRECTOR_ACTED: -2.5}
    unseen = (("has genre", False),)
    assert plan_term(lp, [WRITER_DIRECTED, unseen, DIRECTOR_ACTED]).tolist() == pytest.approx([-0.1, -2.5, -2.5])
    assert plan_term({}, [unseen]).tolist() == [0.0]


def test_the_plan_survives_its_node_properties():
    plan = _plan()
    back = PathPlan.from_record(plan.to_properties())
    assert back.paths == plan.paths and np.allclose(back.weight, plan.weight) and np.allclose(back.bias, plan.bias)
    assert PathPlan.from_record({"plan_paths": None}) is None


def test_a_planned_scorer_adds_the_plan_and_top1_sees_it():
    # The ranker alone (cosine) prefers the director path for a writer question; the plan turns it.
    dim = 4
    plan = _plan(dim)
    vectors = {
        "written by directed by": np.array([1, 0, 0, 0], np.float32),  # hypothetical path texts' vectors
        "written by written by directed by": np.array([0.6, 0.8, 0, 0], np.float32),
        "directed by directed by starred actors": np.array([0.8, 0.6, 0, 0], np.float32),
    }
    q = np.array([1, 0, 0, 0], np.float32)
    masked = "who directed movies for the writer of NAME"
    encoder = SimpleNamespace(encode=lambda texts: np.stack([vectors.get(t, np.ones(dim, np.float32) / 2) for t in texts]))
    ranker = PathRanker(np.zeros((dim, dim), np.float32), np.zeros(3, np.float32), "e")
    paths = [WRITER_DIRECTED, DIRECTOR_ACTED]
    alone = PathScorer(encoder, ranker).scores(paths, q)
    assert alone[1] > alone[0]
    assert PathScorer(encoder, ranker).planned(masked).plan_lp is None  # no plan: the ranker alone
    with_plan = PathScorer(encoder, PathRanker(ranker.weight, ranker.bias, "e", plan=PathPlan(plan.paths, plan.weight, plan.bias, 0.5)))
    scored = with_plan.planned(masked).scores(paths, q)
    assert scored[0] > scored[1]
    # top1 (what training tunes the strength on) sees the same term.
    ex = PathExample(q, 3, paths, np.array([True, False]), 3, masked)
    table = {**vectors, masked: np.ones(dim, np.float32) / 2, "written by": np.ones(dim) / 2, "directed by": np.ones(dim) / 2, "starred actors": np.ones(dim) / 2}
    assert top1([ex], ranker, table) == 0.0
    assert top1([ex], with_plan.ranker, table) == 1.0
