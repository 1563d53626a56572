"""The retrieval pipeline, written once: ``Retriever.retrieve`` is what ``ask``, ``retrieve``,
``eval-retrieval`` and ``scripts/bench_retrieval.py`` call. Nothing is written.

Stages of one question:

1. **embed** the question: ``[D]`` unit vector (the dataset's embedder); on a knowledge graph
   asked without topic entities, **link** the entities it names (:mod:`.linking`, one read): they
   become the topic entities, and when none links the vector hits are the only seeds;
2. **fetch** the candidate graph from a :class:`~.candidates.CandidateSource` (Neo4j: one read
   round trip, :class:`~.candidates.Neo4jSource`; or the whole graph in memory) and **score** it
   (:func:`~.modes.score`): :meth:`Retriever.fetch` -> :class:`Fetched`;
3. **select** with the selector registered for the :class:`~gr_neo4j.defaults.Mode`
   (:mod:`.modes`); ``paths`` with an answer cap first **completes** its two best relation paths
   when the candidate caps may have cut them (:meth:`Retriever.complete`, one more read);
4. **build** the result: the chosen nodes' embeddings (a second small read when the candidates
   came without them) and G-Retriever's text: :meth:`Retriever.choose`. All in numpy: the PyG
   ``Data`` is made from the embeddings only when the model reads ``RetrievalResult.data``, so a
   cold ``ask`` never imports torch.

``fetch`` once and ``choose`` per mode is how ``eval-retrieval`` compares modes on the same
candidates.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from typing import Self

import neo4j
import numpy as np

from ..connection import Connection, connect
from ..defaults import Mode, Seeds
from ..embedder import Embedder, load_embedder
from ..errors import NotFound, SchemaError, UsageError
from ..ingest.records import entity_uid
from ..settings import Settings
from ..textualize import textualize
from .candidates import (
    CandidateQuery,
    Candidates,
    CandidateSource,
    DatasetInfo,
    Neo4jSource,
    RelationVocab,
    merge,
)
from .fetch_plan import FetchPlan, plan_fetch, schema_paths
from .linking import Linked, link, masked
from .modes import Scored, Selection, path_roots, score, selector
from .params import DEFAULT_HOPS, MAX_HOPS, RetrievalParams
from .paths import PathRanker, PathScorer, complete_steps, load_ranker
from .result import GraphFeatures, RetrievalResult, RetrievedEdge, RetrievedNode, Timings
from .zero_shot import ANSWERABLE, MAX_UNASKED, Reading, Step, ZeroShot, path_text, read, texts_to_embed


@dataclass(frozen=True)
class Fetched:
    """Stages 1-2 of one question: its vector, the candidate graph and its scores.

    ``params`` are resolved (no None); ``*_ms`` the time each stage took (``link_ms`` is counted
    in ``fetch_ms`` too: both are Cypher round trips). ``seeds``: where the topic entities came
    from (None on per-sample graphs); ``linked``: the entities linked in the question;
    ``read_depth``: no depth was given or predicted, so the zero-shot scorer reads the depth from
    the question; ``zero_shot``: that scorer, read once per question (knowledge graphs only) for
    every mode chosen from it; ``plan``: the relation paths the fetch followed, ranked before it
    by the scorer the selection uses, zero-shot or trained (:mod:`.fetch_plan`; None: every
    relation, as deep as the depth read, predicted or given), and
    ``topic_steps`` the steps the topic entities have, read for the plan.
    """

    question: str
    dataset: DatasetInfo
    graph: str | None
    params: RetrievalParams
    candidates: Candidates
    scored: Scored
    embed_ms: float
    fetch_ms: float
    score_ms: float
    seeds: Seeds | None = None
    linked: tuple[Linked, ...] = ()
    link_ms: float = 0.0
    hop_probabilities: tuple[float, ...] = ()
    read_depth: bool = False
    zero_shot: ZeroShot | None = None
    plan: FetchPlan | None = None
    topic_steps: frozenset[Step] | None = None


class Retriever:
    """The pipeline with one connection, one embedder and one candidate source, reused across
    questions; it also keeps the embeddings of relation-path texts.

    ``source``: where candidates come from (default: Neo4j through this retriever's read session).
    Datasets and questions are always read from Neo4j.
    """

    def __init__(
        self,
        settings: Settings,
        conn: Connection | None = None,
        embedder: Embedder | None = None,
        source: CandidateSource | None = None,
    ):
        self.settings = settings
        self._own_conn = conn is None
        self.conn = conn or connect(settings)
        self.embedder = embedder or load_embedder(settings)
        self.neo4j = Neo4jSource(self.conn)
        self.source: CandidateSource = source or self.neo4j
        self.paths = PathScorer(self.embedder)
        self.rankers: dict[str, PathRanker | None] = {}

    # -- plumbing -------------------------------------------------------------------------------
    @property
    def session(self) -> neo4j.Session:
        """The reused read session (it shares the driver's ``execute_query`` bookmarks)."""
        return self.neo4j.session

    def read(self, work):
        """Run ``work(tx)`` in a read transaction of the reused session."""
        return self.neo4j.read(work)

    def close(self) -> None:
        self.neo4j.close()
        if self._own_conn:
            self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def datasets(self) -> dict[str, DatasetInfo]:
        return self.neo4j.datasets()

    def graph_question(self, dataset: str, graph: str) -> str:
        """The question stored with ``graph`` of per-sample ``dataset`` (asked when none is typed)."""
        text = self.neo4j.graph_question(dataset, graph)
        if not text:
            raise NotFound(f"no question is stored with graph '{graph}' of dataset '{dataset}': type one")
        return text

    def dataset(self, name: str | None) -> DatasetInfo:
        """The named dataset, or the only one loaded; checks it was embedded by our embedder."""
        known = self.datasets()
        if not known:
            raise NotFound("no dataset is loaded: load one first (`gr-neo4j load ...`)")
        if name is None:
            if len(known) > 1:
                raise UsageError(f"several datasets are loaded ({', '.join(known)}): choose one with --dataset")
            name = next(iter(known))
        info = known.get(name)
        if info is None:
            raise NotFound(f"no dataset '{name}' is loaded (loaded: {', '.join(known)})")
        if info.dimension is not None and info.dimension != self.embedder.dimension:
            raise SchemaError(
                f"dataset '{name}' was embedded with {info.embedder} ({info.dimension}-d) but the configured "
                f"embedder {self.embedder.name} gives {self.embedder.dimension}-d vectors: set GR_NEO4J_EMBEDDER={info.embedder}"
            )
        return info

    def knowledge_graph(self, name: str | None, command: str) -> DatasetInfo:
        """:meth:`dataset`, which must be a knowledge graph for ``command`` (named in the error)."""
        info = self.dataset(name)
        if info.kind != "knowledge-graph":
            raise UsageError(f"{command} needs a knowledge-graph dataset; '{info.name}' is {info.kind}")
        return info

    def vocab(self, dataset: str) -> RelationVocab:
        """The relation texts of a knowledge-graph dataset and their vectors (from the source)."""
        return self.source.vocab(dataset)

    def warm(self, dataset: str | None = None, hops: int = 0, max_path_texts: int = 2000) -> None:
        """Load what the first questions would otherwise pay for: the model, the session, the
        relation vocabulary and, when there are at most ``max_path_texts`` of them, the embeddings of
        every relation-path text up to ``hops`` relations (MetaQA: 9 + 81 + 729)."""
        info = self.dataset(dataset)
        self.embed(["warm up"])
        if info.kind != "knowledge-graph":
            return
        texts = self.vocab(info.name).texts
        self.path_scorer(info.name)
        if sum(len(texts) ** L for L in range(1, hops + 1)) <= max_path_texts:
            layer = [""]
            for _ in range(hops):
                layer = [f"{p} {t}".strip() for p in layer for t in texts]
                self.paths.vectors(layer)

    def path_scorer(self, dataset: str, learned: bool = True) -> PathScorer:
        """The relation-path scorer of ``dataset``: with its trained ranker when it has one for this
        retriever's embedder and ``learned``, else the plain cosine (loaded once per dataset)."""
        if not learned:
            return self.paths.using(None)
        if dataset not in self.rankers:
            ranker = load_ranker(self.conn, dataset)
            self.rankers[dataset] = ranker if ranker is not None and ranker.embedder == self.embedder.name else None
        return self.paths.using(self.rankers[dataset])

    def embed(self, questions: Sequence[str]) -> np.ndarray:
        """``[Q]`` questions -> ``[Q, D]`` unit vectors."""
        return self.embedder.encode(list(questions))

    # -- the stages -----------------------------------------------------------------------------
    def link(self, question: str, dataset: str) -> list[Linked]:
        """The entities of knowledge-graph ``dataset`` that ``question`` names (one read)."""
        # A partial, not a lambda: the read calls linking directly and never comes back into this module.
        return self.read(partial(link, dataset=dataset, question=question))

    def fetch(
        self,
        question: str,
        dataset: str | None = None,
        graph: str | None = None,
        entities: Sequence[str] = (),
        params: RetrievalParams = RetrievalParams(),
        question_uid: str | None = None,
        q: np.ndarray | None = None,
    ) -> Fetched:
        """Stages 1-2: embed ``question`` (unless ``q`` ``[D]`` is given), link its entities (on a
        knowledge graph, when neither ``entities`` nor ``question_uid`` give topics and
        ``params.link``), fetch its candidate graph (one round trip), score it. Errors name what
        is unknown."""
        if graph is None and (not question or not question.strip()):
            raise UsageError("the question is empty")
        info = self.dataset(dataset)
        params = params.resolved(info.name, info.kind)
        if info.kind == "per-sample" and graph is None:
            raise UsageError(f"dataset '{info.name}' holds one graph per sample: choose one with --graph ID")
        if info.kind != "per-sample" and graph is not None:
            raise UsageError(f"dataset '{info.name}' is one knowledge graph: --graph does not apply (use --entity)")
        if not question or not question.strip():
            question = self.graph_question(info.name, str(graph))
        began = time.perf_counter()
        if q is None:
            q = self.embed([question])[0]
        embedded = time.perf_counter()
        linked: tuple[Linked, ...] = ()
        if info.kind == "knowledge-graph" and not entities and question_uid is None and params.link:
            linked = tuple(self.link(question, info.name))
        linked_at = time.perf_counter()
        hop_p: tuple[float, ...] = ()
        read_depth = False
        if params.hops is None:
            hop_p = self.hop_probabilities(info, question, linked, q, params.path_ranker)
            # Without a hop model the paths mode lets relation paths of every length compete (zero-shot).
            read_depth = not hop_p and params.mode is Mode.PATHS and info.kind == "knowledge-graph"
            params = replace(params, hops=int(np.argmax(hop_p)) + 1 if hop_p else MAX_HOPS if read_depth else DEFAULT_HOPS)
        topic_keys = tuple(entities) or tuple(x.key for x in linked)
        planned = None
        if (read_depth or hop_p) and params.mode is Mode.PATHS and topic_keys and question_uid is None:
            # The depth read zero-shot, or predicted by the hop model: either way the paths are
            # ranked before the fetch, by the scorer the selection will use.
            planned = self.plan(question, linked, info.name, topic_keys, q, params.hops, learned=bool(hop_p))
        zero_shot, plan, topic_steps = planned or (None, None, None)
        if plan is not None and read_depth:
            params = replace(params, hops=plan.depth)  # the depth read is the plan's (a predicted one stays)
        query = CandidateQuery(info, q, plan.depth if plan else params.hops, params.limits, graph, topic_keys, question_uid, plan.allowed if plan else None)
        c = self.source.fetch(query)
        fetched = time.perf_counter()
        if info.kind == "per-sample" and c.num_nodes == 0:
            raise NotFound(f"no graph '{graph}' in dataset '{info.name}'")
        found = {c.node_keys[i] for i in c.topic}
        unknown = [e for e in entities if e not in found]
        if unknown:
            raise NotFound(f"unknown entit{'y' if len(unknown) == 1 else 'ies'} in dataset '{info.name}': " + ", ".join(repr(u) for u in unknown))
        if c.num_nodes == 0 and info.kind != "knowledge-graph":
            raise NotFound(f"no candidates for this question in dataset '{info.name}' (is its vector index online?)")
        s = score(c, q)
        if info.kind == "knowledge-graph" and zero_shot is None:
            held = sorted({c.rel_texts[r] for r in np.unique(c.edge_rel).tolist()})
            zero_shot = self.zero_shot(read(masked(question, linked)), info.name, sorted(set(self.vocab(info.name).texts) | set(c.rel_texts)), held)
        scored = time.perf_counter()
        ms = 1000.0
        return Fetched(
            question, info, graph, params, c, s, ms * (embedded - began), ms * (fetched - embedded), ms * (scored - fetched),
            seeds=seeds_of(info.kind, entities, linked, len(c.topic)), linked=linked, link_ms=ms * (linked_at - embedded),
            hop_probabilities=hop_p, read_depth=read_depth, zero_shot=zero_shot, plan=plan, topic_steps=topic_steps,
        )

    def zero_shot(self, reading: Reading, dataset: str, relations: Sequence[str], ends: Sequence[str]) -> ZeroShot:
        """The zero-shot scorer of a question's ``reading`` (its names masked, as the path plan
        reads it) on knowledge-graph ``dataset``, given all it reads: the vectors of its words and
        of every relation text in ``relations``, and, when it has an answer phrase, the end types
        of the relations in ``ends`` (those a path may end with)."""
        texts = texts_to_embed(reading, relations)
        vectors = dict(zip(texts, self.paths.vectors(texts)))
        end_types = self.neo4j.end_types(dataset, ends) if reading.answer and ends else {}
        return ZeroShot(reading, relations, vectors, end_types)

    def plan(
        self, question: str, linked: Sequence[Linked], dataset: str, topic_keys: Sequence[str],
        q: np.ndarray, depth: int = MAX_HOPS, learned: bool = False,
    ) -> tuple[ZeroShot, FetchPlan, frozenset[Step]] | None:
        """Before the fetch of a question whose depth is read zero-shot, or predicted (``depth``)
        by the hop model of a trained ranker (``learned``): its zero-shot scorer, with the answer
        type over every end the paths from its topic entity may reach, the
        :class:`~.fetch_plan.FetchPlan` of the best of those paths of up to ``depth`` relations,
        ranked by the zero-shot scorer or, ``learned``, the trained one for the question vector
        ``q`` ``[D]``, and the steps the topic entity has (one read, and the dataset's step schema,
        read once). None where nothing is planned: a question naming several entities (their
        walks meet anywhere within the depth), an unknown entity (the fetch says which), a hub
        whose steps were read in part, or too many paths (:data:`~.fetch_plan.MAX_PLAN_PATHS`)."""
        uids = list(dict.fromkeys(entity_uid(dataset, "", k) for k in topic_keys))
        if len(uids) != 1:
            return None
        starts = self.neo4j.topic_steps(uids).get(uids[0])
        if not starts:
            return None
        schema = self.neo4j.step_schema(dataset)
        paths = schema_paths(starts, schema, depth)
        if not paths:
            return None
        text = masked(question, linked)
        zero_shot = self.zero_shot(read(text), dataset, sorted(self.vocab(dataset).texts), sorted({p[-1][0] for p in paths})).with_ends({p[-1] for p in paths})
        scores = self.path_scorer(dataset).planned(text).scores(paths, q) if learned else zero_shot.scores(paths)
        plan = plan_fetch(paths, scores, schema)
        return None if plan is None else (zero_shot, plan, starts)

    def hop_probabilities(self, info: DatasetInfo, question: str, linked: Sequence[Linked], q: np.ndarray, learned: bool = True) -> tuple[float, ...]:
        """How likely ``question`` needs 1..H relations, by the hop model of ``info``'s path
        ranker (read with the entities it names masked); () without one (not a knowledge graph,
        no trained ranker, or ``learned`` off)."""
        if info.kind != "knowledge-graph":
            return ()
        ranker = self.path_scorer(info.name, learned).ranker
        if ranker is None or ranker.hops_q is None:
            return ()
        text = masked(question, linked)
        m = q if text == question else self.paths.vectors([text])[0]
        return tuple(round(float(x), 4) for x in ranker.hop_probabilities(m, text))

    def choose(self, f: Fetched, mode: Mode | str | None = None, data: bool = True) -> RetrievalResult:
        """Stages 3-4: select under ``mode`` (default: ``f.params.mode``) and build the result.
        ``data=False`` skips the node embeddings (``features`` None, and so no ``Data``): figures only."""
        params = f.params if mode is None else replace(f.params, mode=Mode(mode))
        began = time.perf_counter()
        scorer = self.paths
        if f.dataset.kind == "knowledge-graph":
            # The path plan reads the question as the hop model does, with the names it links masked.
            scorer = self.path_scorer(f.dataset.name, params.path_ranker).planned(masked(f.question, f.linked)).reading(f.zero_shot)
        c, s, complete_ms = self.complete(f, params, scorer)
        sel = selector(params.mode)(c, s, params, scorer) if c.num_nodes else Selection(*(np.zeros(0, dtype=np.int64),) * 2, s.edge)
        asked = f.zero_shot.asked(sel.path) if f.zero_shot is not None and sel.path else None
        sole = f.zero_shot is not None and len(sel.path) == 1 and only_step(f.candidates, f.topic_steps) == sel.path[0] and f.zero_shot.open_question()
        why = not_in_graph(f, params, sel, scorer, asked, sole)
        if why is not None:
            sel = replace(sel, answers=sel.answers[:0], answer_scores=sel.answer_scores[:0])
        chosen = time.perf_counter()
        x = None
        if c.x is not None:
            x = c.x[sel.nodes]
        elif data:
            x = self.source.node_embeddings(c, sel.nodes) if len(sel.nodes) else np.zeros((0, self.embedder.dimension), dtype=np.float32)
        fetched_x = time.perf_counter()
        result = build_result(f.question, f.dataset.name, f.graph, params, c, sel, x)
        done = time.perf_counter()
        ms = 1000.0
        timings = Timings(
            embed_ms=f.embed_ms,
            cypher_ms=f.fetch_ms + complete_ms + ms * (fetched_x - chosen),
            pcst_ms=f.score_ms + ms * (chosen - began) - complete_ms,
            total_ms=f.embed_ms + f.fetch_ms + f.score_ms + ms * (done - began),
            complete_ms=complete_ms,
        )
        return replace(result, timings=timings, seeds=f.seeds, linked=f.linked, hop_probabilities=f.hop_probabilities,
                       path=sel.path, path_score=None if sel.path_score is None else round(float(sel.path_score), 4), not_in_graph=why, read_depth=f.read_depth,
                       path_asked=None if asked is None else round(asked, 4), sole_relation=sole)

    def complete(self, f: Fetched, params: RetrievalParams, scorer: PathScorer) -> tuple[Candidates, Scored, float]:
        """Stage 3a, ``paths`` mode with an answer cap: when the candidate caps may have cut the
        walks of the best relation paths, follow those paths exactly (one more read) and add what
        they reach. Returns the candidates, their scores and the milliseconds the read took."""
        c, s = f.candidates, f.scored
        if params.mode is not Mode.PATHS or params.answer_cap == 0 or f.dataset.kind != "knowledge-graph":
            return c, s, 0.0
        roots = path_roots(c, s, params)
        lim = params.limits
        capped = c.num_nodes >= lim.max_nodes or c.num_edges >= lim.max_edges
        steps = complete_steps(c, s.q, scorer, params.hops, roots, lim.fanout, capped)
        if not steps:
            return c, s, 0.0
        began = time.perf_counter()
        extra = self.source.path_ends(c, roots, steps, s.q, max(lim.max_edges, params.answer_cap))
        read_ms = 1000.0 * (time.perf_counter() - began)
        merged = merge(c, extra)
        return merged, (s if merged is c else score(merged, s.q)), read_ms

    def retrieve(
        self,
        question: str,
        dataset: str | None = None,
        graph: str | None = None,
        entities: Sequence[str] = (),
        params: RetrievalParams = RetrievalParams(),
        question_uid: str | None = None,
        q: np.ndarray | None = None,
    ) -> RetrievalResult:
        """Retrieve the subgraph for ``question``: :meth:`fetch` then :meth:`choose`."""
        return self.choose(self.fetch(question, dataset, graph, entities, params, question_uid, q))


def only_step(c: Candidates, steps: frozenset[Step] | None = None) -> Step | None:
    """The one (relation text, backwards) step the single topic entity of ``c`` has, or None
    (several topics, or several kinds of step); ``steps``: the topic's steps as read before a
    planned fetch (whose candidates hold only the planned ones), else read from ``c``."""
    if len(c.topic) != 1:
        return None
    if steps is not None:
        return next(iter(steps)) if len(steps) == 1 else None
    t = int(c.topic[0])
    heads, tails = c.edge_index
    steps = {(c.rel_texts[r], False) for r in c.edge_rel[heads == t].tolist()} | {(c.rel_texts[r], True) for r in c.edge_rel[tails == t].tolist()}
    return steps.pop() if len(steps) == 1 else None


def not_in_graph(f: Fetched, params: RetrievalParams, sel: Selection, scorer: PathScorer, asked: float | None, sole: bool = False) -> str | None:
    """Why the graph does not hold the answer to ``f``'s question, or None when it may (``asked``:
    the zero-shot evidence for the best path's relations, None without a path or reading): on a
    knowledge graph, nothing the question names links (with linking on), nothing is near it, or,
    in the ``paths`` mode, the question asks for none of the relations of the best path, or not
    for its last and more than :data:`~.zero_shot.MAX_UNASKED` of them (judged by the zero-shot reading,
    unless a trained ranker scores the path at least its answer floor; a path that is the named
    entity's ``sole`` relation answers an open question, :meth:`~.zero_shot.ZeroShot.open_question`). Where the walks of
    two named entities meet and the question asks how they connect ("what do X and Y have in
    common"), the meeting is the answer; otherwise two names meeting prove nothing ("the boiling
    point of water" names two films)."""
    if f.dataset.kind != "knowledge-graph":
        return None
    if f.seeds is Seeds.VECTOR and params.link:
        return "nothing the question names is in the graph"
    if f.candidates.num_nodes == 0:
        return "nothing in the graph is near the question"
    if params.mode is not Mode.PATHS or scorer.zero_shot is None or (sel.met and scorer.zero_shot.reading.connects):
        return None
    if not sel.path:
        return "the entities it names have no relations in the graph"
    # A trained ranker knows words the embedder does not ("appear in" for "starred actors"): a
    # path it scores as well as the questions it learned from usually score is trusted.
    floor = scorer.ranker.answer_floor if scorer.ranker is not None else None
    trusted = floor is not None and sel.path_score is not None and sel.path_score >= floor
    unasked = scorer.zero_shot.unasked(sel.path)
    if not trusted and unasked > MAX_UNASKED and scorer.zero_shot.unasked(sel.path[-1:]):
        # "who directed X" of a film with no director: its actors, a film one of them directed, its
        # tags. (A path whose last relation is asked for may start elsewhere than the question says,
        # "the films that share directors with X" along its writers, and still end where it asks.)
        return f"no relation path in the graph is what the question asks for (the best, {path_text(sel.path)}, walks {unasked} relations no word asks for, its last among them)"
    if not trusted and not sole and asked is not None and asked <= ANSWERABLE:
        return (f"no relation in the graph is what the question asks for (the best path, {path_text(sel.path)}, "
                f"is asked for {asked:.2f}; it answers above {ANSWERABLE})")
    return None


def seeds_of(kind: str, entities: Sequence[str], linked: Sequence[Linked], topics: int) -> Seeds | None:
    """Where a retrieval's topic entities came from: ``--entity``, the linker, a stored question's
    TOPIC links (``topics`` found without either), or nowhere (vector seeds only)."""
    if kind != "knowledge-graph":
        return None
    if entities:
        return Seeds.GIVEN
    if linked:
        return Seeds.LINKED
    return Seeds.STORED if topics else Seeds.VECTOR


def build_result(
    question: str,
    dataset: str,
    graph: str | None,
    params: RetrievalParams,
    c: Candidates,
    sel: Selection,
    x: np.ndarray | None = None,
) -> RetrievalResult:
    """Assemble the typed result; node ids in ``desc`` are the sample's own indices on per-sample
    graphs (as G-Retriever writes them) and positions in the subgraph on knowledge graphs.
    ``x``: ``[n, D]`` embeddings of the chosen nodes; without them ``features`` (and ``data``) is None."""
    nodes, edges = sel.nodes, sel.edges
    position = {int(n): i for i, n in enumerate(nodes)}
    topic = {int(t) for t in c.topic}
    out_nodes = [RetrievedNode(c.node_ids[n], c.node_keys[n], c.node_texts[n], float(c.node_sim[n]), int(n) in topic) for n in nodes]
    out_edges = [
        RetrievedEdge(c.edge_ids[e], position[int(c.edge_index[0, e])], position[int(c.edge_index[1, e])], c.rel_texts[c.edge_rel[e]], float(sel.edge_scores[e]))
        for e in edges
    ]
    if c.node_idx is not None:
        ids = [c.node_idx[n] for n in nodes]
        desc = textualize([n.text for n in out_nodes], [(ids[e.src], e.text, ids[e.dst]) for e in out_edges], node_ids=ids)
    else:
        desc = textualize([n.text for n in out_nodes], [(e.src, e.text, e.dst) for e in out_edges])
    features = None if x is None else GraphFeatures(np.ascontiguousarray(x), np.ascontiguousarray(c.rel_attr[c.edge_rel[edges]]))
    return RetrievalResult(
        question=question,
        dataset=dataset,
        graph=graph,
        mode=params.mode,
        parameters=params.to_json(),
        nodes=out_nodes,
        edges=out_edges,
        desc=desc,
        features=features,
        timings=Timings(0, 0, 0, 0),
        candidates=(c.num_nodes, c.num_edges),
        graph_answers=tuple(position[int(a)] for a in sel.answers if int(a) in position),
        graph_answer_scores=tuple(round(float(x), 4) for a, x in zip(sel.answers, sel.answer_scores) if int(a) in position),
    )


def retrieve(
    settings: Settings,
    question: str,
    dataset: str | None = None,
    graph: str | None = None,
    entities: Sequence[str] = (),
    params: RetrievalParams = RetrievalParams(),
) -> RetrievalResult:
    """One-shot retrieval (opens and closes a connection); use :class:`Retriever` for many questions."""
    with Retriever(settings) as r:
        return r.retrieve(question, dataset, graph, entities, params)


def borrowed(settings: Settings, retriever: Retriever | None) -> AbstractContextManager[Retriever]:
    """``with borrowed(settings, retriever) as r``: ``retriever`` when given (its owner closes it),
    else a new one, closed when the block ends."""
    return nullcontext(retriever) if retriever is not None else Retriever(settings)
