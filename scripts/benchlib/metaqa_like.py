"""A deterministic generator of MetaQA-like knowledge graphs at any scale, with questions whose
answers are computed from the generated graph.

MetaQA's KB (WikiMovies) is films linked to people, tags, years, languages and genres by nine
relations. At scale 1 the generator gives about its size (42.8k entities, 129k triples); at scale
``s`` the films, people and tags grow ``s`` times while years, genres, languages and the IMDb
buckets stay as few as in MetaQA, so they become ever larger hubs, as they would in a bigger film
database. Per relation, the share of films that have it, the mean count per film, the size of the
tail pool and a Zipf exponent follow MetaQA's own figures (measured on its kb.txt): every pool
member is used once, the remaining edges go to members with weight ``1 / rank**a``, so most tails
have degree 1 and a few are hubs (MetaQA's busiest director has 56 films, its busiest tag 968).

Names are invented (syllables and common words), unique even ignoring case, and hold no ``|`` or
brackets, so the MetaQA loader reads them back as written. The same ``(scale, seed)`` always gives
the same graph, files and questions.

``generate(scale, seed) -> GeneratedKG`` (``names [N]``, triples as ``heads/rels/tails [E]``);
``make_questions(kg, per_hop, seed) -> {hops: [GeneratedQuestion]}``;
``write_metaqa(kg, questions, root)`` writes ``kb.txt`` and ``{k}-hop/qa_dev.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

FILMS_1X = 16426  # MetaQA's films (heads of kb.txt)


@dataclass(frozen=True)
class RelationProfile:
    """One relation of MetaQA, as measured on its kb.txt: ``films_with`` films have it, with
    ``edges`` triples in all (at most ``max_per_film`` per film), towards the ``pool`` kind."""

    name: str
    pool: str
    edges: int
    films_with: int
    max_per_film: int
    zipf: float


RELATIONS = (
    RelationProfile("directed_by", "director", 15866, 14157, 13, 0.5),
    RelationProfile("written_by", "writer", 18442, 12188, 10, 0.5),
    RelationProfile("starred_actors", "actor", 32532, 12853, 17, 0.5),
    RelationProfile("has_tags", "tag", 27713, 9191, 30, 0.8),
    RelationProfile("release_year", "year", 16073, 15297, 7, 0.4),
    RelationProfile("in_language", "language", 3297, 2990, 9, 1.1),
    RelationProfile("has_genre", "genre", 14898, 11602, 5, 1.0),
    RelationProfile("has_imdb_votes", "votes", 116, 116, 1, 2.0),
    RelationProfile("has_imdb_rating", "rating", 296, 296, 1, 2.0),
)
RELATION_NAMES = tuple(r.name for r in RELATIONS)

# People: one pool whose ranges overlap, as MetaQA's directors also write and its writers act.
PEOPLE_1X = 21272
ROLE_RANGES_1X = {"director": (0, 6363), "writer": (3000, 13274), "actor": (11169, 21272)}
TAGS_1X = 4848
YEARS = [str(y) for y in range(1900, 2008)]  # 108, as MetaQA's
GENRES = ["Drama", "Comedy", "Thriller", "Action", "Romance", "Horror", "Crime", "Documentary", "Adventure",
          "Mystery", "Family", "Fantasy", "Animation", "Sci-Fi", "War", "Western", "Musical", "Short", "Biography",
          "Sport", "Film-Noir", "History"]  # 22
VOTES = ["famous", "well known", "unknown"]
RATINGS = ["good", "bad", "fantastic"]
LANGUAGES_FIXED = 95

_ONSETS = ["b", "br", "c", "d", "dr", "f", "g", "gr", "h", "j", "k", "kl", "l", "m", "n", "p", "pr", "r", "s", "st",
           "t", "tr", "v", "w", "z", "sh", "ch", "th"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "y"]
_CODAS = ["", "n", "r", "l", "s", "th", "nd", "rk", "m", "x"]
_ADJECTIVES = ["Silent", "Broken", "Golden", "Last", "Hidden", "Lonely", "Crimson", "Distant", "Burning", "Frozen",
               "Wild", "Secret", "Endless", "Fallen", "Midnight", "Bitter", "Quiet", "Restless", "Wicked", "Gentle",
               "Savage", "Hollow", "Bright", "Dark", "Lost", "Sacred", "Stolen", "Little", "Great", "Final",
               "Eternal", "Forgotten", "Crooked", "Iron", "Velvet", "Paper", "Glass", "Summer", "Winter", "Northern"]
_NOUNS = ["Harbor", "River", "Garden", "Kingdom", "Road", "Night", "Heart", "Mirror", "Storm", "Island", "Promise",
          "Shadow", "Letter", "Dream", "Empire", "Valley", "Station", "Bridge", "Hunter", "Stranger", "Journey",
          "Witness", "Circus", "Machine", "Ocean", "Forest", "Crown", "Ghost", "Voyage", "Tower", "Season", "Song",
          "Border", "Prisoner", "Detective", "Orchard", "Lantern", "Compass", "Desert", "Carnival", "Mountain",
          "Secret", "Summer", "Engine", "Angel", "Blade", "Mask", "Horizon", "Canyon", "Echo"]


@dataclass
class GeneratedKG:
    """A generated knowledge graph: ``names[i]`` is entity ``i``; triple ``j`` is
    ``(heads[j], RELATION_NAMES[rels[j]], tails[j])``; films are entities ``0 .. films-1``."""

    scale: float
    seed: int
    names: list[str]
    kinds: np.ndarray  # [N] index into KINDS
    heads: np.ndarray  # [E] int64
    rels: np.ndarray  # [E] int8
    tails: np.ndarray  # [E] int64
    films: int

    @property
    def num_entities(self) -> int:
        """Entities that appear in a triple (the KB's entity count once loaded)."""
        used = np.zeros(len(self.names), dtype=bool)
        used[self.heads] = True
        used[self.tails] = True
        return int(used.sum())

    @property
    def num_triples(self) -> int:
        return len(self.heads)

    def neighbours(self) -> dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]]:
        """CSR adjacency per (relation, forward): ``indptr [N+1]``, ``targets``; forward walks head
        to tail (film to person), backward tail to head."""
        out = {}
        n = len(self.names)
        for r in range(len(RELATIONS)):
            sel = self.rels == r
            h, t = self.heads[sel], self.tails[sel]
            for forward, src, dst in ((True, h, t), (False, t, h)):
                order = np.argsort(src, kind="stable")
                indptr = np.zeros(n + 1, dtype=np.int64)
                np.add.at(indptr, src + 1, 1)
                out[(r, forward)] = (np.cumsum(indptr), dst[order])
        return out


KINDS = ("film", "person", "tag", "year", "language", "genre", "votes", "rating")


def _syllable_words(rng: np.random.Generator, count: int, syllables: tuple[int, int]) -> list[str]:
    """``count`` distinct capitalised invented words of ``syllables`` (min, max) syllables."""
    words: dict[str, None] = {}
    while len(words) < count:
        k = count - len(words)
        lengths = rng.integers(syllables[0], syllables[1] + 1, size=k * 2)
        on = rng.integers(len(_ONSETS), size=(k * 2, syllables[1]))
        vo = rng.integers(len(_VOWELS), size=(k * 2, syllables[1]))
        co = rng.integers(len(_CODAS), size=k * 2)
        for i in range(k * 2):
            w = "".join(_ONSETS[on[i, j]] + _VOWELS[vo[i, j]] for j in range(lengths[i])) + _CODAS[co[i]]
            words.setdefault(w.capitalize())
            if len(words) == count:
                break
    return list(words)


def _title(pattern: int, adjective: str, noun: str, other: str, place: str) -> str:
    return (f"The {adjective} {noun}", f"{noun} of {place}", f"The {noun} and the {other} of {place}", f"{adjective} {noun} in {place}")[pattern]


def _names(rng: np.random.Generator, films: int, people: int, tags: int) -> tuple[list[str], list[str], list[str], list[str]]:
    """Film titles, person names, tags and languages, distinct across all kinds ignoring case."""
    taken: set[str] = {n.casefold() for n in YEARS + GENRES + VOTES + RATINGS}

    def unique(candidates, want: int, out: list[str]) -> None:
        for c in candidates:
            if len(out) == want:
                return
            if c.casefold() not in taken:
                taken.add(c.casefold())
                out.append(c)

    languages: list[str] = []
    unique((w + "ese" for w in _syllable_words(rng, LANGUAGES_FIXED * 2, (1, 2))), LANGUAGES_FIXED, languages)
    given = _syllable_words(rng, 600, (1, 2))
    family = _syllable_words(rng, max(2000, int(people ** 0.5 * 8)), (2, 3))
    person: list[str] = []
    while len(person) < people:
        k = people - len(person)
        g, f = rng.integers(len(given), size=k * 2), rng.integers(len(family), size=k * 2)
        unique((f"{given[a]} {family[b]}" for a, b in zip(g.tolist(), f.tolist())), people, person)
    title: list[str] = []
    places = _syllable_words(rng, max(500, int(films ** 0.5 * 4)), (2, 3))
    while len(title) < films:
        k = films - len(title)
        pattern = rng.integers(4, size=k * 2)
        a, n1, n2, p = (rng.integers(m, size=k * 2) for m in (len(_ADJECTIVES), len(_NOUNS), len(_NOUNS), len(places)))
        unique((_title(int(pattern[i]), _ADJECTIVES[a[i]], _NOUNS[n1[i]], _NOUNS[n2[i]], places[p[i]]) for i in range(k * 2)), films, title)
    tag: list[str] = []
    lower = [w.lower() for w in _syllable_words(rng, max(1000, int(tags ** 0.5 * 6)), (1, 3))]
    while len(tag) < tags:
        k = tags - len(tag)
        x, y = rng.integers(len(lower), size=k * 2), rng.integers(len(_NOUNS), size=k * 2)
        unique((f"{lower[i]} {_NOUNS[j].lower()}" for i, j in zip(x.tolist(), y.tolist())), tags, tag)
    return title, person, tag, languages


def _zipf_draws(rng: np.random.Generator, pool: np.ndarray, count: int, exponent: float) -> np.ndarray:
    """``count`` tails from ``pool``: each member once (when ``count`` allows), the rest by weight
    ``1 / rank**exponent`` over a shuffled ranking, shuffled together."""
    ranked = rng.permutation(pool)
    once = ranked[: min(count, len(pool))]
    extra = count - len(once)
    if extra > 0:
        w = 1.0 / np.arange(1, len(pool) + 1, dtype=np.float64) ** exponent
        more = ranked[rng.choice(len(pool), size=extra, p=w / w.sum())]
        once = np.concatenate([once, more])
    return rng.permutation(once)


def generate(scale: float, seed: int = 0) -> GeneratedKG:
    """A MetaQA-like KB ``scale`` times MetaQA's size (see the module doc), deterministic in ``(scale, seed)``."""
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    rng = np.random.default_rng([seed, round(scale * 1e6)])
    films, people, tags = (max(1, round(x * scale)) for x in (FILMS_1X, PEOPLE_1X, TAGS_1X))
    title, person, tag, languages = _names(rng, films, people, tags)
    names = title + person + tag + YEARS + languages + GENRES + VOTES + RATINGS
    sizes = [films, people, tags, len(YEARS), len(languages), len(GENRES), len(VOTES), len(RATINGS)]
    starts = np.cumsum([0] + sizes)
    kinds = np.repeat(np.arange(len(KINDS), dtype=np.int8), sizes)
    pools = {KINDS[i]: np.arange(starts[i], starts[i + 1]) for i in range(2, len(KINDS))}
    for role, (a, b) in ROLE_RANGES_1X.items():
        lo, hi = round(a * people / PEOPLE_1X), max(round(b * people / PEOPLE_1X), round(a * people / PEOPLE_1X) + 1)
        pools[role] = starts[1] + np.arange(lo, min(hi, people))
    heads, rels, tails = [], [], []
    for r, prof in enumerate(RELATIONS):
        has = rng.random(films) < prof.films_with / FILMS_1X
        mean_extra = prof.edges / prof.films_with - 1
        counts = np.minimum(1 + rng.poisson(mean_extra, size=int(has.sum())), prof.max_per_film)
        film_ids = np.repeat(np.flatnonzero(has), counts)
        tail_ids = _zipf_draws(rng, pools[prof.pool], len(film_ids), prof.zipf)
        # the same tail twice for one film (a hub drawn again) is one triple
        pair = np.unique(film_ids * len(names) + tail_ids)
        heads.append(pair // len(names))
        tails.append(pair % len(names))
        rels.append(np.full(len(pair), r, dtype=np.int8))
    return GeneratedKG(scale, seed, names, kinds, np.concatenate(heads), np.concatenate(rels), np.concatenate(tails), films)


# -- questions --------------------------------------------------------------------------------------

D, W, A = RELATION_NAMES.index("directed_by"), RELATION_NAMES.index("written_by"), RELATION_NAMES.index("starred_actors")
G, Y, L, T = (RELATION_NAMES.index(n) for n in ("has_genre", "release_year", "in_language", "has_tags"))
F, B = True, False  # film -> tail, tail -> film

# (relation path as (relation, forward) steps, phrasings in MetaQA's style with {} for the topic)
TEMPLATES: dict[int, list[tuple[tuple[tuple[int, bool], ...], tuple[str, ...]]]] = {
    1: [
        (((D, F),), ("who directed [{}]", "who is the director of [{}]")),
        (((D, B),), ("what films did [{}] direct", "which movies were directed by [{}]")),
        (((W, F),), ("who wrote [{}]", "who is the writer of the film [{}]")),
        (((W, B),), ("what films did [{}] write", "which movies were written by [{}]")),
        (((A, F),), ("who acted in [{}]", "who starred in the movie [{}]")),
        (((A, B),), ("what movies did [{}] act in", "which films did [{}] star in")),
        (((Y, F),), ("when was [{}] released", "what year was the movie [{}] released")),
        (((G, F),), ("what genre is [{}]", "what is the genre of the film [{}]")),
        (((L, F),), ("what language is [{}] in",)),
        (((T, F),), ("what topics is [{}] about", "what words describe the film [{}]")),
        (((T, B),), ("which movies can be described by [{}]",)),
    ],
    2: [
        (((A, B), (A, F)), ("who co-starred with [{}]",)),
        (((A, F), (A, B)), ("which movies share actors with [{}]", "the actors of [{}] also starred in which films")),
        (((A, B), (D, F)), ("who directed the films starred by [{}]",)),
        (((W, B), (D, F)), ("who directed the movies written by [{}]",)),
        (((D, B), (G, F)), ("what genres are the films directed by [{}]",)),
        (((A, B), (Y, F)), ("when were the movies starred by [{}] released",)),
        (((D, F), (D, B)), ("which movies share the director of [{}]",)),
        (((W, F), (W, B)), ("which films share the screenwriter of [{}]",)),
        (((D, B), (L, F)), ("what languages are the films directed by [{}] in",)),
        (((W, B), (A, F)), ("who acted in the movies written by [{}]",)),
    ],
    3: [
        (((D, F), (D, B), (G, F)), ("what genres are the films directed by the director of [{}]",)),
        (((A, F), (A, B), (Y, F)), ("when were the films that share actors with [{}] released",)),
        (((W, F), (W, B), (D, F)), ("who directed the movies written by the writer of [{}]",)),
        (((A, F), (A, B), (D, F)), ("who directed the films that share actors with [{}]",)),
        (((D, F), (D, B), (A, F)), ("who acted in the films directed by the director of [{}]",)),
        (((W, F), (W, B), (L, F)), ("what languages are the films written by the writer of [{}] in",)),
    ],
}
MAX_FRONTIER = 5000  # a walk wider than this at any step is skipped (answers would be most of a hub)


@dataclass(frozen=True)
class GeneratedQuestion:
    """A question in MetaQA's form (``[topic]`` in brackets) with every answer the graph gives."""

    hops: int
    text: str
    topic: str
    answers: tuple[str, ...]
    path: tuple[str, ...]  # the relations walked, e.g. ("starred_actors", "~directed_by")

    def line(self) -> str:
        """The qa file's line: ``question<TAB>answer|answer``."""
        return f"{self.text}\t{'|'.join(self.answers)}"


def walk(adj, start: int, steps) -> set[int] | None:
    """The entities reached from ``start`` along ``steps`` (without ``start``); None when a step's
    frontier exceeds MAX_FRONTIER."""
    front = np.array([start], dtype=np.int64)
    for step in steps:
        indptr, targets = adj[step]
        parts = [targets[indptr[a] : indptr[a + 1]] for a in front.tolist()]
        front = np.unique(np.concatenate(parts)) if parts else front[:0]
        if len(front) > MAX_FRONTIER:
            return None
    return set(front.tolist()) - {start}


def make_questions(kg: GeneratedKG, per_hop: int, seed: int = 0, adj=None) -> dict[int, list[GeneratedQuestion]]:
    """``per_hop`` questions for 1, 2 and 3 hops, templates taken in turn, topics drawn at random
    among the entities where the template's first step starts; answers = every entity the
    template's relation path reaches (without the topic), as MetaQA's."""
    rng = np.random.default_rng([seed, 7, round(kg.scale * 1e6)])
    adj = adj or kg.neighbours()
    out: dict[int, list[GeneratedQuestion]] = {}
    for hops, templates in TEMPLATES.items():
        starts = {steps[0]: np.flatnonzero(np.diff(adj[steps[0]][0]) > 0) for steps, _ in templates}
        qs: list[GeneratedQuestion] = []
        seen: set[tuple[int, int]] = set()
        tries = 0
        while len(qs) < per_hop and tries < per_hop * 50:
            t = tries % len(templates)
            tries += 1
            steps, phrasings = templates[t]
            pool = starts[steps[0]]
            if len(pool) == 0:
                continue
            topic = int(pool[rng.integers(len(pool))])
            if (t, topic) in seen:
                continue
            seen.add((t, topic))
            reached = walk(adj, topic, steps)
            if not reached:
                continue
            text = phrasings[rng.integers(len(phrasings))].format(kg.names[topic])
            path = tuple(("" if fw else "~") + RELATION_NAMES[r] for r, fw in steps)
            qs.append(GeneratedQuestion(hops, text, kg.names[topic], tuple(sorted(kg.names[a] for a in reached)), path))
        out[hops] = qs
    return out


def write_metaqa(kg: GeneratedKG, questions: dict[int, list[GeneratedQuestion]], root: Path, chunk: int = 200_000) -> Path:
    """``root/kb.txt`` (``head|relation|tail``) and ``root/{k}-hop/qa_dev.txt``: MetaQA's layout."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / "kb.txt").open("w", encoding="utf-8") as f:
        for a in range(0, kg.num_triples, chunk):
            h, r, t = kg.heads[a : a + chunk].tolist(), kg.rels[a : a + chunk].tolist(), kg.tails[a : a + chunk].tolist()
            f.write("".join(f"{kg.names[x]}|{RELATION_NAMES[y]}|{kg.names[z]}\n" for x, y, z in zip(h, r, t)))
    for hops, qs in questions.items():
        (root / f"{hops}-hop").mkdir(exist_ok=True)
        (root / f"{hops}-hop" / "qa_dev.txt").write_text("".join(q.line() + "\n" for q in qs), encoding="utf-8")
    return root
