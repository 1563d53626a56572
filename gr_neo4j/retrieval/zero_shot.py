"""Zero-shot relation-path scoring: the depth and the path read from the question's own words.

A graph nobody has questions for has no trained ranker (:mod:`.paths.ranker`), and the cosine of a
whole question to a path text cannot choose a depth: "who directed NAME" reads as much like
"directed by release year" as like "directed by". Here relation paths of every length compete in
one ranking, scored by how each step agrees with the words of the question (its linked names
masked) and how its end agrees with what the question asks for:

- **evidence** ``[R, W]``: each content word's similarity to each relation text (the embedder's
  cosine; a shared word stem counts :data:`STEM_MATCH`), as a softmax over the relations (which
  relation does this word point to?) times the word's *specificity*: how far its best match
  stands above its mean match. "directed" points at "directed by"; "movies", near every relation
  of a film graph, points at none.
- **coverage**: the evidence the path's relations take up, summed over words: nothing the question
  asks for is left unwalked;
- **asked**: a step no word asks for costs :data:`UNASKED` (each relation is asked for); a relation
  walked more often than the question mentions it costs :data:`SURPLUS` (a "co-star" walks
  "starred" twice, and pays once, unless the answer type says so); every step :data:`LENGTH`;
- **order**: the words of consecutive steps should move from the named entity towards the answer
  word ("who" / "which films"); an inversion costs :data:`INVERSION`;
- **answer type** (:data:`TYPE_WEIGHT`): the answer phrase ("who", "which movies", "what year")
  against the end of the path, described by the mean embedding of the nodes at that end of its
  last relation in the graph (persons for the tail of "directed by", films for its head),
  z-scored over the ends the candidate paths reach; ends of one kind of node (:data:`SAME_TYPE`)
  agree alike. An answer noun the whole graph is about ("what films", :data:`DOMAIN_MEAN`) adds
  nothing to a last relation no word asks for.

The constants were set by hand, reading MetaQA dev questions outside the evaluation slice (the
first 300 per hop count); nothing is fitted.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .linking import MASK, STOP_WORDS

Step = tuple[str, bool]  # (relation text, walked backwards)

STEM_MATCH = 0.9  # similarity of a word to a relation text that shares its stem ("director", "directed by")
SPECIFIC_FROM, SPECIFIC_SPAN = 0.2, 0.4  # a word's best-minus-mean similarity: 0 below FROM, 1 at FROM + SPAN
TEMPERATURE = 0.05  # of the softmax over relations of one word's similarities
TYPE_WEIGHT = 0.3  # per standard deviation of the answer phrase's agreement with an end type
UNASKED = 0.2  # per step, times (1 - its evidence)
SURPLUS = 0.05  # per walk of a relation beyond the times the question mentions it
LENGTH = 0.02  # per step: of two paths that read alike, the shorter
INVERSION = 0.1  # per pair of consecutive steps whose words run from the answer back to the name
ASKED = 0.1  # evidence above which a word asks for a relation (and a step counts as asked for)
# The best path answers only when some word gives one of its relations more evidence than this; a
# word that merely leans towards a relation ("currency" to "in language": 0.19) does not ask for it.
ANSWERABLE = 0.25
MAX_UNASKED = 1  # relations of the best path no word asks for: more, its last among them, and it does not answer
# End types this similar are one kind of node sampled twice (the films at the head of "directed by"
# and of "has genre"); they share their mean agreement with the answer phrase, or sampling noise
# decides between them ("what films" read 0.15 against one sample of films, 0.73 against another).
SAME_TYPE = 0.9
# A word whose mean similarity to the relation texts reaches this, while asking for none of them,
# names what the whole graph is about ("movies", "films": 0.38 in MetaQA; "genre" 0.34 asks for one).
DOMAIN_MEAN = 0.33
TYPE_SPREAD_FLOOR = 0.05  # added to the standard deviation of the end types' agreement
# An end type averaged over n nodes counts n / (n + TYPE_PRIOR_NODES) of its z-score: the mean of a
# handful of names is mostly noise (three directors' names can read less like "who" than five titles).
TYPE_PRIOR_NODES = 4

WH_WORDS = frozenset(["who", "whom", "whose", "what", "which", "when", "where", "how"])
TYPED_WH = frozenset(["who", "whom", "whose", "when", "where"])  # carry an answer type alone
# A word followed by one of these is also read with it ("played in" is nearer "acted in" than
# "played" is), as relation texts are often a verb and its preposition.
PREPOSITIONS = frozenset(["in", "by", "for", "with", "on", "at", "from", "to", "of", "about", "into", "under"])
# Words that ask how the names connect: where two names' walks meet, the meeting answers them.
CONNECTING = frozenset(["both", "together", "common", "between", "connected", "connection", "connect", "connects",
                        "related", "relation", "relationship", "link", "links", "linked", "share", "shared", "shares"])
_TOKEN = re.compile(r"[\w'-]+")
_SUFFIXES = ("ings", "ing", "ers", "er", "ors", "or", "ed", "es", "s", "en", "ions", "ion")


def path_text(path: Sequence[Step]) -> str:
    """A relation path for people: its relation texts in order, "~" before a step walked
    backwards ("~starred actors > directed by")."""
    return " > ".join(("~" if back else "") + rel for rel, back in path)


@lru_cache(maxsize=1 << 16)  # every question stems its words against every relation's
def stem(word: str) -> str:
    """A crude English stem: lower case, no "co-" prefix, one common suffix off."""
    w = word.casefold().strip("'-")
    w = w.removeprefix("co-")
    for s in _SUFFIXES:
        if w.endswith(s) and len(w) - len(s) >= 3:
            return w[: -len(s)]
    return w


def same_stem(a: str, b: str) -> bool:
    """Whether two words share a stem: the shorter stem's first four letters (three for a stem of
    three) begin or end the longer ("direct"/"director", "writ"/"screenwrit", "act"/"actor")."""
    a, b = sorted((stem(a), stem(b)), key=len)
    return len(a) >= 3 and (b.startswith(a[:4]) or b.endswith(a[:4]))


@lru_cache(maxsize=1 << 14)
def relation_words(text: str) -> tuple[str, ...]:
    """The words of a relation text that are not stop words ("has genre" -> "genre")."""
    return tuple(w for w in _TOKEN.findall(text) if w.casefold() not in STOP_WORDS)


@dataclass(frozen=True)
class EndType:
    """What a step along a relation ends at: ``vector`` ``[D]`` the unit mean embedding of
    ``nodes`` of the nodes there (the tails forwards, the heads backwards)."""

    vector: np.ndarray
    nodes: int


@dataclass(frozen=True)
class Reading:
    """One masked question as the scorer reads it: ``answer`` its answer phrase ("which movies",
    "who"; None when it has none), ``words`` its content words (no stop words, no mask) and each
    word's ``position`` among the question's tokens and ``progress``: its distance from the nearest
    masked name minus its distance from the answer word (larger: nearer the answer); ``connects``:
    whether it asks how its names connect (:data:`CONNECTING`); ``phrases``: each word with the
    preposition after it, if one follows (:data:`PREPOSITIONS`), else the word; ``wh``: its first
    question word (:data:`WH_WORDS`), if any, and ``wh_named``: whether a name follows it at once
    ("which NAME has the most moons": the name is what kind of answer it asks for)."""

    answer: str | None
    words: tuple[str, ...]
    positions: tuple[int, ...]
    progress: tuple[int, ...]
    connects: bool = False
    phrases: tuple[str, ...] = ()
    wh: str | None = None
    wh_named: bool = False


def read(masked_text: str) -> Reading:
    """Read ``masked_text`` (the question with the names it links replaced by ``NAME``)."""
    tokens = [t.casefold() for t in _TOKEN.findall(masked_text)]
    mask = MASK.casefold()
    answer, answer_at, skip, wh = None, None, set(), None
    for i, t in enumerate(tokens):
        if t not in WH_WORDS:
            continue
        answer_at, skip, wh = i, {i}, t
        after = [j for j in range(i + 1, min(i + 4, len(tokens))) if tokens[j] not in STOP_WORDS]
        if t in ("what", "which") and after and tokens[after[0]] != mask:
            answer = f"{t} {tokens[after[0]]}"  # "which movies", "what year"
        elif t in TYPED_WH:
            answer = t
        break
    names = [i for i, t in enumerate(tokens) if t == mask]
    words, positions, progress, phrases = [], [], [], []
    for i, t in enumerate(tokens):
        if i in skip or t == mask or t in STOP_WORDS:
            continue
        words.append(t)
        phrases.append(f"{t} {tokens[i + 1]}" if i + 1 < len(tokens) and tokens[i + 1] in PREPOSITIONS else t)
        positions.append(i)
        near_name = min((abs(i - j) for j in names), default=0)
        progress.append(near_name - (abs(i - answer_at) if answer_at is not None else 0))
    wh_named = answer_at is not None and answer_at + 1 < len(tokens) and tokens[answer_at + 1] == mask
    return Reading(answer, tuple(words), tuple(positions), tuple(progress), any(t in CONNECTING for t in tokens), tuple(phrases), wh, wh_named)


def texts_to_embed(reading: Reading, relations: Sequence[str]) -> list[str]:
    """Every text :class:`ZeroShot` reads a vector of: the relation texts, the question's words and
    phrases and its answer phrase (each once)."""
    answer = [reading.answer] if reading.answer else []
    return list(dict.fromkeys([*relations, *reading.words, *reading.phrases, *answer]))


class ZeroShot:
    """Scores relation paths for one question (see module doc); everything it reads is given, so
    scoring calls nothing back.

    ``reading``: the question; ``relations``: every relation text of the graph (a word's
    specificity and softmax are over them all; a path's relation outside them is asked for by no
    word); ``vectors``: text -> ``[D]`` unit vector of each of :func:`texts_to_embed`;
    ``end_types``: ``{(relation text, backwards): EndType}`` of the relations paths may end with.
    """

    def __init__(self, reading: Reading, relations: Sequence[str], vectors: Mapping[str, np.ndarray], end_types: Mapping[Step, EndType]):
        self.reading = reading
        self.end_types = end_types
        rels = sorted(set(relations))
        self.rel_index: dict[str, int] = {t: i for i, t in enumerate(rels)}
        words = list(reading.words)
        # One row more than the relations: all zeros, for a relation the graph did not hold when read.
        self.evidence = np.zeros((len(rels) + 1, len(words)), dtype=np.float32)  # [R + 1, W]
        self.mentions = np.zeros(len(rels) + 1, dtype=np.int64)  # [R + 1]
        self.mean_similarity = np.zeros(len(words), dtype=np.float32)  # [W] each word's mean over the relations
        self.answer_vector = vectors[reading.answer] if reading.answer else None
        self.fixed_types: dict[Step, float] | None = None  # :meth:`with_ends`
        if words and rels:
            self._read(rels, words, vectors)

    def _read(self, rels: list[str], words: list[str], vectors: Mapping[str, np.ndarray]) -> None:
        """Evidence ``[R, W]`` and mentions ``[R]`` of every relation text."""
        rel_vectors = np.stack([vectors[t] for t in rels])
        sim = rel_vectors @ np.stack([vectors[w] for w in words]).T  # [R, W]
        if any(p != w for p, w in zip(self.reading.phrases, words)):
            sim = np.maximum(sim, rel_vectors @ np.stack([vectors[p] for p in self.reading.phrases]).T)
        for r, text in enumerate(rels):
            for j, w in enumerate(words):
                if any(same_stem(w, x) for x in relation_words(text)):
                    sim[r, j] = max(sim[r, j], STEM_MATCH)
        # Best minus the mean of the other relations (0 when there is no other: a one-relation graph).
        others = (sim.sum(0) - sim.max(0)) / (len(rels) - 1) if len(rels) > 1 else np.zeros(sim.shape[1], dtype=sim.dtype)
        specific = np.clip((sim.max(0) - others - SPECIFIC_FROM) / SPECIFIC_SPAN, 0, 1)
        e = np.exp((sim - sim.max(0)) / TEMPERATURE)
        self.evidence[: len(rels)] = e / e.sum(0) * specific
        self.mean_similarity = sim.mean(0).astype(np.float32)
        at = np.asarray(self.reading.positions)
        self.mentions[: len(rels)] = [_runs(at[row > ASKED]) for row in self.evidence[: len(rels)]]

    def _row(self, rel: str) -> int:
        return self.rel_index.get(rel, len(self.rel_index))

    def scores(self, paths: Sequence[Sequence[Step]]) -> np.ndarray:
        """``[P]`` the score of each path (its (relation text, backwards) steps), all at once: a
        fetch plan scores the hundreds of paths the step schema allows."""
        if not paths:
            return np.zeros(0, dtype=np.float32)
        types = self.fixed_types if self.fixed_types is not None else self._type_scores({p[-1] for p in paths if p})
        lengths = np.array([len(p) for p in paths], dtype=np.int64)  # [P]
        width = int(lengths.max())
        rows = np.full((len(paths), width), len(self.rel_index), dtype=np.int64)  # [P, L]; padded with the zero row
        for k, path in enumerate(paths):
            rows[k, : len(path)] = [self._row(rel) for rel, _ in path]
        real = np.arange(width) < lengths[:, None]  # [P, L]
        if self.evidence.shape[1] and width:
            sub = self.evidence[rows]  # [P, L, W]; evidence >= 0, so the zero row never wins a max
            coverage = sub.max(1).sum(1)
            asked = sub.max(2)  # [P, L]
            at = np.asarray(self.reading.progress)[sub.argmax(2)]
            inversions = ((asked[:, :-1] > ASKED) & (asked[:, 1:] > ASKED) & (at[:, :-1] > at[:, 1:]) & real[:, 1:]).sum(1)
        else:  # a question with no content word, or only paths of no step (the topic itself), asks for nothing
            coverage, asked, inversions = np.zeros(len(paths), np.float32), np.zeros(rows.shape, np.float32), np.zeros(len(paths), np.int64)
        unasked = np.where(real, 1 - asked, 0).sum(1)
        # A step walks its relation once more than the question mentions it when its relation came
        # that often already, itself included.
        same_before = (rows[:, :, None] == rows[:, None, :]) & np.triu(np.ones((width, width), dtype=bool)) & real[:, :, None]
        surplus = ((same_before.sum(1) > np.maximum(self.mentions[rows], 1)) & real).sum(1)
        typed = np.array([types.get(p[-1], 0.0) if p else 0.0 for p in paths], dtype=np.float64)
        if self._domain_answer():
            # "what films": a word the whole graph is about tells apart ends the question asks
            # for, but does not buy a last relation no word asks for: genre names read like
            # "films", and "what films did NAME direct" would walk on to the films' genres.
            last_asked = asked[np.arange(len(paths)), np.maximum(lengths - 1, 0)]
            typed[(typed > 0) & (lengths > 0) & (last_asked <= ASKED)] = 0.0
        out = (coverage.astype(np.float64) + TYPE_WEIGHT * typed - UNASKED * unasked.astype(np.float64)
               - SURPLUS * surplus - LENGTH * lengths - INVERSION * inversions)
        return out.astype(np.float32)

    def with_ends(self, ends: set[Step]) -> ZeroShot:
        """This scorer with the answer type z-scored once over ``ends``, every end the question's
        paths may reach (:mod:`.fetch_plan`), rather than over the ends of the paths scored at a
        time: a fetch planned along a few paths scores them as among all it chose from."""
        out = copy.copy(self)
        out.fixed_types = self._type_scores(ends)
        return out

    def asked(self, path: Sequence[Step]) -> float:
        """The most evidence any word gives any step of ``path``: at most :data:`ANSWERABLE` when the
        question asks for none of its relations."""
        if not path or not self.evidence.shape[1]:
            return 0.0
        return float(self.evidence[[self._row(rel) for rel, _ in path]].max())

    def unasked(self, path: Sequence[Step]) -> int:
        """How many steps of ``path`` no word asks for (evidence at most :data:`ASKED`)."""
        if not self.evidence.shape[1]:
            return len(path)
        return sum(1 for rel, _ in path if float(self.evidence[self._row(rel)].max()) <= ASKED)

    def open_question(self) -> bool:
        """Whether the question asks what or which things its name has without saying how: "what
        does NAME appear in", "which movies is NAME in". Its answer phrase is "what"/"which" alone
        or with a :data:`DOMAIN_MEAN` word (one near every relation, specific to none: "movies" in a
        film graph), and no word asks for a relation. Such a question has one answer where the
        name has one relation: the embedder may not know "appear in" for "starred actors"."""
        r = self.reading
        if r.wh not in ("what", "which") or r.wh_named or (self.evidence > ASKED).any():
            return False
        return r.answer is None or " " not in r.answer or self._domain_answer()

    def _domain_answer(self) -> bool:
        """Whether the answer phrase's noun is a :data:`DOMAIN_MEAN` word ("which movies" in a
        film graph): it names what the whole graph is about, not one kind of node in it."""
        r = self.reading
        if r.answer is None or " " not in r.answer:
            return False
        noun = r.answer.split()[-1]
        return noun in r.words and float(self.mean_similarity[r.words.index(noun)]) >= DOMAIN_MEAN

    def _type_scores(self, ends: set[Step]) -> dict[Step, float]:
        """End step -> the answer phrase's agreement with its end type (the mean over the end types
        of its kind, :data:`SAME_TYPE`), z-scored over ``ends`` and shrunk by how few nodes the type
        was averaged over (:data:`TYPE_PRIOR_NODES`)."""
        if self.answer_vector is None or len(ends) < 2:
            return {}
        types = self.end_types
        keys = sorted(e for e in ends if e in types)
        if len(keys) < 2:
            return {}
        vectors = np.stack([types[e].vector for e in keys])
        sims = vectors @ self.answer_vector
        same = (vectors @ vectors.T >= SAME_TYPE).astype(np.float64)
        sims = same @ sims / same.sum(1)
        z = (sims - sims.mean()) / (sims.std() + TYPE_SPREAD_FLOOR)
        weight = np.array([types[e].nodes / (types[e].nodes + TYPE_PRIOR_NODES) for e in keys])
        return dict(zip(keys, (z * weight).tolist()))


def _runs(positions: np.ndarray) -> int:
    """How many runs of consecutive integers the sorted ``positions`` make (a mention of several
    adjacent words, "release years", is one)."""
    return int(len(positions) and 1 + np.count_nonzero(np.diff(positions) > 1))
