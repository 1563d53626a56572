"""The typed result of one retrieval."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from ..defaults import Seeds
from .linking import Linked
from .params import MAX_HOPS
from .zero_shot import ANSWERABLE, path_text

if TYPE_CHECKING:
    from torch_geometric.data import Data


@dataclass(frozen=True)
class RetrievedNode:
    """A chosen node: its Neo4j element id, key in its graph, text and similarity to the question."""

    element_id: str
    key: str
    text: str
    score: float
    topic: bool = False


@dataclass(frozen=True)
class RetrievedEdge:
    """A chosen relationship; ``src``/``dst`` index :attr:`RetrievalResult.nodes` (head, tail)."""

    element_id: str
    src: int
    dst: int
    text: str
    score: float


@dataclass(frozen=True)
class Timings:
    """Milliseconds per stage: question embedding, the Cypher round trips, scoring + selection, and
    total; ``complete_ms`` is the part of ``cypher_ms`` the ``paths`` mode's completion read took."""

    embed_ms: float
    cypher_ms: float
    pcst_ms: float
    total_ms: float
    complete_ms: float = 0.0


@dataclass(frozen=True)
class GraphFeatures:
    """The chosen subgraph's embeddings, in numpy: what the GNN's ``Data`` is made of.

    ``x``: ``[n, D]`` float32, row i the node ``RetrievalResult.nodes[i]``; ``edge_attr``: ``[m, D]``
    float32, row j the relation of ``RetrievalResult.edges[j]``.
    """

    x: np.ndarray
    edge_attr: np.ndarray


@dataclass(frozen=True)
class RetrievalResult:
    """A question's subgraph: what was chosen, as text for the LLM and as ``Data`` for the GNN.

    ``features``: the nodes' and edges' embeddings (numpy), None only where the caller asked for
    figures without them (``eval-retrieval``). :attr:`data` turns them into PyG's ``Data`` on
    first read: retrieval itself never imports torch or PyG (seconds of a cold ``ask``).
    ``desc``: G-Retriever's textualization of the same subgraph.
    ``candidates``: size of the candidate graph PCST chose from, as (nodes, edges).
    ``seeds``: where the topic entities came from (None on per-sample graphs); ``linked``: the
    entities linked in the question when ``seeds`` is ``linked``, in question order.
    ``graph_answers``: the ``paths`` mode's own answers (where the named entities meet, else the
    ends of the best relation path and the nodes the ranked paths make as likely), best first;
    empty in other modes. ``graph_answer_scores``: the probability of each that the question's
    relation path ends there (the path ranker's softmax over the ranked paths, summed); where named
    entities meet, the share of them whose walks reach it. ``path``: the best relation path's
    (relation text, backwards) steps and ``path_score`` its score (``paths`` mode); ``depth``: its
    number of relations; ``read_depth``: every length up to ``hops`` competed, so the depth is
    the best path's (no ``--hops``, no hop model). ``not_in_graph``: why the graph does not hold the answer (nothing it names
    is in the graph, or no relation of it is what the question asks for); None when it may.
    ``path_asked``: how much the question's words ask for the best path's relations (zero-shot
    evidence, 0-1; it answers above :data:`~.zero_shot.ANSWERABLE`, or where a trained ranker
    scores the path at least its answer floor). ``sole_relation``: the best path is the named
    entity's only relation and the question asks what it has ("what does NAME appear in"), so it
    answers whatever ``path_asked``.
    """

    question: str
    dataset: str
    graph: str | None
    mode: str
    parameters: dict
    nodes: list[RetrievedNode]
    edges: list[RetrievedEdge]
    desc: str
    features: GraphFeatures | None = field(compare=False)  # arrays: no ``==``; the nodes and edges say the same
    timings: Timings
    candidates: tuple[int, int] = (0, 0)
    seeds: Seeds | None = None
    linked: tuple[Linked, ...] = ()
    retrieval_id: str | None = field(default=None, compare=False)
    graph_answers: tuple[int, ...] = ()  # indices into ``nodes``: what the selection itself answers, best first
    graph_answer_scores: tuple[float, ...] = ()
    hop_probabilities: tuple[float, ...] = ()  # when the depth was predicted: P(1..H relations)
    path: tuple[tuple[str, bool], ...] = ()
    path_score: float | None = None
    not_in_graph: str | None = None
    read_depth: bool = False  # paths of every length up to ``hops`` competed (no --hops, no hop model)
    path_asked: float | None = None
    sole_relation: bool = False  # the best path is the named entity's only relation, and the question asks what it has

    @property
    def depth(self) -> int | None:
        """Relations in the best relation path (``paths`` mode), else None."""
        return len(self.path) if self.path else None

    @cached_property
    def data(self) -> Data | None:
        """The subgraph for the GNN: ``x`` [n, D], ``edge_index`` [2, m] (indices into ``nodes``),
        ``edge_attr`` [m, D]; None without :attr:`features`. Built once, on first read, by the
        model side (imports torch and PyG)."""
        if self.features is None:
            return None
        import torch

        from ..textualize import to_data

        edge_index = torch.tensor([[e.src for e in self.edges], [e.dst for e in self.edges]], dtype=torch.long).reshape(2, -1)
        return to_data(torch.from_numpy(self.features.x), edge_index, torch.from_numpy(self.features.edge_attr))

    def to_json(self) -> dict:
        """Everything but the tensors, as JSON-ready values."""
        return {
            "question": self.question,
            "dataset": self.dataset,
            "graph": self.graph,
            "mode": self.mode,
            "parameters": self.parameters,
            "nodes": [asdict(n) for n in self.nodes],
            "edges": [asdict(e) for e in self.edges],
            "desc": self.desc,
            "timings_ms": asdict(self.timings),
            "candidates": {"nodes": self.candidates[0], "edges": self.candidates[1]},
            "seeds": self.seeds,
            "linked": [asdict(x) for x in self.linked],
            "hop_probabilities": list(self.hop_probabilities),
            "relation_path": [{"relation": rel, "backwards": back} for rel, back in self.path],
            "path_score": self.path_score,
            "path_asked": self.path_asked,
            "sole_relation": self.sole_relation,
            "answers_above": ANSWERABLE,
            "not_in_graph": self.not_in_graph,
            "retrieval_id": self.retrieval_id,
            "graph_answers": [{"key": self.nodes[i].key, "text": self.nodes[i].text, "score": x}
                              for i, x in zip(self.graph_answers, self.graph_answer_scores)],
        }

    def hops_line(self) -> str | None:
        """How deep the retrieval walked and why, for people: predicted (with its probability) or
        given; None on per-sample graphs."""
        if self.seeds is None:
            return None
        hops = self.parameters.get("hops")
        if self.hop_probabilities:
            return f"Hops: {hops}, predicted from the question ({self.hop_probabilities[hops - 1]:.2f})"
        if self.path and self.read_depth:
            asked = f"; asked for {self.path_asked:.2f}, answers above {ANSWERABLE}" if self.path_asked is not None else ""
            if self.sole_relation:
                asked += ", or as here by the named entity's only relation"
            return f"Hops: {len(self.path)} ({path_text(self.path)}), read from the question (zero-shot, up to {MAX_HOPS}){asked}"
        return f"Hops: {hops}"

    def seeds_line(self) -> str | None:
        """One line saying where the topic entities came from, for people (None on per-sample graphs).

        Linked: each mention and its entity, and for an ambiguous mention what else it matched."""
        if self.seeds is None:
            return None
        if self.seeds is Seeds.LINKED:
            parts = []
            for x in self.linked:
                part = f"'{x.mention}' -> {x.key} ({x.score:.1f})"
                if x.alternatives:
                    more = len(x.alternatives) - 3
                    part += f" [also matched: {', '.join(x.alternatives[:3])}{f' and {more} more' if more > 0 else ''}]"
                parts.append(part)
            return "Linked entities: " + "; ".join(parts)
        if self.seeds is Seeds.VECTOR:
            why = "entity linking is off" if not self.parameters.get("link", True) else "no entity linked in the question"
            return f"Seeds: {why}; the vector hits only (name one with --entity)"
        return "Topic entities: " + ("given with --entity" if self.seeds is Seeds.GIVEN else "the stored question's")
