"""From a question to a small connected subgraph, in typed stages (see ``retriever.py``):

embed -> fetch candidates (a :class:`CandidateSource`: Neo4j, or the graph in memory) -> score ->
select (the :class:`Selector` registered for the :class:`~gr_neo4j.defaults.Mode`) -> text, and the
PyG ``Data`` only when a model reads it.

>>> from gr_neo4j.retrieval import retrieve
>>> result = retrieve(settings, "who directed [Titanic]?", dataset="metaqa", entities=["Titanic"])
>>> print(result.desc)

The names below are imported on first use (PEP 562): ``gr_neo4j.retrieval.params`` (the knobs and
their defaults, which the CLI shows) stays light; numpy and the driver load with the stages, torch
only with a model or a training step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_attributes
from .params import MAX_HOPS, CandidateLimits, RetrievalParams

_LAZY = {
    "CandidateQuery": "candidates", "Candidates": "candidates", "CandidateSource": "candidates",
    "DatasetInfo": "candidates", "Neo4jSource": "candidates",
    "Linked": "linking", "link": "linking",
    "MODES": "modes", "SELECTORS": "modes", "Selection": "modes", "Selector": "modes",
    "PathScorer": "paths", "PCSTSelection": "pcst", "retrieval_pcst": "pcst",
    "GraphFeatures": "result", "RetrievalResult": "result", "RetrievedEdge": "result", "RetrievedNode": "result", "Timings": "result",
    "Fetched": "retriever", "Retriever": "retriever", "retrieve": "retriever",
}

if TYPE_CHECKING:
    from .candidates import CandidateQuery, Candidates, CandidateSource, DatasetInfo, Neo4jSource
    from .linking import Linked, link
    from .modes import MODES, SELECTORS, Selection, Selector
    from .paths import PathScorer
    from .pcst import PCSTSelection, retrieval_pcst
    from .result import GraphFeatures, RetrievalResult, RetrievedEdge, RetrievedNode, Timings
    from .retriever import Fetched, Retriever, retrieve


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "MAX_HOPS",
    "MODES",
    "SELECTORS",
    "CandidateLimits",
    "CandidateQuery",
    "CandidateSource",
    "Candidates",
    "DatasetInfo",
    "Fetched",
    "GraphFeatures",
    "Linked",
    "Neo4jSource",
    "PCSTSelection",
    "PathScorer",
    "RetrievalParams",
    "RetrievalResult",
    "RetrievedEdge",
    "RetrievedNode",
    "Retriever",
    "Selection",
    "Selector",
    "Timings",
    "link",
    "retrieval_pcst",
    "retrieve",
]
