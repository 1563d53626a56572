"""Answer scoring on the graph: a question-conditioned node head.

Every node of a retrieved subgraph gets a logit for "this node answers the question". The question
vector q ``[D]`` (the embedder of the nodes) enters each node's features as ``[x, q, x * q, topic]``
(topic: 1 on the question's topic entities) and each edge's as ``[e, e * q]``, so message passing can weigh relations by what the question asks; a
stack of the encoder's convolutions (Graph Transformer by default, with residual connections)
propagates, and a linear layer scores. It is trained with binary cross-entropy on each sample's
answer nodes (node texts equal to a gold answer after normalisation), on the CPU in minutes.

``gr-neo4j train --objective node`` trains it alone (:class:`NodeModel`, no LLM), ``joint`` beside
the GNN + LLM model (:class:`~.gretriever.GRetrieverModel` holds it as ``head``; its ranking of the
nodes is listed in the prompt). The question vector is each sample's ``q`` (written by `retrieve`),
else the configured embedder's vector of the question text (:func:`fill_question_vectors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch_geometric.data import Batch

from ..errors import CheckpointMismatch, UsageError
from ..metrics import SEPARATOR, normalize, split_answers
from ..samples import SubgraphSample
from .config import ModelConfig
from .encoder import GNN_TYPES, _conv


def answer_mask(node_texts: Sequence[str], label: str) -> Tensor:
    """``[N]`` float: 1 where the node text is (normalised) one of the gold answers ``a|b|c``."""
    gold = {n for n in (normalize(a) for a in split_answers(label)) if n}
    return torch.tensor([float(normalize(t) in gold) for t in node_texts])


def topic_flags(samples: Sequence[SubgraphSample]) -> Tensor:
    """``[sum n_i]`` 1.0 on topic-entity nodes (0 where a sample does not say)."""
    return torch.cat([torch.tensor([float(t) for t in s.topic]) if len(s.topic) == s.data.num_nodes else torch.zeros(s.data.num_nodes) for s in samples])


class AnswerHead(nn.Module):
    """Node logits of a batch of subgraphs.

    Args:
        kind: 'gt', 'gat' or 'gcn' (:mod:`.encoder`'s convolutions).
        dim: node, edge and question feature size D.
        hidden: width of every layer (divisible by ``heads``).
        layers: message-passing layers.
        heads: attention heads of 'gt' and 'gat'.
        dropout: between layers.
    """

    def __init__(self, kind: str = "gt", dim: int = 384, hidden: int = 256, layers: int = 2, heads: int = 4, dropout: float = 0.1):
        super().__init__()
        if kind not in GNN_TYPES:
            raise ValueError(f"unknown GNN type {kind!r} (choose from {', '.join(GNN_TYPES)})")
        self.kind, self.dropout = kind, dropout
        self.node_in = nn.Linear(3 * dim + 1, hidden)
        self.edge_in = nn.Linear(2 * dim, hidden)
        self.convs = nn.ModuleList(_conv(kind, hidden, hidden, heads, hidden, dropout) for _ in range(layers))
        self.out = nn.Linear(hidden, 1)

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor, q: Tensor, batch: Tensor, topic: Tensor) -> Tensor:
        """x ``[N, D]``, edge_index ``[2, E]``, edge_attr ``[E, D]``, q ``[B, D]`` (one per graph),
        batch ``[N]`` graph of each node, topic ``[N]`` 0/1 -> ``[N]`` logits."""
        qn = q[batch]
        h = torch.relu(self.node_in(torch.cat([x, qn, x * qn, topic.unsqueeze(-1)], -1)))
        qe = q[batch[edge_index[0]]] if edge_index.numel() else q[:0]
        e = self.edge_in(torch.cat([edge_attr, edge_attr * qe], -1))
        for conv in self.convs:
            m = conv(h, edge_index) if self.kind == "gcn" else conv(h, edge_index, edge_attr=e)
            h = h + nn.functional.dropout(torch.relu(m), p=self.dropout, training=self.training)
        return self.out(h).squeeze(-1)

    def score(self, samples: Sequence[SubgraphSample], q: Tensor) -> list[Tensor]:
        """Per sample, ``[n_i]`` answer probabilities of its nodes (``q`` ``[B, D]``)."""
        b = Batch.from_data_list([s.data for s in samples])
        logits = self(b.x, b.edge_index, b.edge_attr, q, b.batch, topic_flags(samples))
        return list(torch.sigmoid(logits).split(b.batch.bincount(minlength=len(samples)).tolist()))


@dataclass(frozen=True)
class HeadFigures:
    """Hit@1 of the best-scored node, and answer-set precision / recall / F1 of the nodes scored
    above ``threshold`` (the best one when none is), over ``total`` samples."""

    hit_at_1: float
    precision: float
    recall: float
    f1: float
    total: int


@torch.no_grad()
def evaluate_head(head: AnswerHead, samples: Sequence[SubgraphSample], q: Tensor, threshold: float = 0.5, batch_size: int = 64) -> HeadFigures:
    head.eval()
    hits, p_sum, r_sum, f_sum = 0, 0.0, 0.0, 0.0
    for i in range(0, len(samples), batch_size):
        chunk = samples[i : i + batch_size]
        for s, probs in zip(chunk, head.score(chunk, q[i : i + batch_size])):
            gold = answer_mask(s.node_texts, s.label).bool()
            wanted = len({n for n in (normalize(a) for a in split_answers(s.label)) if n})
            if len(probs) == 0:
                continue
            best = int(probs.argmax())
            hits += bool(gold[best])
            chosen = probs > threshold
            if not chosen.any():
                chosen[best] = True
            picked = chosen.nonzero().flatten().tolist()
            hit = len({normalize(s.node_texts[j]) for j in picked if gold[j]})  # a text twice counts once
            precision = sum(bool(gold[j]) for j in picked) / len(picked)
            recall = min(hit / wanted, 1.0) if wanted else 0.0
            p_sum, r_sum = p_sum + precision, r_sum + recall
            f_sum += 2 * precision * recall / (precision + recall) if hit else 0.0
    n = max(len(samples), 1)
    return HeadFigures(hits / n, p_sum / n, r_sum / n, f_sum / n, len(samples))


def train_head(
    head: AnswerHead, samples: Sequence[SubgraphSample], q: Tensor, epochs: int = 20, lr: float = 1e-3,
    batch_size: int = 32, weight_decay: float = 1e-4, seed: int = 0,
) -> list[float]:
    """Fit ``head`` on ``samples`` (questions ``q`` ``[n, D]``) with AdamW and binary cross-entropy
    (positives weighted by the negatives-to-positives ratio of the data); the mean loss per epoch."""
    labels = [answer_mask(s.node_texts, s.label) for s in samples]
    pos = sum(float(y.sum()) for y in labels)
    neg = sum(float(len(y) - y.sum()) for y in labels)
    loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(max(neg / max(pos, 1.0), 1.0)))
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=weight_decay)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(epochs):
        head.train()
        total, batches = 0.0, 0
        for idx in torch.randperm(len(samples), generator=gen).split(batch_size):
            chunk = [samples[i] for i in idx.tolist()]
            b = Batch.from_data_list([s.data for s in chunk])
            logits = head(b.x, b.edge_index, b.edge_attr, q[idx], b.batch, topic_flags(chunk))
            loss = loss_fn(logits, torch.cat([labels[i] for i in idx.tolist()]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, batches = total + loss.item(), batches + 1
        losses.append(total / max(batches, 1))
    return losses


# -- wiring into training and answering (objective node / joint) ---------------------------------


def fill_question_vectors(samples: Sequence[SubgraphSample], settings=None, embedder=None) -> None:
    """Give every sample without ``q`` the embedding of its question (``embedder``, else the
    configured one, loaded only when some sample lacks a vector); a vector of another size than
    the node features is an error (another embedder built them)."""
    missing = [s for s in samples if s.q is None]
    if missing:
        if embedder is None:
            from ..embedder import load_embedder
            from ..settings import load_settings

            embedder = load_embedder(settings or load_settings())
        for s, v in zip(missing, embedder.encode([s.question for s in missing])):
            s.q = torch.as_tensor(v, dtype=torch.float32)
    for s in samples:
        if s.q.numel() != s.data.x.size(1):
            raise CheckpointMismatch(f"sample {s.id}: question vector of size {s.q.numel()}, node features of size {s.data.x.size(1)}"
                               " (embedded by another model)")


def build_head(config: ModelConfig) -> AnswerHead:
    if config.gnn not in GNN_TYPES:
        raise UsageError(f"the node head needs a GNN kind (--gnn {'|'.join(GNN_TYPES)}), not {config.gnn}")
    return AnswerHead(str(config.gnn), config.embed_dim, config.head_hidden, config.head_layers, config.gnn_heads, config.head_dropout)


def positive_weight(samples: Sequence[SubgraphSample]) -> float:
    """Negatives per positive node over ``samples`` (at least 1): the BCE weight of the answers."""
    labels = [answer_mask(s.node_texts, s.label) for s in samples]
    pos = sum(float(y.sum()) for y in labels)
    neg = sum(float(len(y) - y.sum()) for y in labels)
    return max(neg / max(pos, 1.0), 1.0)


def head_logits(head: AnswerHead, samples: Sequence[SubgraphSample], device: torch.device | str = "cpu") -> tuple[Tensor, list[int]]:
    """``[sum n_i]`` node logits of a batch and the node count of each sample (``q`` must be set)."""
    b = Batch.from_data_list([s.data for s in samples]).to(device)
    q = torch.stack([s.q for s in samples]).to(device)
    logits = head(b.x, b.edge_index, b.edge_attr, q, b.batch, topic_flags(samples).to(device))
    return logits, [s.data.num_nodes for s in samples]


def node_loss(logits: Tensor, samples: Sequence[SubgraphSample], pos_weight: float = 1.0) -> Tensor:
    """Binary cross-entropy of the node logits against the answer nodes, positives weighted."""
    target = torch.cat([answer_mask(s.node_texts, s.label) for s in samples]).to(logits.device)
    return nn.functional.binary_cross_entropy_with_logits(logits.float(), target,
                                                          pos_weight=torch.tensor(pos_weight, device=logits.device))


def chosen(probs: Tensor, threshold: float = 0.5) -> list[int]:
    """The node indices the head answers: those above ``threshold``, else the best one."""
    if len(probs) == 0:
        return []
    picked = (probs > threshold).nonzero().flatten().tolist()
    return sorted(picked, key=lambda i: -float(probs[i])) or [int(probs.argmax())]


def ranked_texts(probs: Tensor, texts: Sequence[str], k: int) -> list[str]:
    """The ``k`` best-scored node texts, best first, each (normalised) text once."""
    out, seen = [], set()
    for i in probs.argsort(descending=True).tolist():
        key = normalize(texts[i])
        if key and key not in seen:
            seen.add(key)
            out.append(texts[i])
            if len(out) == k:
                break
    return out


def head_answer(probs: Tensor, texts: Sequence[str]) -> tuple[str, str]:
    """(the best node's text, the answer: the chosen node texts joined by ``|``)."""
    if len(probs) == 0:
        return "", ""
    return texts[int(probs.argmax())], SEPARATOR.join(dict.fromkeys(texts[i] for i in chosen(probs)))


class NodeModel(nn.Module):
    """The node head alone (objective ``node``): ``forward`` is the BCE of a batch, ``score`` the
    answer probabilities; weights under ``head.``, as in a joint model."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.head = build_head(config)
        self.pos_weight = 1.0  # set by training from its samples

    def trainable_state_dict(self) -> dict[str, Tensor]:
        return {n: t.detach().cpu().contiguous() for n, t in self.state_dict().items()}

    def forward(self, samples: Sequence[SubgraphSample]) -> Tensor:
        logits, _ = head_logits(self.head, samples, self.head.out.weight.device)
        return node_loss(logits, samples, self.pos_weight)

    @torch.no_grad()
    def score(self, samples: Sequence[SubgraphSample]) -> list[Tensor]:
        """Per sample, ``[n_i]`` answer probabilities of its nodes."""
        logits, sizes = head_logits(self.head, samples, self.head.out.weight.device)
        return list(torch.sigmoid(logits.float().cpu()).split(sizes))
