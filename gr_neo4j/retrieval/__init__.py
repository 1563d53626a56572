"""From a question to a small connected subgraph: Cypher candidates, in-process PCST, text + Data.

>>> from gr_neo4j.retrieval import retrieve
>>> result = retrieve(settings, "who directed [Titanic]?", dataset="metaqa", entities=["Titanic"])
>>> print(result.desc)
"""

from .candidates import CandidateLimits, Candidates
from .modes import MODES
from .paths import PathScorer
from .pcst import PCSTSelection, retrieval_pcst
from .result import RetrievalResult, RetrievedEdge, RetrievedNode, Timings
from .retriever import RetrievalError, RetrievalParams, Retriever, retrieve

__all__ = [
    "MODES",
    "CandidateLimits",
    "Candidates",
    "PCSTSelection",
    "PathScorer",
    "RetrievalError",
    "RetrievalParams",
    "RetrievalResult",
    "RetrievedEdge",
    "RetrievedNode",
    "Retriever",
    "Timings",
    "retrieval_pcst",
    "retrieve",
]
