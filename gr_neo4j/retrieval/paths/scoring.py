"""The ``paths`` selection: answers at the end of the relation paths that read like the question.

A multi-hop question names a chain of relations from its topic entity ("the films directed by X
were released in which years" = directed by, then release year). Scoring nodes and edges one by one
cannot see that chain, and on a knowledge graph with few relation texts (MetaQA has 9) thousands of
edges tie. Here every walk of at most ``hops`` edges from the roots (the topic entities, else the
most similar nodes) is grouped by its *relation path*: the relation texts met in order, with the
direction each was walked in. Each distinct path text ("directed by release year") is embedded once
(cached: a knowledge graph has few of them) and scored against the question. The ``max_paths`` best
paths then share a node budget round-robin: each in turn adds its next end node, the one reached by
the most walks (then the most similar to the question), with the walk that leads there, until the
budget is spent. The subgraph is the union of those walks plus every candidate edge between chosen
nodes. Nothing is split among ties: every end of a relevant path is eligible.

Walks never come back to a root nor step straight back to the node they came from.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..candidates import Candidates
from ..zero_shot import ZeroShot
from .plan import plan_term
from .ranker import SCALE, PathRanker, Step, step_arrays

FULL_PATHS = 2  # relation paths that keep every end (all the answers) when an answer cap is set
MAX_PATH_TEXTS = 100_000  # cache bound; a knowledge graph has far fewer distinct relation paths


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class PathScorer:
    """How well relation paths fit the question: the dataset's trained ranker when it has one
    (:class:`~.ranker.PathRanker`, on the cosine of path text and question), else the
    zero-shot scorer of one question (:class:`~.zero_shot.ZeroShot`, :meth:`reading`), else the
    cosine alone. Each text is embedded once.

    ``encoder``: its ``encode`` turns ``[P]`` texts into ``[P, D]`` unit vectors (the retriever's
    :class:`~gr_neo4j.embedder.Embedder`). Scorers made with :meth:`using` share one cache of vectors.
    """

    def __init__(self, encoder: Encoder, ranker: PathRanker | None = None, cache: dict[str, np.ndarray] | None = None):
        self.encoder = encoder
        self.ranker = ranker
        self.cache: dict[str, np.ndarray] = {} if cache is None else cache
        self._projection: tuple[dict[str, int], np.ndarray | None] = ({}, None)
        self.plan_lp: dict | None = None  # one question's path-plan log-probabilities (:meth:`planned`)
        self.zero_shot: ZeroShot | None = None  # one question's zero-shot scorer (:meth:`reading`)

    def using(self, ranker: PathRanker | None) -> PathScorer:
        """This scorer with ``ranker`` (None: cosine only), sharing the cache of vectors."""
        return self if ranker is self.ranker else PathScorer(self.encoder, ranker, self.cache)

    def planned(self, masked_text: str) -> PathScorer:
        """This scorer for one question whose ranker's path plan (:mod:`.plan`) adds its
        term: ``masked_text`` is the question with the names it links masked. Itself when the
        ranker has no plan (or a strength of 0)."""
        plan = self.ranker.plan if self.ranker is not None else None
        if plan is None or plan.strength <= 0:
            return self
        out = copy.copy(self)  # the cache of vectors and the ranker's projection are shared
        out.plan_lp = plan.log_probabilities(self.vectors([masked_text])[0], masked_text)
        return out

    def reading(self, zero_shot: ZeroShot | None) -> PathScorer:
        """This scorer for one question read by ``zero_shot``, which scores its paths when there is
        no trained ranker (and judges, either way, whether the question asks for them)."""
        out = copy.copy(self)
        out.zero_shot = zero_shot
        return out

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            if len(self.cache) + len(missing) > MAX_PATH_TEXTS:
                self.cache.clear()
            self.cache.update(zip(missing, self.encoder.encode(missing)))
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, 0), dtype=np.float32)

    def scores(self, paths: Sequence[Sequence[Step]], q: np.ndarray) -> np.ndarray:
        """``[P]`` scores of relation ``paths`` (each its (relation text, backwards) steps) for the
        question ``q`` ``[D]``."""
        if not paths:
            return np.zeros(0, dtype=np.float32)
        if self.ranker is None and self.zero_shot is not None:
            return self.zero_shot.scores(paths)
        v = self.vectors([" ".join(rel for rel, _ in p) for p in paths])
        if self.ranker is None:
            return (v @ q).astype(np.float32)
        lengths = np.array([len(p) for p in paths])
        steps = backwards = projection = None
        if self.ranker.step_q is not None:
            rel_row, projection = self.projection({rel for p in paths for rel, _ in p})
            steps, backwards = step_arrays(paths, rel_row)
        out = self.ranker.scores(q, v, lengths, steps, backwards, projection)
        if self.plan_lp is not None:
            out = out + self.ranker.plan.strength * plan_term(self.plan_lp, paths)
        return out

    def projection(self, rels: set[str]) -> tuple[dict[str, int], np.ndarray]:
        """The ranker's :meth:`~.ranker.PathRanker.step_projection` of every relation text
        seen so far (``rels`` included) and each text's row in it; recomputed only when a relation
        text is new, so per question the step term is a lookup."""
        rel_row, table = self._projection
        if not rels <= rel_row.keys():
            texts = sorted(rel_row.keys() | rels)
            rel_row, table = {t: i for i, t in enumerate(texts)}, self.ranker.step_projection(self.vectors(texts))
            self._projection = rel_row, table
        return rel_row, table


@dataclass(frozen=True)
class Walks:
    """Walks from the roots, aggregated per (relation path, end node, previous node), layer by layer.

    Layer L (0-based; walks of L + 1 edges): ``path[L]`` ``[S]`` int64 relation-path ids,
    ``node[L]``/``prev[L]`` ``[S]`` end node and the node before it, ``count[L]`` ``[S]`` number of
    walks, ``parent[L]`` ``[S]`` index of the state in layer L - 1 (in ``roots`` for L = 0) of one such
    walk, ``edge[L]`` ``[S]`` the candidate edge of its last step. ``steps[pid]`` is the tuple of
    (relation index, reversed) of path id ``pid``.
    """

    roots: np.ndarray
    path: list[np.ndarray]
    node: list[np.ndarray]
    prev: list[np.ndarray]
    count: list[np.ndarray]
    parent: list[np.ndarray]
    edge: list[np.ndarray]
    steps: list[tuple[tuple[int, bool], ...]]


def walks(c: Candidates, roots: np.ndarray, hops: int) -> Walks:
    """Enumerate the walks of the candidate graph from ``roots`` (vectorised, one layer per hop)."""
    n, e = c.num_nodes, c.num_edges
    heads, tails = c.edge_index
    # Incidence in both directions: (from, to, edge, step code = 2 * relation + reversed).
    src = np.concatenate([heads, tails])
    dst = np.concatenate([tails, heads])
    eid = np.concatenate([np.arange(e), np.arange(e)])
    code = np.concatenate([2 * c.edge_rel, 2 * c.edge_rel + 1]).astype(np.int64)
    order = np.argsort(src, kind="stable")
    src, dst, eid, code = src[order], dst[order], eid[order], code[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, src + 1, 1)
    indptr = np.cumsum(indptr)
    is_root = np.zeros(n, dtype=bool)
    is_root[roots] = True

    steps: list[tuple[tuple[int, bool], ...]] = [()]
    step_id: dict[tuple, int] = {(): 0}
    path = [np.zeros(len(roots), dtype=np.int64)]
    node = [np.asarray(roots, dtype=np.int64)]
    prev = [np.full(len(roots), -1, dtype=np.int64)]
    count = [np.ones(len(roots), dtype=np.int64)]
    parent = [np.full(len(roots), -1, dtype=np.int64)]
    edge = [np.full(len(roots), -1, dtype=np.int64)]
    for _ in range(hops):
        at = node[-1]
        deg = indptr[at + 1] - indptr[at]
        state = np.repeat(np.arange(len(at)), deg)
        if len(state) == 0:
            break
        offset = np.arange(len(state)) - np.repeat(np.cumsum(deg) - deg, deg)
        inc = indptr[at][state] + offset
        keep = ~is_root[dst[inc]] & (dst[inc] != prev[-1][state])
        state, inc = state[keep], inc[keep]
        if len(state) == 0:
            break
        # New relation-path ids: one per distinct (previous path, step code).
        pairs, pair_of = np.unique(np.stack([path[-1][state], code[inc]], 1), axis=0, return_inverse=True)
        pair_ids = np.empty(len(pairs), dtype=np.int64)
        for i, (p, k) in enumerate(pairs.tolist()):
            key = steps[p] + ((k // 2, bool(k % 2)),)
            if key not in step_id:
                step_id[key] = len(steps)
                steps.append(key)
            pair_ids[i] = step_id[key]
        new_path = pair_ids[pair_of.reshape(-1)]
        new_node, new_prev = dst[inc], at[state]
        keys, first, inverse = np.unique(np.stack([new_path, new_node, new_prev], 1), axis=0, return_index=True, return_inverse=True)
        counts = np.zeros(len(keys), dtype=np.int64)
        np.add.at(counts, inverse.reshape(-1), count[-1][state])
        path.append(keys[:, 0])
        node.append(keys[:, 1])
        prev.append(keys[:, 2])
        count.append(counts)
        parent.append(state[first])
        edge.append(eid[inc[first]])
    return Walks(np.asarray(roots, dtype=np.int64), path[1:], node[1:], prev[1:], count[1:], parent[1:], edge[1:], steps)


def walks_of(c: Candidates, roots: np.ndarray, hops: int) -> Walks:
    """:func:`walks`, memoised on ``c``: completion and selection walk the same candidates."""
    key = ("walks", np.asarray(roots, dtype=np.int64).tobytes(), hops)
    if key not in c.memo:
        c.memo[key] = walks(c, roots, hops)
    return c.memo[key]


def path_text(steps: tuple[tuple[int, bool], ...], rel_texts: Sequence[str]) -> str:
    """The text a relation path is scored by: its relation texts in walking order."""
    return " ".join(rel_texts[r] for r, _ in steps)


def path_steps(steps: tuple[tuple[int, bool], ...], rel_texts: Sequence[str]) -> tuple[Step, ...]:
    """A relation path as the scorer reads it: (relation text, walked backwards) per step."""
    return tuple((rel_texts[r], back) for r, back in steps)


@dataclass(frozen=True)
class RankedPath:
    """A relation path from the roots: its id in :class:`Walks`, layer (edges - 1) and similarity."""

    pid: int
    layer: int
    sim: float


def rank_paths(c: Candidates, w: Walks, q: np.ndarray, scorer: PathScorer, max_paths: int) -> list[RankedPath]:
    """The ``max_paths`` relation paths of ``w`` most similar to ``q`` (shorter first on ties),
    memoised on ``c`` like the walks: completion and selection rank the same paths."""
    key = ("ranked", id(w), q.tobytes(), id(scorer.ranker), id(scorer.plan_lp), id(scorer.zero_shot))
    if key not in c.memo:
        # w, the ranker, the plan and the reading are kept with the result so that their ids cannot be reused meanwhile.
        c.memo[key] = (w, scorer.ranker, scorer.plan_lp, scorer.zero_shot, _ranked(c, w, q, scorer))
    return c.memo[key][4][:max_paths]


def _ranked(c: Candidates, w: Walks, q: np.ndarray, scorer: PathScorer) -> list[RankedPath]:
    layer_of = {}
    for L, p in enumerate(w.path):
        for pid in np.unique(p).tolist():
            layer_of[pid] = L
    pids = sorted(layer_of)
    sims = scorer.scores([path_steps(w.steps[p], c.rel_texts) for p in pids], q)
    ranked = sorted(range(len(pids)), key=lambda i: (-float(sims[i]), len(w.steps[pids[i]]), pids[i]))
    return [RankedPath(pids[i], layer_of[pids[i]], float(sims[i])) for i in ranked]


def path_probabilities(ranked: Sequence[RankedPath]) -> np.ndarray:
    """``[P]`` how likely each ranked path is the question's own: the softmax of ``SCALE`` times
    the scores, as the ranker is trained (:mod:`.training`)."""
    if not ranked:
        return np.zeros(0, dtype=np.float32)
    logits = SCALE * np.array([p.sim for p in ranked], dtype=np.float64)
    e = np.exp(logits - logits.max())
    return (e / e.sum()).astype(np.float32)


def end_probabilities(w: Walks, ranked: Sequence[RankedPath]) -> dict[int, float]:
    """node -> the probability that the question's relation path ends there: the
    :func:`path_probabilities` of the ``ranked`` paths of ``w``, summed over those reaching it."""
    likely: dict[int, float] = {}
    for p, pr in zip(ranked, path_probabilities(ranked).tolist()):
        for v in np.unique(w.node[p.layer][w.path[p.layer] == p.pid]).tolist():
            likely[v] = likely.get(v, 0.0) + pr
    return likely


def complete_steps(
    c: Candidates, q: np.ndarray, scorer: PathScorer, hops: int, roots: np.ndarray, fanout: int, capped: bool, full_paths: int = FULL_PATHS,
) -> list[list[tuple[str, bool]]]:
    """The best ``full_paths`` relation paths as [relation text, forward] steps, when the candidate
    graph may lack some of their walks, else ``[]``: it may when a cap cut it (``capped``) or when a
    node a walk passes through before its last step has ``fanout`` candidate relationships (its
    expansion was cut there)."""
    roots = np.unique(np.asarray(roots, dtype=np.int64))
    if c.num_nodes == 0 or len(roots) == 0 or hops == 0:
        return []
    w = walks_of(c, roots, hops)
    top = rank_paths(c, w, q, scorer, full_paths)
    if not top:
        return []
    if not capped:
        degree = np.bincount(c.edge_index.reshape(-1), minlength=c.num_nodes)
        inner = [roots] + [w.node[L] for L in range(max(p.layer for p in top))]
        if degree[np.concatenate(inner)].max(initial=0) < fanout:
            return []
    return [[(c.rel_texts[r], not reversed_) for r, reversed_ in w.steps[p.pid]] for p in top]


def take_from(w: Walks, L: int, row: int, nodes: dict[int, None], edges: dict[int, None], limit: int) -> bool:
    """Add to ``nodes``/``edges`` the walk of ``w`` ending at state ``row`` of layer ``L``, unless
    that would make more than ``limit`` nodes; True when added."""
    walk_nodes, walk_edges = [], []
    while L >= 0:
        walk_nodes.append(int(w.node[L][row]))
        walk_edges.append(int(w.edge[L][row]))
        row, L = int(w.parent[L][row]), L - 1
    new = [v for v in dict.fromkeys(walk_nodes) if v not in nodes]
    if len(nodes) + len(new) > limit:
        return False
    nodes.update(dict.fromkeys(new))
    edges.update(dict.fromkeys(reversed(walk_edges)))
    return True


def meeting_points(c: Candidates, q: np.ndarray, scorer: PathScorer, hops: int, roots: np.ndarray, limit: int) -> list[list[tuple[int, int, Walks]]]:
    """Where the walks from several roots meet, closest first: for each such node (at most
    ``limit``), one walk from every root that reaches it, as (layer, state, walks of that root).

    Each root is walked alone; a node reached from more roots ranks first, then by the total length
    of its shortest walks, then by the similarity of their relation paths to ``q``. Only the nodes
    at the smallest total length are kept: farther ones (a genre two films away from both names)
    meet by coincidence.
    """
    best: dict[int, dict[int, tuple[int, float, int, Walks]]] = {}
    root_set = set(roots.tolist())
    for k, r in enumerate(roots.tolist()):
        w = walks_of(c, np.array([r]), hops)
        for L in range(len(w.path)):
            pids = np.unique(w.path[L]).tolist()
            sim = dict(zip(pids, scorer.scores([path_steps(w.steps[p], c.rel_texts) for p in pids], q).tolist()))
            for row, (v, pid) in enumerate(zip(w.node[L].tolist(), w.path[L].tolist())):
                if v in root_set:
                    continue
                seen = best.setdefault(v, {}).get(k)
                if seen is None or (L, -sim[pid]) < (seen[0], -seen[1]):
                    best[v][k] = (L, sim[pid], row, w)
    met = [(v, by_root) for v, by_root in best.items() if len(by_root) > 1]
    if not met:
        return []

    def rank(item):
        v, by_root = item
        return (-len(by_root), sum(x[0] + 1 for x in by_root.values()), -sum(x[1] for x in by_root.values()), v)

    met.sort(key=rank)
    closest = rank(met[0])[:2]
    return [[(L, row, w) for L, _, row, w in by_root.values()] for v, by_root in met if rank((v, by_root))[:2] == closest][:limit]


def select_paths(
    c: Candidates,
    node_sim: np.ndarray,
    q: np.ndarray,
    scorer: PathScorer,
    hops: int,
    roots: np.ndarray,
    max_paths: int = 12,
    budget: int = 30,
    answer_cap: int = 0,
    full_paths: int = FULL_PATHS,
    meet: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[Step, ...], bool, float | None]:
    """Chosen (node indices sorted ascending, edge indices, answers ``[a]``, their scores ``[a]``,
    the best relation path's steps, whether the answers are where named entities meet, the best
    path's score) of the candidate graph (see module doc). The answers are what the graph itself answers, best
    first. A node's score is the probability that the question's relation path ends
    there: the softmax of the ranked paths' scores (:func:`path_probabilities`), summed over the
    paths that reach it (where named entities meet: the share of them whose walks reach it). The
    answers are the nodes where the named entities meet, else every end
    of the best path and any node the ranked paths make at least as likely; most likely first, then
    by walks of the best path, then by similarity to the question.

    ``node_sim`` ``[N]`` breaks ties between ends equally supported. The ``full_paths`` best paths
    first keep every end, up to ``answer_cap`` nodes in all (all the answers of a question with many);
    then the round robin adds up to ``budget`` nodes more (``budget`` in all when ``answer_cap`` is 0).
    ``meet``: the roots are entities the question names (two or more); the nodes where walks from
    several of them meet come first, with a walk from each (:func:`meeting_points`), and they
    replace the all-answers step: "films X acted in that Y directed" is answered where X meets Y.
    """
    roots = np.unique(np.asarray(roots, dtype=np.int64))
    none = np.zeros(0, dtype=np.int64)
    if c.num_nodes == 0 or len(roots) == 0:
        return none, none, none, np.zeros(0, dtype=np.float32), (), False, None
    w = walks_of(c, roots, hops)
    best: tuple[Step, ...] = ()
    best_score = None
    chosen_nodes = dict.fromkeys(roots[: max(budget, 1)].tolist())
    chosen_edges: dict[int, None] = {}

    def take(L: int, row: int, limit: int) -> None:
        take_from(w, L, row, chosen_nodes, chosen_edges, limit)

    meeting = meeting_points(c, q, scorer, hops, roots, budget // 2) if meet and len(roots) > 1 else []
    answers: list[int] = []
    met_score: dict[int, float] = {}
    for walk in meeting:
        for L, row, pw in walk:
            take_from(pw, L, row, chosen_nodes, chosen_edges, budget)
        L, row, pw = walk[0]
        answers.append(int(pw.node[L][row]))
    if answers:
        # Where the names meet, the score is the share of the named entities whose walks reach the
        # node: each name's own path probabilities mostly lead to the other name, not to the answer.
        met_score = {a: len(walk) / len(roots) for a, walk in zip(answers, meeting)}
    if meeting:
        answer_cap = 0
    if w.path:
        queues = []
        ranked = rank_paths(c, w, q, scorer, max_paths)
        likely = end_probabilities(w, ranked)  # node -> probability it is an answer
        if ranked:
            best, best_score = path_steps(w.steps[ranked[0].pid], c.rel_texts), ranked[0].sim
        for p in ranked:
            rows = np.flatnonzero(w.path[p.layer] == p.pid)
            ends, inverse = np.unique(w.node[p.layer][rows], return_inverse=True)
            support = np.zeros(len(ends), dtype=np.int64)
            np.add.at(support, inverse.reshape(-1), w.count[p.layer][rows])
            best_row = {}
            for r, end in zip(rows.tolist(), w.node[p.layer][rows].tolist()):
                best_row.setdefault(end, r)
            order = sorted(range(len(ends)), key=lambda j: (-int(support[j]), -float(node_sim[ends[j]]), int(ends[j])))
            queues.append([(p.layer, best_row[int(ends[j])]) for j in order])
            if not answers and len(queues) == 1:
                path_answers = [int(ends[j]) for j in order]
        if not answers and queues:
            # The best path's ends, plus any node the ranked paths make at least as likely, most likely first.
            floor = min(likely[v] for v in path_answers)
            pool = [v for v in likely if likely[v] >= floor - 1e-9]
            rank_of = {v: i for i, v in enumerate(path_answers)}
            answers = sorted(pool, key=lambda v: (-round(likely[v], 6), rank_of.get(v, len(rank_of)), -float(node_sim[v]), v))
        position = [0] * len(queues)
        if answer_cap > 0:
            # All the answers: the best paths keep every end they can within the cap.
            for k in range(min(full_paths, len(queues))):
                for L, row in queues[k]:
                    take(L, row, answer_cap)
                position[k] = len(queues[k])
            budget = max(budget, len(chosen_nodes) + budget // 3)
        while len(chosen_nodes) < budget and any(position[k] < len(qq) for k, qq in enumerate(queues)):
            for k, qq in enumerate(queues):
                if position[k] >= len(qq) or len(chosen_nodes) >= budget:
                    continue
                L, row = qq[position[k]]
                position[k] += 1
                take(L, row, budget)
    nodes = np.array(sorted(chosen_nodes), dtype=np.int64)
    inside = np.zeros(c.num_nodes, dtype=bool)
    inside[nodes] = True
    induced = np.flatnonzero(inside[c.edge_index[0]] & inside[c.edge_index[1]])
    edges = list(chosen_edges) + [int(x) for x in induced if int(x) not in chosen_edges]
    answers = [a for a in dict.fromkeys(answers) if inside[a]]  # those the budget kept
    scores = [met_score[a] if a in met_score else likely.get(a, 0.0) for a in answers] if w.path else []
    return nodes, np.array(edges, dtype=np.int64), np.array(answers, dtype=np.int64), np.array(scores, dtype=np.float32), best, bool(meeting), best_score
