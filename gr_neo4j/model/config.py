"""The model's and the training's configuration: plain dataclasses, the single source of defaults.

No torch here (and :mod:`gr_neo4j.model` imports its heavy modules lazily), so the CLI and the
scripts read their option defaults from these classes (``TrainConfig.lr``) without loading the
model stack. Both are stored in every checkpoint (``checkpoint.json``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..defaults import Gnn, Objective
from .prompts import PROMPT_VERSION


@dataclass
class ModelConfig:
    """Everything needed to rebuild the model around the same LLM (stored in checkpoints)."""

    llm: str  # hub id or path given to gr_neo4j.llm.load_llm_from ('' = the configured default)
    embed_dim: int  # node/edge feature size (the embedder's dimension)
    embedder: str = ""  # embedder name, so samples are built with the same one
    gnn: Gnn = Gnn.GT  # Gnn.NONE: the LLM only, no graph token
    gnn_layers: int = 4
    gnn_hidden: int = 1024
    gnn_heads: int = 4
    gnn_dropout: float = 0.0
    graph_tokens: int = 1
    lora: bool = False
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    lora_targets: list[str] = field(default_factory=lambda: ["q_proj", "v_proj"])
    max_txt_len: int = 512
    max_new_tokens: int = 32
    prompt_version: str = PROMPT_VERSION
    # the question-conditioned node head (objective node or joint; gr_neo4j.model.answer_head), its
    # convolutions of the kind ``gnn`` names; the prompt lists its ``candidates`` best node texts
    objective: Objective = Objective.LM
    head_hidden: int = 256
    head_layers: int = 2
    head_dropout: float = 0.1
    candidates: int = 5
    labels: list[str] = field(default_factory=list)  # objective label: what the classifier picks from

    def __post_init__(self) -> None:
        self.gnn = Gnn(self.gnn)  # plain strings (a stored config, a caller) become the member
        self.objective = Objective(self.objective)

    @property
    def has_head(self) -> bool:
        """A node head (objective node or joint)."""
        return self.objective in (Objective.NODE, Objective.JOINT)

    def to_dict(self) -> dict:
        return {k: (str(v) if isinstance(v, (Gnn, Objective)) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class TrainConfig:
    """What to train and how. The defaults are the paper's (lr 1e-5 decaying to 5e-6, weight decay
    0.05, clip 0.1, patience 2, batch 4, 10 epochs, one warm-up epoch)."""

    dataset: str
    out: Path
    retrieved: Path | None = None  # samples file from `gr-neo4j retrieve --out`
    tsv: Path | None = None  # ExplaGraphs TSV: whole graphs, no retrieval
    llm: str | None = None  # hub id or path; None = the configured LLM (settings)
    epochs: int = 10
    batch_size: int = 4
    grad_accum: int = 1  # batches whose gradients are summed before one optimiser step
    eval_batch_size: int = 16
    lr: float = 1e-5  # peak learning rate, reached after the warm-up
    # peak learning rate of the graph side (GNN and projector, trained from scratch) when it should
    # exceed the LLM side's (LoRA); None: ``lr`` for both, as the paper
    graph_lr: float | None = None
    min_lr: float = 5e-6  # floor of the half cosine (G-Retriever's lr_schedule; capped at lr)
    weight_decay: float = 0.05
    warmup_epochs: float = 1.0
    grad_clip: float = 0.1
    patience: int = 2
    lora: bool = False
    lora_r: int = 8  # the paper's (peft's LoraConfig r, lora_alpha)
    lora_alpha: int = 16
    lora_targets: tuple[str, ...] = ("q_proj", "v_proj")  # modules that get adapters (the paper's: the attention queries and values)
    gnn: Gnn = Gnn.GT
    gnn_layers: int = 4
    gnn_hidden: int = 1024
    gnn_heads: int = 4
    graph_tokens: int = 1
    max_txt_len: int = 512
    max_new_tokens: int = 32
    seed: int = 42  # split seed and training seed
    limit: int | None = None  # at most this many samples per split (quick runs)
    max_minutes: float | None = None  # wall-clock budget; the running epoch is cut short
    resume: bool = True
    # fit on the training and validation splits together for exactly ``epochs`` and keep the last:
    # the usual last step once the epochs and rates were chosen on validation (no early stopping)
    final: bool = False
    # lm: the answer tokens; node: the node head alone, no LLM; joint: the LM loss + node_weight x the head's
    objective: Objective = Objective.LM
    node_weight: float = 1.0  # weight of the node head's binary cross-entropy in the joint loss
    head_lr: float = 1e-3  # peak learning rate of the node head (trained from scratch, unlike the LLM side)
    encoder_lr: float = 5e-5  # objective label: peak learning rate of the fine-tuned encoder (BERT-style fine-tuning)
    encoder: str | None = None  # objective label: hub id or path of the encoder to fine-tune (None: the embedder's)
    head_hidden: int = 256
    head_layers: int = 2
    candidates: int = 5  # node texts ranked by the head that the prompt lists (joint)

    def __post_init__(self) -> None:
        self.gnn = Gnn(self.gnn)
        self.objective = Objective(self.objective)

    @property
    def peak_lr(self) -> float:
        """The peak learning rate of the main parameter group, which the schedule's floor is relative to."""
        return self.encoder_lr if self.objective == Objective.LABEL else self.lr

    def to_dict(self) -> dict:
        return {k: (str(v) if isinstance(v, (Path, Gnn, Objective)) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in known}
        for key in ("out", "retrieved", "tsv"):
            if values.get(key):
                values[key] = Path(values[key])
        return cls(**values)

