"""Graph encoders: node and edge embeddings -> one vector per graph.

``gt`` (default, as G-Retriever): a Graph Transformer, stacked ``TransformerConv`` layers that attend
over neighbours with the relation embeddings as edge features; ``gat``: ``GATConv`` with edge
features; ``gcn``: ``GCNConv`` (ignores edge features, the classic baseline). Layers are PyG's;
this module only stacks them (batch norm + ReLU between layers, as the paper's code) and mean-pools
the nodes of each graph.
"""

from __future__ import annotations

import itertools

import torch
from torch import Tensor, nn
from torch_geometric.nn import GATConv, GCNConv, TransformerConv, global_mean_pool

from ..defaults import Gnn

GNN_TYPES = tuple(g for g in Gnn if g != Gnn.NONE)  # the encoders (Gnn.NONE is no encoder)


def _conv(kind: str, in_dim: int, out_dim: int, heads: int, edge_dim: int, dropout: float) -> nn.Module:
    if kind == "gt":
        return TransformerConv(in_dim, out_dim // heads, heads=heads, edge_dim=edge_dim, dropout=dropout)
    if kind == "gat":
        return GATConv(in_dim, out_dim // heads, heads=heads, edge_dim=edge_dim, dropout=dropout)
    if kind == "gcn":
        return GCNConv(in_dim, out_dim)
    raise ValueError(f"unknown GNN type {kind!r} (choose from {', '.join(GNN_TYPES)})")


class GraphEncoder(nn.Module):
    """Stacked message passing + mean pooling.

    Args:
        kind: 'gt', 'gat' or 'gcn'.
        in_dim: node (and edge) feature size D, the embedder's dimension.
        hidden_dim: width of every layer (divisible by ``heads``); also the output size.
        num_layers: number of message-passing layers.
        heads: attention heads of 'gt' and 'gat' (concatenated: each head has hidden_dim/heads).
        dropout: attention dropout of 'gt'/'gat' and feature dropout between layers.
    """

    def __init__(self, kind: str = "gt", in_dim: int = 384, hidden_dim: int = 1024, num_layers: int = 4,
                 heads: int = 4, dropout: float = 0.0):
        super().__init__()
        if kind not in GNN_TYPES:
            raise ValueError(f"unknown GNN type {kind!r} (choose from {', '.join(GNN_TYPES)})")
        if kind != "gcn" and hidden_dim % heads:
            raise ValueError(f"hidden_dim {hidden_dim} must be divisible by heads {heads}")
        self.kind, self.out_channels, self.dropout = kind, hidden_dim, dropout
        dims = [in_dim] + [hidden_dim] * num_layers
        self.convs = nn.ModuleList(_conv(kind, a, b, heads, in_dim, dropout) for a, b in itertools.pairwise(dims))
        self.norms = nn.ModuleList(nn.BatchNorm1d(hidden_dim) for _ in range(num_layers - 1))

    def node_embeddings(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> Tensor:
        """x [N, D], edge_index [2, E], edge_attr [E, D] -> [N, hidden_dim]."""
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index) if self.kind == "gcn" else conv(x, edge_index, edge_attr=edge_attr)
            if i < len(self.convs) - 1:
                x = self.norms[i](x) if x.size(0) > 1 or not self.training else x
                x = torch.relu(x)
                x = nn.functional.dropout(x, p=self.dropout, training=self.training)
        return x

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, batch: Tensor, num_graphs: int) -> Tensor:
        """-> [num_graphs, hidden_dim]: the mean of each graph's node embeddings (zeros for a graph
        without nodes)."""
        h = self.node_embeddings(x, edge_index, edge_attr)
        return global_mean_pool(h, batch, size=num_graphs)
