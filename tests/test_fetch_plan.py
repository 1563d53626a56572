"""The fetch plan: the step schema, the paths it allows from a named entity, and which of them a
zero-shot fetch follows (the Neo4j side: tests/test_retrieval_candidates.py, tests/test_linking.py)."""

from __future__ import annotations

import numpy as np
import pytest

from gr_neo4j.retrieval.fetch_plan import MAX_UNTRUSTED, TRUSTED, FetchPlan, StepSchema, plan_fetch, schema_paths

D, D_, G, G_ = ("directed by", False), ("directed by", True), ("has genre", False), ("has genre", True)
# A film graph in (incoming texts, outgoing texts, nodes): 100 films with a director and a genre, 40
# directors, 5 genres, and 1 film named like a director (it is both: a node is a name).
SIGNATURES = [([], ["directed by", "has genre"], 100), (["directed by"], [], 40), (["has genre"], [], 5),
              (["directed by"], ["directed by", "has genre"], 1)]


@pytest.fixture()
def schema() -> StepSchema:
    return StepSchema.of(SIGNATURES)


def test_the_schema_says_which_steps_follow_which_and_how_often(schema):
    # Arrived at a director (along "directed by"), 41 nodes: each leaves back to its films, one also
    # leaves as a film would, the name's coincidence.
    assert schema.follows[D] == {D_: 1.0, D: 1 / 41, G: 1 / 41}
    assert schema.follows[D_] == {D: 1.0, G: 1.0, D_: 1 / 101}  # arrived at a film, from its director
    assert StepSchema.from_json(schema.to_json()) == schema


def test_a_step_that_few_of_its_nodes_take_is_not_trusted(schema):
    assert 1 / 41 > TRUSTED  # a coincidence in a small graph is still trusted
    rare = StepSchema.of([([], ["directed by", "has genre"], 1000), (["directed by"], [], 400), (["directed by"], ["has genre"], 1)])
    assert rare.follows[D][G] < TRUSTED
    assert rare.trusted((D,)) and rare.trusted((D, D_)) and not rare.trusted((D, G)) and not rare.trusted((G, D))


def test_paths_start_where_the_entity_does_and_follow_the_schema(schema):
    paths = schema_paths({D_}, schema, 2)  # from a director
    assert paths == [(D_,), (D_, D), (D_, D_), (D_, G)]
    assert schema_paths({D, G}, schema, 1) == [(D,), (G,)]
    assert len(schema_paths({D_}, schema, 3)) == 1 + 3 + 7
    assert schema_paths({D_}, schema, 3, cap=5) is None


def test_the_plan_follows_the_best_trusted_path_and_every_path_ranked_above_it():
    schema = StepSchema.of([([], ["directed by", "has genre"], 1000), (["directed by"], [], 400), (["directed by"], ["has genre"], 1)])
    # From a film: its director's genre (no such thing but by coincidence) reads best, then the
    # genres of the director's films, then the director.
    paths = [(D,), (G,), (D, G), (D, D_, G), (D, D_)]
    plan = plan_fetch(paths, np.array([0.5, 0.2, 0.9, 0.8, 0.3]), schema, keep=4)
    assert plan.paths == ((D, G), (D, D_, G), (D,), (D, D_))
    assert plan.depth == 3 and plan.allowed == (("directed by",), ("directed by", "has genre"), ("has genre",))
    # The best path trusted: the plan is as deep as it, and the runners-up no deeper.
    plan = plan_fetch(paths, np.array([0.9, 0.2, 0.1, 0.8, 0.3]), schema, keep=3)
    assert plan.paths == ((D,), (G,))
    assert plan.depth == 1 and plan.allowed == (("directed by", "has genre"),)


def test_ties_go_to_the_shorter_path_and_a_plan_needs_a_trusted_one(schema):
    plan = plan_fetch([(D, D_), (D,)], np.array([1.0, 1.0]), schema, keep=1)
    assert plan == FetchPlan(((D,),), (("directed by",),))
    assert plan_fetch([], np.zeros(0), schema) is None
    rare = StepSchema.of([([], ["directed by"], 1000), (["directed by"], ["has genre"], 1), (["directed by"], [], 999)])
    untrusted = [(D, G, (f"r{i}", False)) for i in range(MAX_UNTRUSTED + 1)]
    assert plan_fetch([*untrusted, (D,)], np.array([1.0] * len(untrusted) + [0.0]), rare) is None
    assert plan_fetch(untrusted, np.ones(len(untrusted)), rare) is None
