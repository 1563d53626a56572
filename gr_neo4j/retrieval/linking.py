"""Entity linking on knowledge graphs: which entities a question, as a person types it, mentions.

1. **Spans**: word n-grams of the question (at most :data:`MAX_SPAN_WORDS` words, never across a
   bracket), each also without its outer punctuation and possessive (``"Hanks's?"`` -> ``Hanks``).
   A span of stop words only is skipped; one of question vocabulary only (``film``, ``director``,
   ``language``: MetaQA has entities of those names) links only when typed capitalised and matched
   exactly, as a name would be.
2. **Lookup**, one read (``cypher/link_entities.cypher``): exact uids of a few spellings of every
   span and a fulltext phrase query per span, filtered to the dataset.
3. **Match**: a hit counts only when its whole text (or key) equals the span: exactly (score 1.0),
   ignoring case (0.9), or ignoring case and punctuation (0.8); partial hits are dropped. Exact case wins even in a
   question typed in lower case: MetaQA asks about its lower-case tags ('luke wilson') that way,
   and the person ('Luke Wilson') is then listed among the alternatives.
4. **Choose**: non-overlapping spans greedily, by (words in the span, score, degree); an entity is
   linked once. The other entities that matched the chosen span are its ``alternatives`` (an
   ambiguous name). Spans inside ``[brackets]`` are hints: when one links, only they are linked.

Nothing here raises on a question: a question that links nothing returns ``[]`` and the retriever
falls back to vector seeds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import neo4j

from ..cypher_store import statement
from ..ingest.records import entity_uid
from ..schema import FULLTEXT_INDEX

MAX_SPAN_WORDS = 12
# Fulltext hits fetched per span before the dataset filter: the index covers every dataset, and an
# exact one-word name ranks first among the entities containing the word (shortest field).
FULLTEXT_LIMIT = 25

# Function words: a span made only of them is never looked up (unless it is a bracketed hint).
STOP_WORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "you", "your", "yours", "who's", "what's", "whats", "also"]
)
# The vocabulary of questions about a knowledge graph: some of these are entities too (MetaQA has
# tags 'film', 'writer', 'language'), so a span of them only links when typed as a name.
QUESTION_WORDS = frozenset(
    ["act", "acted", "acting", "actor", "actors", "actress", "actresses", "appear", "appeared", "appears", "audiences", "author", "authors", "co-directed", "co-directors", "co-star", "co-starred", "co-stars", "co-writers", "co-wrote", "considered", "creator", "date", "dates", "describe", "described", "describing", "direct", "directed", "director", "directors", "famous", "film", "films", "genre", "genres", "give", "good", "kind", "language", "languages", "listed", "main", "movie", "movies", "name", "opinion", "people", "person", "popular", "popularity", "primary", "rate", "rated", "rating", "release", "released", "screenplay", "screenwriter", "screenwriters", "script", "scriptwriter", "share", "sort", "spoken", "star", "starred", "starring", "stars", "story", "tag", "tags", "terms", "think", "together", "topics", "type", "types", "words", "world", "write", "writer", "writers", "written", "wrote", "year", "years", "fall"]
)

EXACT, CASE, NORMALISED = 1.0, 0.9, 0.8  # match scores: same text, same but for case, for punctuation too

_TOKEN = re.compile(r"\S+")
_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_OUTER = "\"'`‘’“”.,;:!?()[]{}<>"
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$", re.IGNORECASE)
_NON_WORD = re.compile(r"[\W_]+")
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


@dataclass(frozen=True)
class Span:
    """A candidate mention: ``question[start:end] == text``; ``words``: tokens it covers;
    ``hint``: inside ``[brackets]``."""

    start: int
    end: int
    text: str
    words: int
    hint: bool = False


@dataclass(frozen=True)
class Linked:
    """An entity the question mentions: its uid and key (``--entity`` takes the key), text, the
    mention's ``span`` (start, end) in the question, the match ``score`` (1.0 exact, 0.9 case, 0.8
    punctuation) and the keys of the other entities the same mention matched, best first."""

    uid: str
    key: str
    text: str
    span: tuple[int, int]
    mention: str
    score: float
    degree: int
    alternatives: tuple[str, ...] = ()


def unbracketed(question: str) -> str:
    """``question`` as a person would type it: MetaQA's ``[topic entity]`` brackets removed."""
    return question.replace("[", "").replace("]", "")


MASK = "NAME"  # what a named entity becomes in the hop model's view of a question


def masked(question: str, linked: Sequence[Linked]) -> str:
    """``question`` with each linked mention replaced by :data:`MASK`: what is asked, not about
    whom ("what movies did NAME act in"), as the hop model reads it."""
    return masked_spans(question, [x.span for x in linked])


def masked_names(question: str, names: Sequence[str]) -> str:
    """``question`` with each occurrence of ``names`` (ignoring case; longer names first) replaced
    by :data:`MASK`: how the hop model's training questions, whose topic entities are known, are
    masked without linking each."""
    folded, spans = question.casefold(), []
    for name in sorted({n.casefold() for n in names if n and n.strip()}, key=len, reverse=True):
        spans += [(m.start(), m.end()) for m in re.finditer(re.escape(name), folded)]
    return masked_spans(question, spans)


def masked_spans(question: str, spans: Sequence[tuple[int, int]]) -> str:
    """``question`` with each of ``spans`` (start, end) replaced by :data:`MASK`, an overlapping
    later one skipped (of two starting together, the longer is kept)."""
    out, end = [], 0
    for start, stop in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start >= end:
            out += [question[end:start], MASK]
            end = stop
    return "".join(out + [question[end:]])


def normalise(text: str) -> str:
    """Case- and punctuation-free form: ``"Spider-Man 2"`` -> ``"spider man 2"``."""
    return " ".join(_NON_WORD.sub(" ", text.casefold()).split())


def lucene_phrase(text: str) -> str:
    """A Lucene phrase query for ``text`` with every special character escaped, so no question
    can break (or widen) the query."""
    return '"' + _LUCENE_SPECIAL.sub(r"\\\1", text) + '"'


def spellings(text: str) -> list[str]:
    """The exact spellings looked up by uid: as typed, lower case, every word capitalised, and the
    first letter of each word upper-cased (keeps ``McDonald``), distinct, in that order."""
    words = text.split(" ")
    out = [text, text.lower(), text.title(), " ".join(w[:1].upper() + w[1:] for w in words)]
    return list(dict.fromkeys(out))


def _trimmed(question: str, start: int, end: int) -> list[tuple[int, int]]:
    """``(start, end)`` and the same without outer punctuation and a trailing possessive."""
    out = [(start, end)]
    s, e = start, end
    while s < e and question[s] in _OUTER:
        s += 1
    while e > s and question[e - 1] in _OUTER:
        e -= 1
    out.append((s, e))
    m = _POSSESSIVE.search(question[s:e])
    if m and m.start() > 0:
        out.append((s, s + m.start()))
    return [x for x in dict.fromkeys(out) if x[1] > x[0]]


def spans(question: str, max_words: int = MAX_SPAN_WORDS) -> list[Span]:
    """Candidate spans of ``question``, filtered as the module docstring says. A bracketed name is
    a span whatever its length; n-grams never cross a bracket."""
    segments: list[tuple[int, int, bool]] = []  # (start, end, inside brackets)
    at = 0
    for m in _BRACKET.finditer(question):
        segments += [(at, m.start(), False), (m.start(1), m.end(1), True)]
        at = m.end()
    segments.append((at, len(question), False))
    # A question typed with capitals (past its first letter) writes names with them: no entity in
    # MetaQA that has a capital starts or ends with a lower-case stop or question word, so such
    # spans are skipped.
    cased = any(c.isupper() for c in question[1:])
    out: dict[tuple[int, int], Span] = {}
    for seg_start, seg_end, hint in segments:
        tokens = [(seg_start + t.start(), seg_start + t.end()) for t in _TOKEN.finditer(question[seg_start:seg_end])]
        for i in range(len(tokens)):
            longest = len(tokens) if hint else min(len(tokens), i + max_words)
            for j in range(i, longest):
                for s, e in _trimmed(question, tokens[i][0], tokens[j][1]):
                    text = question[s:e]
                    if (s, e) not in out and _worth_looking_up(text, hint, cased):
                        out[(s, e)] = Span(s, e, text, j - i + 1, hint)
    return list(out.values())


def _worth_looking_up(text: str, hint: bool, cased: bool) -> bool:
    """A span that could link: not only stop words; not only question vocabulary in lower case
    (:func:`choose` would drop it); in a ``cased`` question, not starting or ending with a
    lower-case stop or question word."""
    if not normalise(text):
        return False
    if hint:
        return True
    words = text.split()
    if all(w.casefold() in STOP_WORDS for w in words) or (_weak(text) and text == text.lower()):
        return False
    return not (cased and (_vocabulary(words[0]) or _vocabulary(words[-1])))


def _vocabulary(word: str) -> bool:
    """A lower-case stop word or question word, as written."""
    return word in STOP_WORDS or word in QUESTION_WORDS


def _weak(text: str) -> bool:
    """Only stop words and question vocabulary: links only as a capitalised exact name."""
    return all(w in STOP_WORDS or w in QUESTION_WORDS for w in text.casefold().split())


def match_score(span: Span, key: str, text: str) -> float | None:
    """How well an entity (``key``, ``text``) matches ``span``: EXACT, CASE, NORMALISED or None."""
    if span.text in (key, text):
        return EXACT
    folded = span.text.casefold()
    if folded in (key.casefold(), text.casefold()):
        return CASE
    if normalise(span.text) in (normalise(key), normalise(text)):
        return NORMALISED
    return None


def lookup(run, dataset: str, candidates: list[Span]) -> list[dict]:
    """Run ``link_entities`` through ``run`` (a transaction or session: anything with
    ``run(query, parameters)``); rows ``{span, uid, key, text, degree}``."""
    if not candidates:
        return []
    params = {
        "dataset": dataset,
        "index": FULLTEXT_INDEX,
        "limit": FULLTEXT_LIMIT,
        "spans": [
            {"i": i, "uids": [entity_uid(dataset, "", t) for t in spellings(s.text)], "lucene": lucene_phrase(s.text)}
            for i, s in enumerate(candidates)
        ],
    }
    return [r.data() for r in run.run(statement("link_entities"), params)]


def choose(question: str, candidates: list[Span], rows: list[dict]) -> list[Linked]:
    """Pure step 3-4: from the lookup ``rows`` to the linked entities, in question order."""
    by_span: dict[int, list[tuple[float, int, dict]]] = {}
    for r in rows:
        span = candidates[r["span"]]
        score = match_score(span, r["key"], r["text"])
        if score is None:
            continue
        if not span.hint and _weak(span.text) and (score < EXACT or span.text == span.text.lower()):
            continue
        by_span.setdefault(r["span"], []).append((score, int(r["degree"]), r))
    ranked = []
    for i, hits in by_span.items():
        hits.sort(key=lambda h: (-h[0], -h[1], h[2]["key"]))
        span = candidates[i]
        ranked.append(((span.hint, span.words, hits[0][0], hits[0][1], span.end - span.start, -span.start), span, hits))
    ranked.sort(key=lambda x: x[0], reverse=True)
    taken: list[Linked] = []
    for _, span, hits in ranked:
        if any(span.start < t.span[1] and t.span[0] < span.end for t in taken):
            continue
        score, degree, best = hits[0]
        if any(t.uid == best["uid"] for t in taken):
            continue
        others = tuple(dict.fromkeys(h[2]["key"] for h in hits[1:] if h[2]["uid"] != best["uid"]))
        taken.append(Linked(best["uid"], best["key"], best["text"], (span.start, span.end), question[span.start : span.end], score, degree, others))
    # Brackets are the user's hint: when a bracketed name links, the rest of the question does not.
    hinted = {(s.start, s.end) for s in candidates if s.hint}
    if any(t.span in hinted for t in taken):
        taken = [t for t in taken if t.span in hinted]
    return sorted(taken, key=lambda t: t.span)


def link(run: neo4j.ManagedTransaction | neo4j.Session, dataset: str, question: str) -> list[Linked]:
    """The entities of knowledge-graph ``dataset`` that ``question`` mentions, in question order,
    looked up in one read through ``run`` (a read transaction or a session)."""
    candidates = spans(question)
    return choose(question, candidates, lookup(run, dataset, candidates))
