"""Retrieval measured the same way on Neo4j and on the whole graph held in memory
(`scripts/bench_retrieval.py`, `scripts/bench_scale.py`).

* ``measure_neo4j``: ``Retriever.retrieve`` per question with its stored topic entities (what
  ``gr-neo4j ask`` does on a stored question): one read round trip for the candidates, selection
  in-process, a small read for the chosen nodes' embeddings;
* ``build_in_memory``: the whole KG read once out of Neo4j into numpy (``InMemoryKG``), with its
  build time and memory; ``measure_in_memory``: the same ``Retriever.retrieve`` with that graph as
  its candidate source, topic entities given by key (the in-memory graph holds no questions).

Figures per (pipeline, hop count, mode): p50/p95 of each stage and the total, answer recall (a gold
answer among the subgraph's nodes), mean nodes.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import psutil

from gr_neo4j.metrics import percentiles
from gr_neo4j.progress import NO_PROGRESS, Progress
from gr_neo4j.retrieval import RetrievalParams, Retriever
from gr_neo4j.retrieval.batch import Question
from gr_neo4j.retrieval.inmemory import InMemoryKG


def rss_mb() -> float:
    """This process's resident memory in MiB."""
    return psutil.Process(os.getpid()).memory_info().rss / 2**20


@dataclass(frozen=True)
class Figures:
    """One pipeline on one set of questions: ``stages`` maps ``<stage>_ms`` to {p50, p95}."""

    mode: str
    stages: dict[str, dict]
    answer_recall: float
    mean_nodes: float

    def to_json(self) -> dict:
        return {"mode": self.mode, **self.stages, "answer_recall": self.answer_recall, "mean_nodes": self.mean_nodes}


# Timings field -> the stage's name in the report, per pipeline (in memory, "cypher" is the expansion).
NEO4J_STAGES = {"embed_ms": "embed", "cypher_ms": "cypher", "pcst_ms": "pcst", "total_ms": "total"}
IN_MEMORY_STAGES = {"embed_ms": "embed", "cypher_ms": "expand", "pcst_ms": "pcst", "total_ms": "total"}


def _measure(retrieve, questions: Sequence[Question], stages: dict[str, str], label: str, progress: Progress) -> Figures:
    times: dict[str, list[float]] = {name: [] for name in stages.values()}
    hits, nodes, mode = 0, [], ""
    with progress.phase(label, total=len(questions), unit="questions") as advance:
        for q in questions:
            res = retrieve(q)
            for field, name in stages.items():
                times[name].append(getattr(res.timings, field))
            hits += bool(set(q.answer_keys) & {n.key for n in res.nodes})
            nodes.append(len(res.nodes))
            mode = str(res.mode)
            advance(1)
    n = max(len(questions), 1)
    return Figures(mode, {f"{k}_ms": percentiles(v) for k, v in times.items()}, round(hits / n, 4), round(float(np.mean(nodes or [0])), 1))


def measure_neo4j(r: Retriever, dataset: str, questions: Sequence[Question], params: RetrievalParams,
                  label: str = "neo4j", progress: Progress = NO_PROGRESS) -> Figures:
    """Retrieve every question on Neo4j, topics from its stored TOPIC links."""
    return _measure(lambda q: r.retrieve(q.text, dataset, params=params, question_uid=q.uid), questions, NEO4J_STAGES, label, progress)


def measure_in_memory(mem_r: Retriever, dataset: str, questions: Sequence[Question], params: RetrievalParams,
                      label: str = "in-memory", progress: Progress = NO_PROGRESS) -> Figures:
    """Retrieve every question on the in-memory graph, topics given by key."""
    return _measure(lambda q: mem_r.retrieve(q.text, dataset, entities=q.topic_keys, params=params), questions, IN_MEMORY_STAGES, label, progress)


@dataclass(frozen=True)
class InMemoryBuild:
    """What holding the whole KG in memory cost: build seconds, array bytes, RSS growth."""

    load_s: float
    arrays_mb: float
    rss_growth_mb: float
    entities: int
    relationships: int

    def to_json(self) -> dict:
        return dict(self.__dict__)


def build_in_memory(r: Retriever, dataset: str) -> tuple[InMemoryKG, Retriever, InMemoryBuild]:
    """Read ``dataset`` whole out of Neo4j into an ``InMemoryKG`` and a ``Retriever`` over it that
    shares ``r``'s connection, embedder and path-text cache (close it; the connection stays r's)."""
    gc.collect()
    before = rss_mb()
    began = time.perf_counter()
    kg = InMemoryKG.from_neo4j(r.conn, dataset)
    load_s = time.perf_counter() - began
    build = InMemoryBuild(round(load_s, 1), round(kg.nbytes / 2**20, 1), round(rss_mb() - before, 1), len(kg.keys), len(kg.heads))
    mem_r = Retriever(r.settings, conn=r.conn, embedder=r.embedder, source=kg)
    mem_r.paths = r.paths
    return kg, mem_r, build
