"""What a dataset is, beyond how it is read: the facts the model, the metrics and retrieval need.

Each loader's :class:`~.source.LoaderSpec` carries its :class:`DatasetFacts`;
:func:`~.source.facts_of` answers for any dataset name, so that no other module keeps its own
list of dataset names. A dataset the user names (``load triples --name movies``, ``load neo4j``)
gets the defaults: a knowledge graph whose answers are its entities.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path


class Answers(StrEnum):
    """What a question's answer is, which decides its metric, prompt and decoding."""

    ENTITIES = "kgqa"  # node texts of the graph: Hit@1, answers held to the subgraph
    STANCE = "stance"  # one of the dataset's labels: accuracy
    SCENE_GRAPH = "scene_graph"  # a short free answer about an image's scene graph: accuracy


@dataclass(frozen=True)
class DatasetFacts:
    """Args:
        answers: what an answer is.
        labels: the fixed answers a classifier picks from (``--objective label``); empty: none.
        whole_graphs: each question reads its whole per-sample graph unless a mode is chosen
            (G-Retriever on ExplaGraphs: the graphs are small and there is nothing to retrieve).
        topk_e: distinct edge scores that get a PCST prize (G-Retriever's value per dataset).
        samples_from_file: ``(path, embedder) -> list[SubgraphSample]``: training samples built
            straight from the dataset's file, without Neo4j (ExplaGraphs' TSV, as the paper).
    """

    answers: Answers = Answers.ENTITIES
    labels: tuple[str, ...] = ()
    whole_graphs: bool = False
    topk_e: int = 5
    samples_from_file: Callable[[Path, object], list] | None = None
