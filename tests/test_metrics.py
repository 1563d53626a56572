"""Metrics against hand-checked examples."""

from __future__ import annotations

import pytest

from gr_neo4j.metrics import (
    answer_items,
    answer_set_scores,
    explagraphs_correct,
    first_stance,
    hallucinated,
    hit_at_1,
    hop_group,
    names_outside,
    normalize,
    scene_graph_correct,
    score,
)


def test_normalize_lowercases_drops_punctuation_and_articles_and_collapses_spaces():
    assert normalize("  The Lord of the Rings: The Return of the King! ") == "lord of rings return of king"
    assert normalize("An apple, a day.") == "apple day"
    assert normalize("Theater") == "theater"  # 'the' only as a whole word


@pytest.mark.parametrize("prediction, gold, hit", [
    ("Tom Hanks", ["tom hanks"], True),
    ("The answer is tom hanks.", "Tom Hanks", True),
    ("Hanks", "Tom Hanks", False),  # gold must be inside the prediction, not the reverse
    ("Steven Spielberg|Tom Hanks", "George Lucas|Tom Hanks", True),  # any gold answer
    ("The Matrix", "Matrix", True),  # articles dropped on both sides
    ("", "Tom Hanks", False),
    ("1999", ["1998"], False),
])
def test_hit_at_1(prediction, gold, hit):
    assert hit_at_1(prediction, gold) is hit


@pytest.mark.parametrize("prediction, gold, ok", [
    ("support", "support", True),
    ("Counter", "counter", True),
    ("They counter each other, they do not support", "counter", True),
    ("They support, not counter", "counter", False),  # the first stance word counts
    ("supports", "support", True),
    ("neither", "support", False),
])
def test_explagraphs_accuracy_uses_the_first_stance_word(prediction, gold, ok):
    assert explagraphs_correct(prediction, gold) is ok


def test_first_stance_is_none_without_one():
    assert first_stance("I cannot tell") is None


@pytest.mark.parametrize("prediction, gold, ok", [
    ("yes", "yes", True), ("The cup is red.", "red", True), ("blue", "red", False), ("anything", "", False),
])
def test_scene_graph_accuracy(prediction, gold, ok):
    assert scene_graph_correct(prediction, gold) is ok


def test_hallucination_checks_every_answer_item_against_the_subgraph():
    nodes = ["tom hanks", "Forrest Gump", "robert zemeckis"]
    assert answer_items("Tom Hanks | Robin Wright, x") == ["tom hanks", "robin wright", "x"]
    assert not hallucinated("Tom Hanks", nodes)
    assert not hallucinated("The director is Robert Zemeckis.", nodes)  # node named inside the item
    assert not hallucinated("zemeckis", nodes)  # item names part of a node
    assert hallucinated("Tom Hanks|Robin Wright", nodes)  # one item outside the subgraph
    assert hallucinated("Steven Spielberg", nodes)
    assert hallucinated("hanks tom", nodes)  # whole words in order, not bags of words
    assert not hallucinated("", nodes) and not hallucinated("not in the graph", nodes)


def test_score_aggregates_hit_at_1_and_hallucination_for_kgqa_only():
    kg = score("metaqa", ["Tom Hanks", "Steven Spielberg", "nobody"], ["tom hanks", "Spielberg", "x"],
               [["tom hanks"], ["steven spielberg"], ["x"]])
    assert (kg.metric, kg.correct, kg.total, kg.hallucinated) == ("hit@1", 2, 3, 1)
    assert kg.value == pytest.approx(2 / 3) and kg.hallucination_rate == pytest.approx(1 / 3)
    stance = score("explagraphs", ["support", "counter"], ["support", "support"], [[], []])
    assert (stance.metric, stance.value, stance.hallucination_rate) == ("accuracy", 0.5, None)
    with pytest.raises(ValueError):
        score("metaqa", ["a"], [], [])


def test_answer_sets_score_exact_items_after_normalisation():
    assert answer_set_scores("Forrest Gump|The Polar Express", "forrest gump|polar express|Cast Away") == pytest.approx((1.0, 2 / 3, 0.8))
    assert answer_set_scores("Forrest Gump; Big", ["Forrest Gump"]) == pytest.approx((0.5, 1.0, 2 / 3))
    assert answer_set_scores("the film is Forrest Gump", ["Forrest Gump"]) == (0.0, 0.0, 0.0)  # a sentence is not the entity
    assert answer_set_scores("", ["Forrest Gump"]) == (0.0, 0.0, 0.0)


def test_a_known_name_with_a_comma_is_one_item():
    nodes = ["Kiss Me, Guido", "Lust, Caution", "Big"]
    assert answer_items("Kiss Me, Guido|Big", nodes) == ["kiss me guido", "big"]
    assert answer_items("Kiss Me, Guido|Big") == ["kiss me", "guido", "big"]  # unknown: a list
    assert answer_items("Tom Hanks, Robin Wright", nodes) == ["tom hanks", "robin wright"]
    # the graph's answers and constrained decoding write node texts: never outside, never hallucinated
    assert not names_outside("Kiss Me, Guido|Lust, Caution", nodes) and not hallucinated("Lust, Caution", nodes)
    assert names_outside("Kiss Me, Hanks", nodes)
    assert answer_set_scores("Lust, Caution|Big", ["Lust, Caution"]) == pytest.approx((0.5, 1.0, 2 / 3))
    assert score("metaqa", ["Lust, Caution"], ["Lust, Caution"], [nodes]).outside_rate == 0.0


def test_names_outside_is_exact_where_hallucinated_is_lenient():
    nodes = ["Tom Hanks", "Robert Zemeckis", "Forrest Gump"]
    assert not names_outside("Forrest Gump|tom hanks", nodes)
    assert names_outside("The director is Robert Zemeckis.", nodes) and not hallucinated("The director is Robert Zemeckis.", nodes)
    assert names_outside("Forrest Gump|Cast Away", nodes)
    assert not names_outside("", nodes) and not names_outside("not in the graph", nodes)


def test_hop_group_reads_metaqa_ids():
    assert hop_group("metaqa|2-hop/dev/5") == "2-hop" and hop_group("2-hop/dev/5") == "2-hop"
    assert hop_group("webqsp|WebQTest-12") == "all" and hop_group("explagraphs|3") == "all"


def test_score_adds_answer_sets_and_the_outside_share_for_kgqa():
    kg = score("metaqa", ["Forrest Gump|Big", "Cast Away"], ["Forrest Gump", "Cast Away|Big"], [["Forrest Gump", "Big"], ["Big"]])
    assert kg.precision == pytest.approx(0.75) and kg.recall == pytest.approx(0.75) and kg.f1 == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert kg.outside_rate == pytest.approx(0.5)
    assert score("explagraphs", ["support"], ["support"], [[]]).f1 is None
