"""The label classifier (``train --objective label``): a dataset whose answers are a few labels
(ExplaGraphs: ``support`` / ``counter``) answered by a small transformer encoder fine-tuned on them,
no LLM.

It reads each sample as a sentence pair: the question, and the textualised graph written as
triples ``head relation tail.`` (the graph in the words the LLM's prompt gives it, without node
numbers). The encoder starts from the embedder's weights (all-MiniLM-L6-v2 by default: 22M
parameters, so a CPU fine-tunes it in minutes) or from the one ``train --encoder`` names (e.g.
all-mpnet-base-v2, 110M, half an hour); its mean-pooled tokens go through one linear layer to the
labels, trained with cross-entropy. Like constrained decoding, it can only answer a label.

A checkpoint holds the whole fine-tuned encoder and the layer (``weights.safetensors``) and the
encoder's configuration and tokenizer (``encoder/``), so it loads without the embedder package.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor, nn

from ..errors import BadInput, MissingInput, UsageError
from ..ingest.source import LOADER_MODULES, facts_of
from ..samples import SubgraphSample
from .config import ModelConfig

ENCODER = "encoder"  # checkpoint subdirectory: the encoder's config.json and tokenizer files


def labels_of(dataset: str) -> list[str]:
    """The labels a dataset's answers are drawn from (objective label needs them), sorted."""
    labels = facts_of(dataset).labels
    if not labels:
        with_labels = [name for name in LOADER_MODULES if facts_of(name).labels]
        raise UsageError(f"--objective label answers with a fixed set of labels: only for {', '.join(with_labels)}, not {dataset}")
    return sorted(labels)


def triples_text(desc: str) -> str:
    """The graph of a textualisation (``node_id,node_attr`` rows, a blank line, ``src,edge_attr,dst``
    rows) as ``head relation tail.`` sentences; the node texts alone where there are no edges."""
    nodes_part, _, edges_part = desc.partition("\n\n")
    nodes = {row[0]: row[1] for row in list(csv.reader(io.StringIO(nodes_part)))[1:] if len(row) >= 2}
    edges = [row for row in list(csv.reader(io.StringIO(edges_part)))[1:] if len(row) >= 3]
    if not edges:
        return ". ".join(nodes.values())
    return " ".join(f"{nodes.get(s, s)} {rel} {nodes.get(d, d)}." for s, rel, d in edges)


class LabelModel(nn.Module):
    """Encoder + linear layer over ``labels``: ``forward`` is the cross-entropy of a batch,
    ``predict`` its labels and ``probabilities`` ``[B, len(labels)]``.

    Args:
        encoder: a transformers encoder (``AutoModel``), its hidden size ``encoder.config.hidden_size``.
        tokenizer: its tokenizer.
        config: the :class:`ModelConfig` (``labels``, ``max_txt_len`` tokens per pair).
    """

    def __init__(self, encoder: nn.Module, tokenizer, config: ModelConfig):
        super().__init__()
        self.config = config
        self.encoder = encoder
        self.tokenizer = tokenizer
        self.labels = list(config.labels)
        self.out = nn.Linear(encoder.config.hidden_size, len(self.labels))
        limit = getattr(encoder.config, "max_position_embeddings", config.max_txt_len)
        self.max_tokens = min(config.max_txt_len, limit)

    @classmethod
    def from_pretrained(cls, location: str, config: ModelConfig) -> LabelModel:
        """A fresh classifier on the encoder at ``location`` (a directory or hub id)."""
        from transformers import AutoModel, AutoTokenizer

        try:
            return cls(AutoModel.from_pretrained(location), AutoTokenizer.from_pretrained(location), config)
        except OSError as exc:
            raise MissingInput(f"cannot load the encoder for objective label from {location}: {exc}") from None

    def save_encoder(self, directory: Path) -> None:
        """The encoder's configuration and tokenizer (the weights go with the trainable state)."""
        directory.mkdir(parents=True, exist_ok=True)
        self.encoder.config.save_pretrained(str(directory))
        self.tokenizer.save_pretrained(str(directory))

    @classmethod
    def from_checkpoint(cls, directory: Path, config: ModelConfig) -> LabelModel:
        """The classifier of a checkpoint: its encoder rebuilt from ``directory/encoder``, weights
        to be loaded by the caller."""
        from transformers import AutoConfig, AutoModel, AutoTokenizer

        encoder_dir = directory / ENCODER
        if not (encoder_dir / "config.json").is_file():
            raise MissingInput(f"{directory}: no {ENCODER}/config.json (the checkpoint of objective label is incomplete)")
        return cls(AutoModel.from_config(AutoConfig.from_pretrained(str(encoder_dir))),
                   AutoTokenizer.from_pretrained(str(encoder_dir)), config)

    def trainable_state_dict(self) -> dict[str, Tensor]:
        return {n: t.detach().cpu().contiguous() for n, t in self.state_dict().items()}

    def logits(self, samples: Sequence[SubgraphSample]) -> Tensor:
        """``[B, len(labels)]``."""
        device = self.out.weight.device
        batch = self.tokenizer([s.question for s in samples], [triples_text(s.desc) for s in samples], padding=True,
                               truncation=True, max_length=self.max_tokens, return_tensors="pt").to(device)
        hidden = self.encoder(**batch).last_hidden_state  # [B, S, H]
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        return self.out((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0))

    def gold(self, samples: Sequence[SubgraphSample]) -> Tensor:
        """``[B]`` the index of each sample's label."""
        bad = next((s for s in samples if s.label not in self.labels), None)
        if bad is not None:
            raise BadInput(f"sample {bad.id}: label {bad.label!r} is not one of {', '.join(self.labels)}")
        return torch.tensor([self.labels.index(s.label) for s in samples], device=self.out.weight.device)

    def forward(self, samples: Sequence[SubgraphSample]) -> Tensor:
        return nn.functional.cross_entropy(self.logits(samples), self.gold(samples))

    @torch.no_grad()
    def probabilities(self, samples: Sequence[SubgraphSample]) -> Tensor:
        return torch.softmax(self.logits(samples).float(), dim=-1).cpu()

    def predict(self, samples: Sequence[SubgraphSample]) -> list[str]:
        return [self.labels[i] for i in self.probabilities(samples).argmax(-1).tolist()]

    @torch.no_grad()
    def loss_and_accuracy(self, samples: Sequence[SubgraphSample], batch_size: int = 16) -> tuple[float, float]:
        """Mean cross-entropy over ``samples`` and the share whose label is predicted, from one
        pass (in eval mode, which it leaves on)."""
        self.eval()
        loss, right = 0.0, 0
        for i in range(0, len(samples), batch_size):
            batch = samples[i:i + batch_size]
            logits, gold = self.logits(batch), self.gold(batch)
            loss += nn.functional.cross_entropy(logits, gold, reduction="sum").item()
            right += int((logits.argmax(-1) == gold).sum())
        return loss / max(len(samples), 1), right / max(len(samples), 1)
