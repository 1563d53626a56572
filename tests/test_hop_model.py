"""The hop model reads word order, which a sentence vector blurs (no database needed)."""

import numpy as np
import pytest

from gr_neo4j.retrieval.linking import masked_names
from gr_neo4j.retrieval.paths.hops import NGRAM_BUCKETS, fit_hop_model, hop_probabilities, ngram_features


def test_ngram_features_are_stable_unit_vectors_that_see_word_order():
    a = ngram_features("NAME directed which movies")
    assert a.shape == (NGRAM_BUCKETS,) and float(np.linalg.norm(a)) == pytest.approx(1.0)
    assert np.array_equal(a, ngram_features("name DIRECTED which movies?"))  # case and punctuation aside
    b = ngram_features("which movies directed NAME")
    assert not np.allclose(a, b)  # same words, other order
    assert float(np.linalg.norm(ngram_features(""))) == pytest.approx(1.0)  # the start and end marks


def test_word_order_decides_where_the_vectors_cannot():
    # Two templates with one and the same sentence vector: only their words tell 1 from 2 hops.
    one = ["NAME directed which movies", "NAME was the director of which movies"]
    two = ["the director of NAME also directed which movies", "which movies were directed by the director of NAME"]
    texts = one * 5 + two * 5
    hops = np.array([1] * 10 + [2] * 10)
    vectors = np.ones((20, 8), np.float32) / np.sqrt(8)
    weight, bias = fit_hop_model(vectors, texts, hops, 3)
    assert weight.shape == (3, 8 + NGRAM_BUCKETS) and bias.shape == (3,)
    for text, h in [(one[0], 1), (two[0], 2), ("NAME directed which films", 1)]:
        p = hop_probabilities(weight, bias, vectors[0], text)
        assert p.shape == (3,) and float(p.sum()) == pytest.approx(1.0, abs=1e-5)
        assert int(np.argmax(p)) + 1 == h, (text, p)


def test_weights_of_the_vector_only_model_still_read():
    # Rankers stored before the n-grams carry [H, D]: the vector alone decides.
    weight = np.array([[5.0, 0.0], [0.0, 5.0]], np.float32)
    p = hop_probabilities(weight, np.zeros(2, np.float32), np.array([0.0, 1.0], np.float32), "anything")
    assert int(np.argmax(p)) == 1


def test_repeated_questions_weigh_as_often_as_they_occur():
    # One text labelled 1 hop three times and 2 hops once: the fit leans to 1, by count.
    vectors = np.zeros((4, 4), np.float32)
    weight, bias = fit_hop_model(vectors, ["what did NAME do"] * 4, np.array([1, 1, 1, 2]), 2)
    p = hop_probabilities(weight, bias, vectors[0], "what did NAME do")
    assert p[0] == pytest.approx(0.75, abs=0.05)


def test_masked_names_masks_every_known_name_longest_first():
    q = "the films that share directors with the film Black Snake Moan"
    assert masked_names(q, ["Black", "Black Snake Moan"]) == "the films that share directors with the film NAME"
    assert masked_names("what did tom hanks and Tom Hanks do", ["Tom Hanks"]) == "what did NAME and NAME do"
    assert masked_names("who directed Heat", ["Cold"]) == "who directed Heat"
    assert masked_names("who directed Heat", ["", " "]) == "who directed Heat"
