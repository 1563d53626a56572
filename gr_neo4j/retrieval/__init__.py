"""From a question to a small connected subgraph, in typed stages (see ``retriever.py``):

embed -> fetch candidates (a :class:`CandidateSource`: Neo4j, or the graph in memory) -> score ->
select (the :class:`Selector` registered for the :class:`~gr_neo4j.defaults.Mode`) -> text + Data.

>>> from gr_neo4j.retrieval import retrieve
>>> result = retrieve(settings, "who directed [Titanic]?", dataset="metaqa", entities=["Titanic"])
>>> print(result.desc)
"""

from .candidates import CandidateLimits, CandidateQuery, Candidates, CandidateSource, DatasetInfo, Neo4jSource
from .modes import MODES, SELECTORS, Selection, Selector
from .paths import PathScorer
from .pcst import PCSTSelection, retrieval_pcst
from .result import RetrievalResult, RetrievedEdge, RetrievedNode, Timings
from .retriever import Fetched, RetrievalError, RetrievalParams, Retriever, retrieve

__all__ = [
    "MODES",
    "SELECTORS",
    "CandidateLimits",
    "CandidateQuery",
    "CandidateSource",
    "Candidates",
    "DatasetInfo",
    "Fetched",
    "Neo4jSource",
    "PCSTSelection",
    "PathScorer",
    "RetrievalError",
    "RetrievalParams",
    "RetrievalResult",
    "RetrievedEdge",
    "RetrievedNode",
    "Retriever",
    "Selection",
    "Selector",
    "Timings",
    "retrieval_pcst",
    "retrieve",
]
