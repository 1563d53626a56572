"""`retrieve_split()`: the subgraph of every question of a split, written as training samples.

One Retriever (one connection, one read session) serves the whole split; the questions are
embedded in large batches before the per-question Cypher round trips.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import NotFound, UsageError, quoted
from ..metrics import percentiles
from ..progress import NO_PROGRESS, Progress
from ..settings import Settings
from .params import RetrievalParams
from .retriever import Retriever

EMBED_BATCH = 512


@dataclass(frozen=True)
class Question:
    uid: str
    text: str
    answers: list[str]
    answer_keys: list[str]
    graph: str | None
    topic_keys: list[str]


@dataclass(frozen=True)
class BatchReport:
    """What `retrieve_split` wrote and how fast: ``seconds`` end to end (file written included);
    ``questions_per_s`` over the retrieval loop (batched embedding and building each sample's
    ``Data`` included); ``retrieval_ms``: p50/p95 of one question's retrieval (its ``total_ms``)."""

    path: Path
    samples: int
    seconds: float
    mean_nodes: float
    mean_edges: float
    answer_recall: float  # share of samples whose subgraph holds a gold answer entity (KGs)
    questions_per_s: float = 0.0
    retrieval_ms: dict[str, float | None] | None = None

    def to_json(self) -> dict:
        return asdict(self) | {"path": str(self.path)}


def questions_of(
    retriever: Retriever, dataset: str, split: str | None = None, hops: int | None = None, limit: int | None = None, skip: int = 0,
) -> list[Question]:
    """The questions of ``dataset`` (optionally one split and hop count) in uid order: ``limit``
    of them after the first ``skip``."""
    rows = retriever.conn.read("retrieval_questions", dataset=dataset, split=split, hops=hops, limit=limit, skip=skip)
    return [Question(r["uid"], r["text"], list(r["answers"] or []), list(r["answer_keys"] or []), r["graph"], list(r["topic_keys"] or [])) for r in rows]


def spread(questions: Sequence[Question], limit: int) -> list[Question]:
    """``limit`` of ``questions`` spread evenly over them: uid order groups question templates."""
    return list(questions[:: max(1, len(questions) // limit)][:limit])


def retrieve_split(
    settings: Settings,
    dataset: str,
    split: str,
    out: str | Path,
    params: RetrievalParams = RetrievalParams(),
    limit: int | None = None,
    progress: Progress | None = None,
) -> BatchReport:
    """Retrieve for every Question of ``dataset``/``split`` and save ``SubgraphSample``s to ``out``;
    the questions are reported through ``progress`` as one phase."""
    import torch

    from ..samples import SubgraphSample, save_samples

    if Path(out).is_dir():  # found before the retrieval, not after it
        example = Path(out) / f"{dataset}_{split}.pt"
        raise UsageError(f"the output {quoted(out)} is a directory; give a file name such as {quoted(example)}")
    began = time.perf_counter()
    with Retriever(settings) as r:
        info = r.dataset(dataset)
        questions = questions_of(r, info.name, split, limit=limit)
        if not questions:
            raise NotFound(f"dataset '{dataset}' has no questions in split '{split}'")
        samples, hits, nodes, edges, ms = [], 0, 0, 0, []
        loop_began = time.perf_counter()
        with (progress or NO_PROGRESS).phase(f"retrieving {dataset}/{split}", total=len(questions), unit="questions") as advance:
            for start in range(0, len(questions), EMBED_BATCH):
                chunk = questions[start : start + EMBED_BATCH]
                vectors = r.embed([q.text for q in chunk])
                for q, vec in zip(chunk, vectors):
                    res = r.retrieve(q.text, info.name, q.graph, (), params, question_uid=q.uid, q=vec)
                    keys = {n.key for n in res.nodes}
                    hits += bool(keys & set(q.answer_keys))
                    nodes += len(res.nodes)
                    edges += len(res.edges)
                    ms.append(res.timings.total_ms)
                    samples.append(
                        SubgraphSample(
                            id=q.uid,
                            question=q.text,
                            label="|".join(q.answers),
                            desc=res.desc,
                            data=res.data,
                            dataset=info.name,
                            node_texts=[n.text for n in res.nodes],
                            topic=[n.topic for n in res.nodes],
                            q=torch.from_numpy(vec).float(),
                        )
                    )
                    advance(1)
        loop_s = time.perf_counter() - loop_began
    path = save_samples(out, samples)
    n = len(samples)
    return BatchReport(path, n, round(time.perf_counter() - began, 2), nodes / n, edges / n, hits / n, round(n / loop_s, 2), percentiles(ms))
