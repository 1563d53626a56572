"""Subgraph samples: what the GNN + LLM model trains on and answers from.

A sample is one question with its (retrieved or whole) textual graph: a PyG ``Data`` with node
features ``x`` [N, D], ``edge_index`` [2, E] and edge features ``edge_attr`` [E, D] (embeddings of
the node and relation texts), the same graph textualised (``desc``), the node texts (for the
hallucination check) and the gold label. ``gr-neo4j retrieve --out FILE`` writes lists of them with
:func:`save_samples`; ``gr-neo4j train`` reads them with :func:`load_samples`.

``question`` is the raw question (knowledge-graph QA, scene graphs) or, for ExplaGraphs, the two
arguments as ``Argument 1: …\\nArgument 2: …``; the model's prompt module adds the instruction.
``label`` is the gold answer; several gold answers are joined with ``|``.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch_geometric.data import Data

from .errors import GrNeo4jError
from .loaders.explagraphs import parse_graph  # the loader's parser: one textualization for Neo4j and training

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
        "x": d.x.detach().cpu().float().contiguous(),
        "edge_index": d.edge_index.detach().cpu().long().contiguous(),
        "edge_attr": edge_attr.detach().cpu().float().contiguous(),
    }


def _from_dict(d: dict) -> SubgraphSample:
    data = Data(x=d["x"], edge_index=d["edge_index"], edge_attr=d["edge_attr"])
    return SubgraphSample(d["id"], d["question"], d["label"], d["desc"], data, d["dataset"], list(d["node_texts"]))


def save_samples(path: str | Path, samples: Sequence[SubgraphSample]) -> Path:
    """Write samples atomically (a temporary file renamed into place) as plain tensors and strings."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save({"format": FORMAT, "samples": [_to_dict(s) for s in samples]}, tmp)
    tmp.replace(path)
    return path


def load_samples(path: str | Path) -> list[SubgraphSample]:
    """Read samples written by :func:`save_samples` (``weights_only`` loading: no code runs)."""
    path = Path(path)
    if not path.is_file():
        raise GrNeo4jError(f"{path}: no such samples file")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch raises many types for corrupt or foreign files
        raise GrNeo4jError(f"{path}: not a samples file written by gr-neo4j ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise GrNeo4jError(f"{path}: not a samples file of format {FORMAT}")
    return [_from_dict(d) for d in blob["samples"]]


# --- ExplaGraphs: whole graphs, no retrieval -------------------------------------------------------


@dataclass(frozen=True)
class ExplaGraphsRow:
    row: int  # 0-based data row: the `graph` id the loader gives this sample in Neo4j
    line: int
    arg1: str
    arg2: str
    label: str
    node_texts: list[str]
    edges: list[tuple[int, str, int]]


def read_explagraphs(path: str | Path) -> list[ExplaGraphsRow]:
    """Rows of an ExplaGraphs TSV: `belief, argument, stance, graph`, with or without the header row
    `arg1 arg2 label graph` of the G-Retriever copy."""
    path = Path(path)
    if not path.is_file():
        raise GrNeo4jError(f"{path}: no such file")
    rows: list[ExplaGraphsRow] = []
    with path.open(newline="", encoding="utf-8") as fh:
        for lineno, fields in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
            if lineno == 1 and [f.strip().lower() for f in fields] == ["arg1", "arg2", "label", "graph"]:
                continue
            if not fields or fields == [""]:
                continue
            if len(fields) != 4:
                raise GrNeo4jError(f"{path}:{lineno}: expected 4 tab-separated fields, found {len(fields)}")
            arg1, arg2, label, graph = fields
            label = label.strip().lower()
            if label not in ("support", "counter"):
                raise GrNeo4jError(f"{path}:{lineno}: stance must be 'support' or 'counter', got {label!r}")
            try:
                nodes, edges = parse_graph(graph)
            except ValueError as exc:
                raise GrNeo4jError(f"{path}:{lineno}: {exc}") from None
            rows.append(ExplaGraphsRow(len(rows), lineno, arg1.strip(), arg2.strip(), label, nodes, edges))
    if not rows:
        raise GrNeo4jError(f"{path}: no rows")
    return rows


def explagraphs_question(arg1: str, arg2: str) -> str:
    return f"Argument 1: {arg1}\nArgument 2: {arg2}"


def explagraphs_samples(path: str | Path, embedder, batch_size: int = 256) -> list[SubgraphSample]:
    """Every row of an ExplaGraphs TSV as a whole-graph sample; node and relation texts embedded by
    ``embedder`` (a :class:`gr_neo4j.embedder.Embedder`) in a few large batches. Sample ids are the
    0-based data rows, the ``graph`` key of the ExplaGraphs data in Neo4j."""
    from .textualize import textualize, to_data

    rows = read_explagraphs(path)
    node_texts = sorted({t for r in rows for t in r.node_texts})
    rel_texts = sorted({rel for r in rows for _, rel, _ in r.edges})
    node_vec = dict(zip(node_texts, torch.from_numpy(embedder.encode(node_texts, batch_size=batch_size))))
    rel_vec = dict(zip(rel_texts, torch.from_numpy(embedder.encode(rel_texts, batch_size=batch_size))))
    samples = []
    for r in rows:
        x = torch.stack([node_vec[t] for t in r.node_texts])
        edge_index = torch.tensor([[s for s, _, _ in r.edges], [d for _, _, d in r.edges]], dtype=torch.long)
        edge_attr = torch.stack([rel_vec[rel] for _, rel, _ in r.edges])
        samples.append(
            SubgraphSample(
                id=str(r.row),
                question=explagraphs_question(r.arg1, r.arg2),
                label=r.label,
                desc=textualize(r.node_texts, r.edges),
                data=to_data(x, edge_index, edge_attr),
                dataset="explagraphs",
                node_texts=list(r.node_texts),
            )
        )
    return samples
