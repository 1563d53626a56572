"""Choices and defaults in one place: the enums the CLI lists in `--help` and the library checks.

Each enum is a `StrEnum`, so a member is its own value (`Mode.PATHS == "paths"`), typer shows the
values as choices and rejects others with exit status 2, and the library accepts plain strings
through `Mode(value)`.
"""

from __future__ import annotations

from enum import StrEnum


class Mode(StrEnum):
    """How a subgraph is selected from the candidates (see `gr_neo4j.retrieval.modes`)."""

    PATHS = "paths"  # relation paths from the topic entities scored against the question (KG default)
    REFERENCE = "reference"  # G-Retriever exactly: node and edge prizes, PCST
    TRIPLES = "triples"  # PCST with an edge scored as its whole triple, topic entities prized
    WHOLE = "whole"  # the whole candidate graph (ExplaGraphs; the k-hop baseline)
    KAPING = "kaping"  # top-k triples, no PCST (KAPING-style baseline)


class Seeds(StrEnum):
    """Where a knowledge-graph retrieval's topic entities came from (see `gr_neo4j.retrieval.linking`)."""

    GIVEN = "given"  # --entity
    STORED = "stored"  # the TOPIC links of a stored question (eval-retrieval, retrieve)
    LINKED = "linked"  # entities linked in the question's text
    VECTOR = "vector"  # none: nothing linked, or linking off; the vector hits are the only seeds


class Gnn(StrEnum):
    """The graph encoder (see `gr_neo4j.model.encoder`)."""

    GT = "gt"  # Graph Transformer (TransformerConv), the paper's default
    GAT = "gat"
    GCN = "gcn"
    NONE = "none"  # no graph encoder: the LLM alone behind the same prompt (trainable only with LoRA)


class OnError(StrEnum):
    """What a load does with a malformed record."""

    FAIL = "fail"  # write nothing if any record is bad
    SKIP = "skip"  # write the rest and count the skipped records by reason


class Decoding(StrEnum):
    """How the LLM writes its answer (see `gr_neo4j.model.constrained`)."""

    AUTO = "auto"  # constrained where answers are node texts or labels (KGQA, ExplaGraphs), else free
    CONSTRAINED = "constrained"  # only node texts of the subgraph (or the labels), "|", "not in the graph"
    FREE = "free"  # any text, as the paper


class AnswerBy(StrEnum):
    """Who answers `ask` (see `gr_neo4j.answer`)."""

    AUTO = "auto"  # the graph where the selection answers (paths mode) and no --checkpoint, else the LLM
    GRAPH = "graph"  # the selection's own answers: where the named entities meet, else the best path's ends
    LLM = "llm"  # the LLM (zero-shot, or the --checkpoint model) from the textualized subgraph


class Objective(StrEnum):
    """What `train` optimises (see `gr_neo4j.model.answer_head` and `gr_neo4j.model.label_model`)."""

    LM = "lm"  # the LLM's answer tokens (G-Retriever)
    NODE = "node"  # only the question-conditioned node head, binary cross-entropy on the answer nodes; no LLM
    JOINT = "joint"  # both: the LM loss plus --node-weight times the node loss; the head ranks the prompt's candidates
    LABEL = "label"  # label datasets (ExplaGraphs): the embedder's encoder fine-tuned to pick the label; no LLM


class PathFit(StrEnum):
    """What `train-paths` fits (see `gr_neo4j.retrieval.paths.training`)."""

    ALL = "all"  # the relation-path ranker, the hop model and the path plan, from scratch
    HOP_MODEL = "hop-model"  # only the hop model, into the stored ranker: every question's words, no retrieval (minutes)
    PATH_PLAN = "path-plan"  # only the path plan, into the stored ranker: --limit questions per hop retrieved as asked


class EmbedderBackend(StrEnum):
    """What runs the embedding model (see `gr_neo4j.embedder`); GR_NEO4J_EMBEDDER_BACKEND or `embedder_backend`."""

    ONNX = "onnx"  # ONNX Runtime on a float32 export made once from the same weights (cosine to torch > 0.9999); the default on a CPU
    ONNX_INT8 = "onnx-int8"  # that export with int8 weights, quantised once: 1.3-1.4x float32's speed, cosine to it 0.99 on average
    TORCH = "torch"  # sentence-transformers on PyTorch, as the model ships; the default where an NVIDIA GPU is present


DEFAULT_EMBEDDER_BACKEND = EmbedderBackend.ONNX  # without a GPU (see gr_neo4j.embedder.embedder_backend)
