"""One trainer per training objective: what the shared loop in :mod:`.training` asks of it.

- ``lm``: the paper's G-Retriever (GNN + projector + LLM, LoRA optional), the answer's tokens'
  cross-entropy;
- ``node``: the node head alone, no LLM loaded: which subgraph nodes are answers;
- ``joint``: both, the head's loss weighted by ``node_weight``;
- ``label``: an encoder fine-tuned as a classifier over the dataset's labels (ExplaGraphs' stance),
  kept by its validation accuracy.

Each trainer checks the options that only it reads, prepares the samples, builds the model and
validates it; the optimiser, schedule, epochs, checkpoints and resume are the loop's, the same
for all four.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..defaults import Objective
from ..errors import UsageError
from ..ingest.facts import Answers
from ..metrics import kind_of
from ..progress import Progress
from ..samples import SubgraphSample
from .answer_head import NodeModel, fill_question_vectors, positive_weight
from .batching import sorted_batches
from .checkpoint import load_llm_named
from .config import ModelConfig, TrainConfig
from .gretriever import GRetrieverModel
from .label_model import ENCODER, LabelModel


class LmTrainer:
    """G-Retriever as in the paper: the LLM learns to write the answer after the graph token."""

    def check(self, config: TrainConfig) -> None:
        if config.encoder:
            raise UsageError("--encoder names the encoder of --objective label; the other objectives train a GNN on the samples' vectors")

    def prepare(self, samples: list[SubgraphSample], config: TrainConfig, settings, embedder) -> None:
        """Fill in what the objective needs from the samples before the model is built."""

    def build(self, config: TrainConfig, train_set: Sequence[SubgraphSample], settings, llm, progress: Progress):
        if llm is None:
            llm = load_llm_named(config.llm or "", settings, progress)
        llm_name = config.llm or _configured_llm_name(settings)
        model = GRetrieverModel(llm[0], llm[1], model_config(config, llm_name, _embed_dim(train_set), _embedder_name(config, settings)))
        model.node_weight = config.node_weight
        return model

    def write_files(self, model, out: Path) -> None:
        """Write what the checkpoint needs besides the trained weights (nothing here)."""

    def validate(self, model, val_set: Sequence[SubgraphSample], config: TrainConfig) -> tuple[float, float | None]:
        """The validation loss, and an accuracy for trainers kept by one (None here)."""
        return mean_loss(model, val_set, config.eval_batch_size), None

    def title(self, config: TrainConfig, mcfg: ModelConfig) -> str:
        return f"{config.dataset}: {mcfg.gnn} + {mcfg.llm}{' + LoRA' if config.lora else ''}"


class JointTrainer(LmTrainer):
    """G-Retriever with the node head beside it: the answer's tokens and its nodes both teach."""

    def prepare(self, samples: list[SubgraphSample], config: TrainConfig, settings, embedder) -> None:
        if kind_of(config.dataset) != Answers.ENTITIES:
            raise UsageError(f"--objective {config.objective} scores nodes as answers: only for knowledge-graph QA, not {config.dataset}")
        fill_question_vectors(samples, settings, embedder)

    def build(self, config: TrainConfig, train_set: Sequence[SubgraphSample], settings, llm, progress: Progress):
        model = super().build(config, train_set, settings, llm, progress)
        model.pos_weight = positive_weight(train_set)
        return model


class NodeTrainer(JointTrainer):
    """The node head alone: no LLM is loaded, answers are the nodes it scores highest."""

    def build(self, config: TrainConfig, train_set: Sequence[SubgraphSample], settings, llm, progress: Progress):
        model = NodeModel(model_config(config, "", _embed_dim(train_set), _embedder_name(config, settings)))
        model.pos_weight = positive_weight(train_set)
        return model

    def title(self, config: TrainConfig, mcfg: ModelConfig) -> str:
        return f"{config.dataset}: node head ({mcfg.gnn})"


class LabelTrainer(LmTrainer):
    """An encoder fine-tuned as a label classifier (the embedder's, or ``config.encoder``)."""

    def check(self, config: TrainConfig) -> None:
        pass

    def build(self, config: TrainConfig, train_set: Sequence[SubgraphSample], settings, llm, progress: Progress):
        from ..embedder import embedder_source
        from .label_model import labels_of

        if config.encoder:  # any encoder: a hub id or a directory
            name, location = config.encoder, config.encoder
        else:
            source = embedder_source(settings)
            name, location = source.name, source.location
        mcfg = replace(model_config(config, "", _embed_dim(train_set), name), labels=labels_of(config.dataset))
        return LabelModel.from_pretrained(location, mcfg)

    def write_files(self, model, out: Path) -> None:
        model.save_encoder(out / ENCODER)

    def validate(self, model, val_set: Sequence[SubgraphSample], config: TrainConfig) -> tuple[float, float | None]:
        # kept by its validation accuracy, what it is judged by: its loss rises as it grows
        # confident on a few samples while the accuracy can still improve
        return model.loss_and_accuracy(val_set, config.eval_batch_size)

    def title(self, config: TrainConfig, mcfg: ModelConfig) -> str:
        return f"{config.dataset}: label classifier ({mcfg.embedder})"


TRAINERS = {Objective.LM: LmTrainer(), Objective.JOINT: JointTrainer(), Objective.NODE: NodeTrainer(), Objective.LABEL: LabelTrainer()}


def trainer_for(config: TrainConfig) -> LmTrainer:
    return TRAINERS[Objective(config.objective)]


def model_config(config: TrainConfig, llm_name: str, embed_dim: int, embedder: str) -> ModelConfig:
    return ModelConfig(llm=llm_name, embed_dim=embed_dim, embedder=embedder, gnn=config.gnn, gnn_layers=config.gnn_layers,
                       gnn_hidden=config.gnn_hidden, gnn_heads=config.gnn_heads, graph_tokens=config.graph_tokens,
                       lora=config.lora, lora_r=config.lora_r, lora_alpha=config.lora_alpha, lora_targets=list(config.lora_targets),
                       max_txt_len=config.max_txt_len, max_new_tokens=config.max_new_tokens,
                       objective=config.objective, head_hidden=config.head_hidden, head_layers=config.head_layers,
                       candidates=config.candidates)


def mean_loss(model, samples: Sequence[SubgraphSample], batch_size: int) -> float:
    """The mean loss over ``samples``, in batches of similar length, without gradients."""
    import torch

    model.eval()
    total = 0.0
    with torch.no_grad():
        for indices in sorted_batches(samples, batch_size):
            total += model([samples[i] for i in indices]).item() * len(indices)
    return total / max(len(samples), 1)


def _embed_dim(train_set: Sequence[SubgraphSample]) -> int:
    return int(train_set[0].data.x.size(1))


def _embedder_name(config: TrainConfig, settings) -> str:
    """The embedder recorded in the checkpoint: the one that embeds samples read from
    ``config.tsv`` here (retrieved samples arrive embedded)."""
    if config.tsv is None:
        return ""
    from ..embedder import embedder_source

    return embedder_source(settings).name


def _configured_llm_name(settings) -> str:
    from ..llm import llm_source

    return llm_source(settings).name
