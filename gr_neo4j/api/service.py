"""`Service`: what every request of `gr-neo4j serve` shares, loaded once.

* one driver (``Connection``): the neo4j driver is thread-safe and pools its connections;
* one embedder behind a lock, a precaution: a fast tokenizer whose padding or truncation changes
  under another thread raises "Already borrowed"; encoding one question takes milliseconds, so
  serialising it costs little;
* a pool of ``concurrency`` Retrievers over that driver and embedder: a Retriever reuses one read
  session and keeps caches (datasets, relation vocabularies, path-text vectors), and a session is
  not thread-safe, so each request borrows a whole Retriever and gives it back;
* one answerer, loaded the first time the LLM must answer (at start with a checkpoint), generation
  serialised by a lock: one model in memory, and on a CPU parallel generations only compete.

Every method is a call of the library's own function (``ask``, ``show``, ``stats_of``) and returns
its typed result; the HTTP layer turns them into JSON.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from neo4j.exceptions import DriverError, Neo4jError

from ..answer import Answerer, AskResult, ShownRetrieval, ask, load_answerer, show
from ..connection import Connection, connect
from ..embedder import Embedder, load_embedder
from ..errors import Busy, UsageError
from ..ingest.stats import DatasetStats, stats_of
from ..progress import NO_PROGRESS, Progress
from ..retrieval import RetrievalResult, Retriever
from ..settings import Settings
from .config import ServeConfig
from .requests import AskRequest, RetrieveRequest

WARM_HOPS = 2  # path texts embedded at start for each knowledge graph (MetaQA: 9 + 81)


class SharedEmbedder:
    """One embedder for every request thread: ``encode`` runs under a lock (see the module docstring)."""

    def __init__(self, embedder: Embedder):
        self.inner = embedder
        self.name, self.dimension, self.source = embedder.name, embedder.dimension, embedder.source
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], *args, **kwargs) -> np.ndarray:
        with self._lock:
            return self.inner.encode(texts, *args, **kwargs)


@dataclass(frozen=True)
class Health:
    neo4j: str  # the server agent, e.g. Neo4j/5.26.0
    embedder: str
    llm_loaded: bool
    answerer: str | None  # who answers when the LLM does (None until loaded)
    retrievers: int  # the pool's size
    idle: int  # of which free now

    def to_json(self) -> dict:
        return {"status": "ok", "neo4j": self.neo4j, "embedder": self.embedder, "llm_loaded": self.llm_loaded,
                "answerer": self.answerer, "retrievers": self.retrievers, "idle": self.idle}


class Service:
    """The shared state of the server (see the module docstring); ``close()`` ends it."""

    def __init__(self, settings: Settings, config: ServeConfig | None = None, progress: Progress = NO_PROGRESS):
        config = config or ServeConfig()
        if config.concurrency < 1:
            raise UsageError(f"--concurrency must be at least 1, got {config.concurrency}")
        self.settings, self.config, self.progress = settings, config, progress
        self.conn: Connection = connect(settings)
        try:
            self.embedder = SharedEmbedder(load_embedder(settings))
            self._pool: queue.LifoQueue[Retriever] = queue.LifoQueue()
            for _ in range(config.concurrency):
                self._pool.put(self._new_retriever())
            self._answerer: Answerer | None = None
            self._load_lock = threading.Lock()
            self._generate_lock = threading.Lock()
            self._warm()
            if config.checkpoint is not None:
                self.answerer()
        except BaseException:
            self.conn.close()
            raise

    def _new_retriever(self) -> Retriever:
        return Retriever(self.settings, conn=self.conn, embedder=self.embedder)

    def _warm(self) -> None:
        """Embed once and read each knowledge graph's relation vocabulary and path texts in every
        Retriever, so the first requests do not pay for it."""
        began = time.perf_counter()
        self.embedder.encode(["warm up"])
        with self.retriever() as r:
            graphs = [d.name for d in r.datasets().values() if d.kind == "knowledge-graph" and d.dimension == self.embedder.dimension]
        retrievers = [self._pool.get_nowait() for _ in range(self.config.concurrency)]
        try:
            for r in retrievers:
                for name in graphs:
                    r.warm(name, WARM_HOPS)
        finally:
            for r in retrievers:
                self._pool.put(r)
        self.progress.note(f"{self.config.concurrency} retrievers ready ({', '.join(graphs) or 'no knowledge graph'} warmed) "
                           f"in {time.perf_counter() - began:.1f} s")

    def close(self) -> None:
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                break
        self.conn.close()

    # -- shared resources ------------------------------------------------------------------------
    @contextmanager
    def retriever(self, dataset: str | None = None) -> Iterator[Retriever]:
        """Borrow a Retriever for one request (wait at most ``queue_timeout_s``).

        One that knows no dataset named ``dataset`` is replaced by a fresh one first (datasets
        loaded since it read the list); one that met a driver error is replaced afterwards (its
        session may be broken)."""
        try:
            r = self._pool.get(timeout=self.config.queue_timeout_s)
        except queue.Empty:
            raise Busy(f"all {self.config.concurrency} retrievers stayed busy for {self.config.queue_timeout_s:.0f} s; try again") from None
        try:
            if dataset is not None and dataset not in r.datasets():
                r.close()
                r = self._new_retriever()
            yield r
        except (Neo4jError, DriverError):
            r.close()
            r = self._new_retriever()
            raise
        finally:
            self._pool.put(r)

    def answerer(self) -> Answerer:
        """The server's answerer, loaded on first use (once), its generation serialised."""
        with self._load_lock:
            if self._answerer is None:
                began = time.perf_counter()
                loaded = load_answerer(self.settings, self.config.checkpoint, progress=self.progress, decoding=self.config.decoding,
                                       embedder=self.embedder)

                def answer(result: RetrievalResult) -> str:
                    with self._generate_lock:
                        return loaded.answer(result)

                self._answerer = Answerer(answer, loaded.by)
                self.progress.note(f"answerer loaded in {time.perf_counter() - began:.1f} s: {loaded.by}")
            return self._answerer

    # -- what the routes call ----------------------------------------------------------------------
    def ask(self, request: AskRequest) -> AskResult:
        with self.retriever(request.dataset) as r:
            return ask(self.settings, request.question, request.dataset, request.graph, request.entity, request.params(),
                       checkpoint=self.config.checkpoint, record_it=request.record, retriever=r, answer_by=request.answer_by,
                       load_answerer_once=self.answerer)

    def retrieve(self, request: RetrieveRequest) -> RetrievalResult:
        """The subgraph only (recorded unless ``record`` is false), as ``ask --no-answer``."""
        with self.retriever(request.dataset) as r:
            return ask(self.settings, request.question, request.dataset, request.graph, request.entity, request.params(),
                       record_it=request.record, answer_it=False, retriever=r).retrieval

    def show(self, rid: str) -> ShownRetrieval:
        return show(self.settings, rid, conn=self.conn)

    def datasets(self) -> list[DatasetStats]:
        return stats_of(self.conn)

    def health(self) -> Health:
        """Asks Neo4j for its agent (a driver error, hence 503, when it is down)."""
        agent = self.conn.driver.get_server_info().agent
        return Health(agent, self.embedder.name, self._answerer is not None, self._answerer.by if self._answerer else None,
                      self.config.concurrency, self._pool.qsize())
