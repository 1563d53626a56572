"""How a subgraph is chosen from the candidates: one small selector class per :class:`Mode`.

``paths``      the default on knowledge graphs: the ends of the relation paths from the topic
               entities whose text reads most like the question, under a node budget (see
               :mod:`gr_neo4j.retrieval.paths`). Multi-hop questions name a chain of relations;
               node and edge scores taken one by one cannot see it.
``reference``  G-Retriever exactly: node and relation texts scored against the question, PCST.
``triples``    PCST, but an edge is scored as the triple it states, the mean of the
               similarities of its head, relation and tail, and topic entities get the top node
               prize. On knowledge graphs with few relation texts (MetaQA has 9), the reference
               scores tie thousands of edges, and G-Retriever's tie rule splits one prize among them
               into crumbs no edge can live on; carrying the endpoints breaks the ties in favour of
               the edges next to what the question names.
``whole``      no selection: the whole candidate graph (ExplaGraphs; the "k-hop" baseline).
``kaping``     the top-k triples by the same triple score, no PCST (KAPING-style baseline).

A new mode is a member of :class:`gr_neo4j.defaults.Mode` plus one class here decorated with
``@register``; nothing else dispatches on the mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from ..defaults import Mode
from .candidates import Candidates
from .params import RetrievalParams
from .paths import PathScorer, select_paths
from .pcst import retrieval_pcst

KAPING_K = 10  # triples kept by the kaping baseline


@dataclass(frozen=True)
class Scored:
    """Similarity of the question ``q`` [D] to every candidate node ``[N]``, edge ``[E]`` and triple ``[E]``."""

    q: np.ndarray
    node: np.ndarray
    edge: np.ndarray
    triple: np.ndarray


@dataclass(frozen=True)
class Selection:
    """What a selector chose, as indices into the candidate graph.

    nodes: ``[n]`` int64, sorted ascending; edges: ``[m]`` int64, in the order the description
    lists them. edge_scores: ``[E]`` the score shown for every candidate edge (relation or triple).
    answers: ``[a]`` int64 the chosen nodes the selection itself takes for answers, best first
    (``paths`` only; empty elsewhere); answer_scores: ``[a]`` how likely each is an answer;
    path: the best relation path's (relation text, backwards) steps (``paths`` only); met: the
    answers are where the named entities' walks meet; path_score: the best path's score.
    """

    nodes: np.ndarray
    edges: np.ndarray
    edge_scores: np.ndarray
    answers: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    answer_scores: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    path: tuple[tuple[str, bool], ...] = ()
    met: bool = False
    path_score: float | None = None


def score(c: Candidates, q: np.ndarray) -> Scored:
    """Cosine similarities; every embedding is unit length, so a dot product suffices. Edge scores
    are computed once per distinct relation text."""
    node = np.asarray(c.node_sim, dtype=np.float32)
    edge = (c.rel_attr @ q).astype(np.float32)[c.edge_rel] if c.num_edges else np.zeros(0, dtype=np.float32)
    triple = (node[c.edge_index[0]] + edge + node[c.edge_index[1]]) / 3 if c.num_edges else np.zeros(0, dtype=np.float32)
    return Scored(np.asarray(q, dtype=np.float32), node, edge.astype(np.float32), triple.astype(np.float32))


class Selector:
    """Chooses a subgraph of the candidates. Subclasses set ``mode`` and implement ``choose``;
    ``uses_triples`` says the edges are scored (and shown) as whole triples."""

    mode: ClassVar[Mode]
    uses_triples: ClassVar[bool] = False

    def choose(self, c: Candidates, s: Scored, params: RetrievalParams, scorer: PathScorer | None) -> tuple[np.ndarray, ...]:
        """(node indices sorted ascending ``[n]``, edge indices ``[m]``[, answer candidates ``[a]``,
        their scores ``[a]``, the best relation path, whether the answers are meeting points, its score])."""
        raise NotImplementedError

    def __call__(self, c: Candidates, s: Scored, params: RetrievalParams, scorer: PathScorer | None = None) -> Selection:
        nodes, edges, *answers = self.choose(c, s, params, scorer)
        sel = Selection(np.asarray(nodes, dtype=np.int64), np.asarray(edges, dtype=np.int64), s.triple if self.uses_triples else s.edge)
        if not answers:
            return sel
        path, met, path_score = answers[2:5] if len(answers) > 2 else ((), False, None)
        return replace(sel, answers=np.asarray(answers[0], dtype=np.int64), answer_scores=np.asarray(answers[1], dtype=np.float32),
                       path=tuple(path), met=bool(met), path_score=path_score)


SELECTORS: dict[Mode, Selector] = {}


def register(cls: type[Selector]) -> type[Selector]:
    """Class decorator: make ``cls`` the selector of ``cls.mode``."""
    SELECTORS[cls.mode] = cls()
    return cls


def selector(mode: Mode | str) -> Selector:
    """The selector of ``mode``; ValueError names the modes when there is none."""
    try:
        return SELECTORS[Mode(mode)]
    except (ValueError, KeyError):
        raise ValueError(f"unknown retrieval mode {str(mode)!r} (one of {', '.join(SELECTORS)})") from None


def path_roots(c: Candidates, s: Scored, params: RetrievalParams) -> np.ndarray:
    """Where the ``paths`` mode's walks start: the topic entities, else the ``topk`` most similar nodes."""
    return c.topic if len(c.topic) else np.argsort(-s.node, kind="stable")[: max(params.topk, 1)]


@register
class Paths(Selector):
    mode = Mode.PATHS

    def choose(self, c, s, params, scorer):
        if scorer is None:
            raise ValueError("the paths mode needs a PathScorer")
        roots = path_roots(c, s, params)
        return select_paths(c, s.node, s.q, scorer, params.hops, roots, params.max_paths, params.node_budget, params.answer_cap, meet=len(c.topic) > 1)


@register
class Reference(Selector):
    mode = Mode.REFERENCE

    def choose(self, c, s, params, scorer):
        sel = retrieval_pcst(s.node, c.edge_index, s.edge, topk=params.topk, topk_e=params.topk_e, cost_e=params.cost_e)
        return sel.nodes, sel.edges


@register
class Triples(Selector):
    mode = Mode.TRIPLES
    uses_triples = True

    def choose(self, c, s, params, scorer):
        extra = np.zeros(c.num_nodes, dtype=np.float32)
        extra[c.topic] = max(params.topk, 1)
        sel = retrieval_pcst(s.node, c.edge_index, s.triple, topk=params.topk, topk_e=params.topk_e, cost_e=params.cost_e, extra_node_prizes=extra)
        return sel.nodes, sel.edges


@register
class Whole(Selector):
    mode = Mode.WHOLE

    def choose(self, c, s, params, scorer):
        return np.arange(c.num_nodes), np.arange(c.num_edges)


@register
class Kaping(Selector):
    mode = Mode.KAPING
    uses_triples = True

    def choose(self, c, s, params, scorer):
        edges = np.argsort(-s.triple, kind="stable")[:KAPING_K]
        nodes = np.unique(np.concatenate([c.topic, c.edge_index[0, edges], c.edge_index[1, edges]]))
        return nodes, edges


MODES = tuple(SELECTORS)  # every registered mode, in registration order
assert set(MODES) == set(Mode), "every Mode needs a registered selector"


def select(mode: Mode | str, c: Candidates, s: Scored, params: RetrievalParams, scorer: PathScorer | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Chosen (node indices sorted ascending, edge indices) of the candidate graph under ``mode``."""
    sel = selector(mode)(c, s, params, scorer)
    return sel.nodes, sel.edges
