"""Subgraph samples: what the GNN + LLM model trains on and answers from.

A sample is one question with its (retrieved or whole) textual graph: a PyG ``Data`` with node
features ``x`` [N, D], ``edge_index`` [2, E] and edge features ``edge_attr`` [E, D] (embeddings of
the node and relation texts), the same graph textualised (``desc``), the node texts (for the
hallucination check) and the gold label. ``gr-neo4j retrieve --out FILE`` writes lists of them with
:func:`save_samples`; ``gr-neo4j train`` reads them with :func:`load_samples`.

``question`` is the raw question (knowledge-graph QA, scene graphs) or, for ExplaGraphs, the two
arguments as ``Argument 1: …\\nArgument 2: …``; the model's prompt module adds the instruction.
``label`` is the gold answer; several gold answers are joined with ``|``. ``topic`` marks the nodes
that are the question's topic entities (knowledge graphs; empty where unknown, e.g. files written
before it existed). ``q`` is the question's embedding by the same embedder as the nodes (written by
`retrieve`; None in older files, embedded again where the node head needs it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch_geometric.data import Data

from .atomic import atomic_path
from .errors import BadInput, MissingInput

FORMAT = "gr-neo4j-samples/1"


@dataclass
class SubgraphSample:
    id: str
    question: str
    label: str
    desc: str
    data: Data
    dataset: str
    node_texts: list[str] = field(default_factory=list)
    topic: list[bool] = field(default_factory=list)
    q: torch.Tensor | None = None


def _to_dict(s: SubgraphSample) -> dict:
    d = s.data
    edge_attr = d.edge_attr if d.edge_attr is not None else torch.zeros(d.edge_index.size(1), d.x.size(1))
    return {
        "id": s.id,
        "question": s.question,
        "label": s.label,
        "desc": s.desc,
        "dataset": s.dataset,
        "node_texts": list(s.node_texts),
        "topic": [bool(t) for t in s.topic],
        "x": d.x.detach().cpu().float().contiguous(),
        "edge_index": d.edge_index.detach().cpu().long().contiguous(),
        "edge_attr": edge_attr.detach().cpu().float().contiguous(),
    } | ({"q": s.q.detach().cpu().float().contiguous()} if s.q is not None else {})


def _from_dict(d: dict) -> SubgraphSample:
    data = Data(x=d["x"], edge_index=d["edge_index"], edge_attr=d["edge_attr"])
    return SubgraphSample(d["id"], d["question"], d["label"], d["desc"], data, d["dataset"], list(d["node_texts"]), list(d.get("topic", [])),
                         d.get("q"))


def save_samples(path: str | Path, samples: Sequence[SubgraphSample]) -> Path:
    """Write samples atomically (a temporary file renamed into place) as plain tensors and strings."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        torch.save({"format": FORMAT, "samples": [_to_dict(s) for s in samples]}, tmp)
    return path


def load_samples(path: str | Path) -> list[SubgraphSample]:
    """Read samples written by :func:`save_samples` (``weights_only`` loading: no code runs)."""
    path = Path(path)
    if not path.is_file():
        raise MissingInput(f"{path}: no such samples file")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for corrupt or foreign files
        raise BadInput(f"{path}: not a samples file written by gr-neo4j ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise BadInput(f"{path}: not a samples file of format {FORMAT}")
    return [_from_dict(d) for d in blob["samples"]]
