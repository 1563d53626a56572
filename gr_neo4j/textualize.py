"""A subgraph as text and as a PyG `Data`, in G-Retriever's layout (torch and PyG only for the `Data`).

The text is what the LLM reads: a ``node_id,node_attr`` CSV table, one blank line, then a
``src,edge_attr,dst`` table. It is byte for byte what G-Retriever writes with pandas
(``nodes.to_csv(index=False) + '\\n' + edges.to_csv(index=False, columns=['src', 'edge_attr', 'dst'])``):
minimal quoting, ``'\\n'`` line ends, pandas being a thin layer over the same `csv` writer.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor
    from torch_geometric.data import Data


def textualize(
    node_texts: Sequence[str],
    edges: Sequence[tuple[int, str, int]],
    node_ids: Sequence[int] | None = None,
) -> str:
    """Describe a textual graph as two CSV tables.

    Args:
        node_texts: the text of every node, in order.
        edges: ``(src, relation text, dst)``; src and dst are node ids as written in the table.
        node_ids: the id written for each node; by default its position (0..N-1). G-Retriever keeps
            the ids of the original graph for per-sample graphs, so the caller passes them there.
    """
    ids = range(len(node_texts)) if node_ids is None else node_ids
    if len(ids) != len(node_texts):
        raise ValueError(f"{len(ids)} node ids for {len(node_texts)} node texts")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("node_id", "node_attr"))
    writer.writerows(zip(ids, node_texts))
    out.write("\n")
    writer.writerow(("src", "edge_attr", "dst"))
    writer.writerows((src, text, dst) for src, text, dst in edges)
    return out.getvalue()


def to_data(x: Tensor, edge_index: Tensor, edge_attr: Tensor) -> Data:
    """The subgraph for the GNN.

    Args:
        x: node features ``[N, D]``.
        edge_index: ``[2, E]`` long, indices into ``x``.
        edge_attr: edge features ``[E, D]``.

    Imports torch and PyG here, not with the module: textualizing (all that retrieval needs) stays
    free of them.
    """
    import torch
    from torch_geometric.data import Data

    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape [2, E], got {list(edge_index.shape)}")
    if edge_attr.size(0) != edge_index.size(1):
        raise ValueError(f"{edge_attr.size(0)} edge features for {edge_index.size(1)} edges")
    return Data(x=x, edge_index=edge_index.to(torch.long), edge_attr=edge_attr, num_nodes=x.size(0))
