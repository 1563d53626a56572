"""The knobs of one retrieval and their defaults, in a module without numpy, torch or a driver, so
the CLI can show the defaults (`typer.Option(RetrievalParams.hops)`) without loading them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from ..cypher_store import repeats
from ..defaults import Mode
from ..errors import UsageError
from ..ingest.source import facts_of

# The candidate statement's hop block is written once and repeated this often.
MAX_HOPS = repeats("retrieve_kg_candidates")


@dataclass(frozen=True)
class CandidateLimits:
    """How much the candidate statement may fetch.

    overfetch: the vector indexes cover every dataset, so ``overfetch * k`` hits are asked for and
        filtered to the dataset; fewer than k remain when other datasets crowd the question.
    fanout: relationships followed per node and hop (a hub such as a genre keeps only that many).
    max_nodes, max_edges: exact caps on the whole candidate graph.
    """

    topk_nodes: int = 3
    topk_edges: int = 5
    overfetch: int = 10
    fanout: int = 50
    max_nodes: int = 1000
    max_edges: int = 2000


DEFAULT_HOPS = 2  # the depth when a dataset has no hop model to predict it


# What each retrieval option does, written once for `ask`, `retrieve` and `eval-retrieval` (the
# CLI's help) and for the HTTP API's request models (their OpenAPI descriptions).
HELP = {
    "dataset": "Dataset name (default: the only one loaded).",
    "graph": "Sample id of a per-sample dataset (ExplaGraphs, scene graphs).",
    "entity": "Topic entities (exact keys) to expand from; repeat for several; overrides linking.",
    "hops": f"Expansion depth around the seeds on knowledge graphs (0-{MAX_HOPS}). Default: the relations the question needs, "
    f"as the dataset's hop model (train-paths) predicts; without one, paths mode reads it from the question "
    f"(relation paths of 1-{MAX_HOPS} relations compete), other modes walk {DEFAULT_HOPS}.",
    "topk": "Nodes that get a PCST prize (G-Retriever's topk).",
    "topk_e": "Distinct edge scores that get a prize (default: the dataset's, 5; 3 on scene graphs).",
    "cost_e": "PCST edge cost (G-Retriever's cost_e).",
    "mode": "Subgraph selection (default: paths on knowledge graphs, whole on ExplaGraphs, reference otherwise).",
    "max_paths": "paths mode: relation paths (most similar to the question) whose ends are kept.",
    "node_budget": "paths mode: at most this many nodes.",
    "answer_cap": "paths mode: first keep every end of the best two relation paths (all the answers), completed past "
    "the candidate caps, up to this many nodes (0: off).",
    "link": "Knowledge graphs without --entity: the entities the question names are its topic entities (off: vector seeds only).",
    "path_ranker": "paths mode: rank relation paths and choose the depth with the dataset's trained ranker and hop model when "
    "it has them (`gr-neo4j train-paths`); off: as untrained, both read from the question zero-shot.",
}


@dataclass(frozen=True)
class RetrievalParams:
    """Knobs of one retrieval; None means the default for the dataset.

    mode: see :mod:`gr_neo4j.retrieval.modes` (default: ``paths`` on knowledge graphs, ``whole``
        on ExplaGraphs, ``reference`` on other per-sample graphs).
    hops: expansion depth around the seeds on knowledge graphs (0..3); None: the relations the
        question needs, as the dataset's hop model predicts them (``train-paths``), else in the
        ``paths`` mode as the zero-shot fetch plan reads them (:mod:`.fetch_plan`), else
        ``DEFAULT_HOPS``.
    topk, topk_e, cost_e: G-Retriever's PCST parameters (3, 5 or 3 on scene graphs, 0.5).
    max_paths, node_budget: the ``paths`` mode keeps the ends of the ``max_paths`` relation paths
        most similar to the question, ``node_budget`` nodes of them.
    answer_cap: the ``paths`` mode first keeps every end of the best two relation paths (all the
        answers of "what films did X act in"), completing them past the candidate caps, up to this
        many nodes; ``node_budget // 3`` more then go to the other paths. 0: ``node_budget`` in all.
    link: on knowledge graphs, a question asked without topic entities (no ``--entity``, no
        stored question) gets the entities it names as topics (:mod:`.linking`); off: vector
        seeds only.
    path_ranker: the ``paths`` mode ranks relation paths with the dataset's trained ranker when
        it has one (``gr-neo4j train-paths``); off: by the cosine of path text and question alone.
    """

    mode: Mode | None = None
    hops: int | None = None
    topk: int = 3
    topk_e: int | None = None
    cost_e: float = 0.5
    max_paths: int = 12
    node_budget: int = 30
    answer_cap: int = 60
    link: bool = True
    path_ranker: bool = True
    limits: CandidateLimits = CandidateLimits()

    def __post_init__(self) -> None:
        # Plain strings are accepted (``mode="paths"``) and become the enum member here.
        if self.mode is not None and not isinstance(self.mode, Mode):
            try:
                object.__setattr__(self, "mode", Mode(self.mode))
            except ValueError:
                raise UsageError(f"unknown retrieval mode {self.mode!r} (one of {', '.join(Mode)})") from None

    def resolved(self, dataset: str, kind: str) -> RetrievalParams:
        """These parameters with every None replaced by the dataset's default, checked."""
        mode = self.mode or default_mode(dataset, kind)
        if self.hops is not None and not 0 <= self.hops <= MAX_HOPS:
            raise UsageError(f"--hops must be between 0 and {MAX_HOPS}, got {self.hops}")
        if self.topk < 0 or (self.topk_e is not None and self.topk_e < 0) or self.cost_e < 0:
            raise UsageError("topk, topk_e and cost_e must not be negative")
        if self.max_paths < 1 or self.node_budget < 1:
            raise UsageError("max_paths and node_budget must be at least 1")
        if self.answer_cap < 0:
            raise UsageError("answer_cap must not be negative")
        topk_e = self.topk_e if self.topk_e is not None else facts_of(dataset).topk_e
        limits = replace(self.limits, topk_nodes=self.topk, topk_edges=topk_e)
        return replace(self, mode=mode, topk_e=topk_e, limits=limits)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PathTraining:
    """How ``train-paths`` trains a dataset's relation-path ranker (:mod:`.paths.training`): on
    ``limit`` questions per hop count spread over those after the first ``skip`` in uid order
    (eval-retrieval's first 300 stay unseen), ``epochs`` passes of Adam at ``lr``, seeded. ``deep`` of them (spread over
    the slice) of each hop count below the largest are walked again as deep as the largest: a
    question asked with more hops than it needs (``ask`` does not know) must still rank its own,
    shorter path first."""

    hops: tuple[int, ...] = (1, 2, 3)
    skip: int = 300
    limit: int = 3000
    epochs: int = 20
    lr: float = 3e-4
    seed: int = 0
    deep: int = 500

    def check(self) -> None:
        if not self.hops or min(self.hops) < 1:
            raise UsageError("--hops must list hop counts of at least 1")
        if self.limit < 1 or self.skip < 0 or self.epochs < 1 or self.lr <= 0 or self.deep < 0:
            raise UsageError("train-paths needs --limit >= 1, --skip >= 0, --epochs >= 1, --lr > 0 and --deep >= 0")


def default_mode(dataset: str, kind: str) -> Mode:
    """``paths`` on knowledge graphs, ``whole`` where the dataset's facts say its graphs are read
    whole (ExplaGraphs, as the paper), ``reference`` otherwise."""
    if kind == "knowledge-graph":
        return Mode.PATHS
    return Mode.WHOLE if facts_of(dataset).whole_graphs else Mode.REFERENCE


