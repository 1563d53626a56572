"""The zero-shot relation-path scorer: how it reads a question and ranks paths of every length.

A hash encoder (unrelated texts, near-zero cosines) isolates the mechanics: a word asks for a
relation through its stem, the answer phrase agrees with an end type when their texts are equal.
The real embedder's figures are eval-retrieval's (README)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from gr_neo4j.retrieval.zero_shot import ANSWERABLE, ASKED, SAME_TYPE, EndType, ZeroShot, read, same_stem, stem, texts_to_embed

DIRECTED, STARRED, RELEASE = "directed by", "starred actors", "release year"
RELATIONS = (DIRECTED, STARRED, RELEASE, "has genre", "in language")


def encode(texts):
    out = np.empty((len(texts), 64), dtype=np.float32)
    for i, t in enumerate(texts):
        seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
        out[i] = np.random.default_rng(seed).standard_normal(64)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


# What a step along each relation ends at, as the answer phrases that ask for it would read.
END_TEXTS = {(DIRECTED, False): "who", (STARRED, False): "who", (RELEASE, False): "when",
             (DIRECTED, True): "which films", (STARRED, True): "which films", (RELEASE, True): "which films"}


def end_types(texts):
    return {k: EndType(encode([v])[0], 32) for k, v in END_TEXTS.items() if k[0] in texts}


def zero_shot(question, relations=RELATIONS, types=end_types, encoder=encode):
    """The scorer of ``question`` given the vectors and end types it reads, as the retriever gives them."""
    reading = read(question)
    texts = texts_to_embed(reading, relations)
    return ZeroShot(reading, relations, dict(zip(texts, encoder(texts))), types(relations))


D, D_, S, S_, R, R_ = (DIRECTED, False), (DIRECTED, True), (STARRED, False), (STARRED, True), (RELEASE, False), (RELEASE, True)
# The relation paths of up to three steps from a film and from a person (a film's director, the
# films a person directed: "_" marks a step walked backwards).
FROM_FILM = [(D,), (S,), (R,), (D, D_), (S, S_), (R, R_), (D, D_, S), (S, S_, D), (D, D_, R), (R, R_, D)]
FROM_PERSON = [(D_,), (S_,), (D_, R), (D_, D), (D_, S), (S_, S), (S_, D), (S_, R), (S_, S, S_), (D_, D, D_)]
PATHS = FROM_FILM + FROM_PERSON


def best(question: str):
    paths = FROM_PERSON if "person" in question.split() else FROM_FILM
    question = question.replace("person", "NAME")
    z = zero_shot(question)
    return paths[int(np.argmax(z.scores(paths)))]


def test_read_finds_the_answer_phrase_the_words_and_their_order():
    r = read("which movies have the same director of NAME")
    assert r.answer == "which movies"
    assert r.words == ("movies", "director")  # stop words and the mask go; the answer noun stays a word
    assert r.progress[0] > r.progress[1]  # "movies" is nearer the answer than "director"
    assert read("who directed NAME").answer == "who"
    assert read("the director of NAME was").answer is None
    assert read("what was the release date of NAME").answer == "what release"
    # A word is also read with the preposition after it, as relation texts often are ("acted in").
    assert read("who played in NAME").phrases == ("played in",)
    assert read("which films did NAME star in").phrases == ("films", "star in")


@pytest.mark.parametrize(("a", "b", "same"), [
    ("director", "directed", True), ("screenwriter", "written", True), ("actors", "acted", True),
    ("co-starred", "starred", True), ("released", "release", True), ("movies", "directed", False), ("year", "genre", False),
])
def test_same_stem(a, b, same):
    assert same_stem(a, b) is same
    assert stem("Directed") == "direct"


# "person" stands for a named person (the paths from a person), NAME for a named film.
@pytest.mark.parametrize(("question", "path"), [
    ("who directed NAME", (D,)),  # one relation asked: depth 1, not a longer walk
    ("which films did person direct", (D_,)),
    ("the director of NAME also directed which films", (D, D_)),  # two mentions, two steps
    ("when were the films directed by person released", (D_, R)),  # order: from the name to the answer
    ("who acted in the films directed by the director of NAME", (D, D_, S)),
])
def test_depth_and_path_come_from_the_question(question, path):
    assert best(question) == path


def test_the_answer_type_decides_between_a_relation_and_its_round_trip():
    # "starred" is mentioned once; the answer "who" asks for the co-stars, not the films.
    assert best("who co-starred with person") == (S_, S)
    assert best("which films did person star in") == (S_,)


def test_asked_says_whether_the_question_asks_for_a_path():
    assert zero_shot("who directed NAME").asked((D,)) > ANSWERABLE
    z = zero_shot("what is the capital of NAME")
    assert all(z.asked(p) <= ANSWERABLE for p in PATHS)
    assert zero_shot("NAME").scores(PATHS).shape == (len(PATHS),)  # no words: scores all the same
    assert z.scores([(), (D,)]).shape == (2,) and z.asked(()) == 0.0  # the topic itself: a path of no step


def test_unasked_counts_the_steps_no_word_asks_for():
    # "who directed NAME" of a film without a director: the best walk left is through its actors
    # to a film they directed and on; two of its three steps are asked for by nothing.
    z = zero_shot("who directed NAME")
    assert z.unasked((S, D_, R)) == 2 and z.unasked((D,)) == 0 and z.unasked((D, D_)) == 0


def test_a_question_asks_how_its_names_connect():
    assert read("what do NAME and NAME have in common").connects
    assert read("which films did NAME and NAME both star in").connects
    assert not read("what is the boiling point of NAME").connects  # two names ("boiling point", "water") prove nothing


def test_a_graph_of_one_relation_still_asks_for_it():
    z = zero_shot("which films did NAME direct", (DIRECTED,))
    assert z.asked((D_,)) > ASKED


def test_an_end_type_of_few_nodes_counts_for_less():
    def typed(nodes):
        return lambda texts: {k: EndType(v.vector, nodes) for k, v in end_types(texts).items()}

    few, many = (zero_shot("who directed NAME", types=typed(n))._type_scores({D, D_}) for n in (3, 32))
    assert many[D] > few[D] > 0 > few[D_] > many[D_]


def test_ends_of_the_same_kind_of_node_agree_alike_with_the_answer():
    # Two samples of films (the heads of "directed by" and of "starred actors") differ by sampling
    # noise only: the answer phrase must not prefer one to the other for it.
    films = encode(["which films"])[0]
    noisy = films + 0.3 * encode(["noise"])[0]
    noisy /= np.linalg.norm(noisy)
    assert noisy @ films >= SAME_TYPE

    def typed(texts):
        out = end_types(texts)
        out[D_] = EndType(noisy, 32)
        return out

    z = zero_shot("which films did NAME direct", types=typed)
    t = z._type_scores({D_, S_, R})
    assert t[D_] == pytest.approx(t[S_]) and t[D_] > t[R]


def domain_encode(texts):
    """:func:`encode`, but "movies" is near every relation text (what a film graph is about)."""
    out = encode(texts)
    for i, t in enumerate(texts):
        if t == "movies":
            v = encode(list(RELATIONS)).sum(0)
            out[i] = v / np.linalg.norm(v)
    return out


@pytest.mark.parametrize(("question", "is_open"), [
    ("what does NAME appear in", True), ("which movies is NAME in", True),  # what NAME has, not how
    ("what is the capital of NAME", False), ("how tall is NAME", False), ("who is NAME", False),
    ("which films did NAME direct", False),  # asks for a relation: the scoring decides
    ("which NAME has the most moons", False),  # the name is the kind of answer, not what has it
])
def test_an_open_question_asks_what_a_name_has(question, is_open):
    assert zero_shot(question, encoder=domain_encode).open_question() is is_open


GENRE = ("has genre", False)


def genres_read_like(answer: str):
    """End types in which the genres (the tail of "has genre") read exactly like ``answer``."""
    def typed(texts):
        out = end_types(texts)
        out[GENRE] = EndType(encode([answer])[0], 32)
        return out
    return typed


def test_a_domain_answer_does_not_buy_a_relation_no_word_asks_for():
    # Genre names read like "movies"; "what movies did NAME direct" still stops at the films.
    paths = [(D_,), (D_, GENRE), (D_, S)]
    z = zero_shot("what movies did NAME direct", types=genres_read_like("what movies"), encoder=domain_encode)
    assert paths[int(np.argmax(z.scores(paths)))] == (D_,)
    # A noun that names one kind of node ("kinds") is the only word asking for the genres.
    z = zero_shot("what kinds are the movies directed by NAME", types=genres_read_like("what kinds"), encoder=domain_encode)
    assert paths[int(np.argmax(z.scores(paths)))] == (D_, GENRE)


def test_paths_scored_at_once_score_as_alone_once_their_ends_are_fixed():
    # A fetch plan scores hundreds of paths in one call and the selection a few of them later: with
    # the answer type z-scored over every end once (with_ends), a path's score is its own.
    free = zero_shot("who directed the films starred by NAME")
    fixed = free.with_ends({p[-1] for p in PATHS})
    together = fixed.scores(PATHS)
    assert np.array_equal(together, np.concatenate([fixed.scores([p]) for p in PATHS]))
    assert np.array_equal(together, free.scores(PATHS))  # the same ends: the same scores
    assert not np.array_equal(free.scores(FROM_PERSON[:3]), fixed.scores(FROM_PERSON[:3]))
