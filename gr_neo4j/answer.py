"""`ask()`: one question from retrieval to answer, then recorded so Browser can show its subgraph.

    question --Retriever.retrieve--> RetrievalResult --Answerer--> answer --record--> (:Retrieval)

This module sits above both halves: it depends on :mod:`gr_neo4j.retrieval` (the subgraph) and on
:mod:`gr_neo4j.model` / :mod:`gr_neo4j.llm` (the answer); neither of them imports it, and
retrieval never imports the model.

Retrieval runs in read transactions; recording the ``Retrieval`` node is one separate write
transaction that ``record_it=False`` skips, so a read-only database user can ask.

**Lazy imports: the one place.** The answering stack (:mod:`gr_neo4j.model`, :mod:`gr_neo4j.llm`,
hence transformers' model classes, peft, safetensors and the GGUF conversion) is imported only
inside :func:`load_answerer`. Loading it costs seconds and hundreds of MB, so ``ask --no-answer``,
``show`` and ``retrieve`` (which never answer) must not pay for it; everything else in this module
is light. Retrieval runs on numpy: torch, PyG (which itself imports ``transformers``) and the
samples module come in with the answerer too (:func:`as_sample` reads ``RetrievalResult.data``), so
a cold ``ask --no-answer``, and a default ``ask`` that the graph answers, import none of them.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from .connection import Connection, connect
from .cypher_store import statement
from .defaults import AnswerBy, Decoding, Objective
from .errors import NotFound, UsageError
from .home.layout import layout_of
from .metrics import SEPARATOR
from .progress import Progress
from .retrieval import RetrievalParams, RetrievalResult, Retriever
from .retrieval.support import SupportedAnswer, supported_answers
from .settings import Settings

if TYPE_CHECKING:
    from .samples import SubgraphSample

ID_PATTERN = re.compile(r"^[0-9a-f]{12}$")
MAX_NEW_TOKENS = 64


@dataclass(frozen=True)
class AskResult:
    """The answer, the subgraph it came from, and where to see it."""

    retrieval: RetrievalResult
    answer: str | None  # None: not in the graph (``retrieval.not_in_graph`` says why)
    answered_by: str
    answer_ms: float
    retrieval_id: str | None
    answers: tuple[SupportedAnswer, ...] = ()  # each answer item, its node and its path from a topic entity

    def to_json(self) -> dict:
        out = self.retrieval.to_json()
        out.update(answer=self.answer, answered_by=self.answered_by, answer_ms=self.answer_ms, retrieval_id=self.retrieval_id,
                   answers=[asdict(a) | {"line": a.line()} for a in self.answers])
        return out


# -- answering --------------------------------------------------------------------------------


def as_sample(result: RetrievalResult) -> SubgraphSample:
    """The retrieved subgraph as the model's input (no label); builds its PyG ``Data`` (torch)."""
    from .samples import SubgraphSample

    return SubgraphSample(id="ask", question=result.question, label="", desc=result.desc, data=result.data,
                          dataset=result.dataset, node_texts=[n.text for n in result.nodes], topic=[n.topic for n in result.nodes])


@dataclass(frozen=True)
class Answerer:
    """Answers retrieved subgraphs: ``answer(result) -> str``; ``by`` says which model answers."""

    answer: Callable[[RetrievalResult], str]
    by: str


def load_answerer(settings: Settings, checkpoint: str | Path | None = None, llm: tuple[Any, Any] | None = None,
                  progress: Progress | None = None, decoding: Decoding | str = Decoding.AUTO, embedder=None) -> Answerer:
    """A trained checkpoint (``checkpoint``), else the LLM zero-shot (``llm``, an already loaded
    ``(model, tokenizer)``, or the configured one) behind the same prompt as a trained model.
    ``progress`` is told about a first-use conversion of the default LLM; ``decoding`` (auto:
    held to the subgraph's node texts on knowledge graphs, to the labels on ExplaGraphs).

    A checkpoint with a node head (``train --objective node|joint``) needs the question's vector
    (``embedder``, else the configured one): joint lists the head's best nodes in the prompt; node
    answers with the head alone (the nodes above 0.5 probability, else the best), no LLM. One of
    objective label answers with its classifier's label, no LLM either.

    The only place that imports the answering stack (see the module docstring).
    """
    from .model import GRetrieverModel, load_checkpoint
    from .model import answer as generate
    from .model.answer_head import fill_question_vectors, head_answer
    from .model.checkpoint import load_label_model, load_node_model, read_config
    from .model.config import ModelConfig

    def sample_of(result: RetrievalResult) -> SubgraphSample:
        sample = as_sample(result)
        if head:
            fill_question_vectors([sample], settings, embedder)
        return sample

    head = False
    if checkpoint is not None:
        mcfg = ModelConfig.from_dict(read_config(checkpoint)["model"])
        head = mcfg.has_head
        if mcfg.objective == Objective.NODE:
            scorer = load_node_model(checkpoint)

            def by_head(result: RetrievalResult) -> str:
                sample = sample_of(result)
                return head_answer(scorer.score([sample])[0], sample.node_texts)[1]

            return Answerer(by_head, f"the node head of checkpoint {checkpoint}")
        if mcfg.objective == Objective.LABEL:
            classifier = load_label_model(checkpoint)
            return Answerer(lambda result: classifier.predict([sample_of(result)])[0], f"the label classifier of checkpoint {checkpoint}")
        model, by = load_checkpoint(checkpoint, llm=llm, settings=settings, progress=progress), f"checkpoint {checkpoint}"
    else:
        if llm is None:
            from .llm import llm_source, load_llm

            llm, name = load_llm(settings, progress=progress), llm_source(settings).name
            by = f"{name} (zero-shot)"
        else:
            name, by = "", "given LLM (zero-shot)"
        model = GRetrieverModel.llm_only(*llm, name, MAX_NEW_TOKENS)
    decoding = Decoding(decoding)
    by += "" if decoding == Decoding.FREE else f", {decoding} decoding"
    by += ", the node head's candidates in the prompt" if head else ""
    return Answerer(lambda result: generate(model, [sample_of(result)], decoding=decoding)[0].strip(), by)


# -- asking -----------------------------------------------------------------------------------


def new_retrieval_id() -> str:
    return uuid.uuid4().hex[:12]


def answer_node_ids(result: RetrievalResult, answers: Sequence[SupportedAnswer]) -> list[str]:
    """The element ids of the subgraph nodes the answer items name (each once, in answer order)."""
    by_key = {n.key: n.element_id for n in result.nodes}
    return list(dict.fromkeys(by_key[a.key] for a in answers if a.key is not None and a.key in by_key))


def record(retriever: Retriever, result: RetrievalResult, answer: str | None, answer_ids: Sequence[str] = ()) -> str:
    """Write the Retrieval node, linked to the retrieved nodes, the topic entities and the answer
    entities (one write transaction), and return its id."""
    rid = new_retrieval_id()
    retriever.conn.write(
        "retrieval_record",
        id=rid,
        question=result.question,
        dataset=result.dataset,
        graph=result.graph,
        mode=str(result.mode),
        parameters=json.dumps(result.parameters, sort_keys=True),
        answer=answer,
        rel_ids=[e.element_id for e in result.edges],
        node_ids=[n.element_id for n in result.nodes],
        topic_ids=[n.element_id for n in result.nodes if n.topic],
        answer_ids=list(answer_ids),
    )
    return rid


def ask(
    settings: Settings,
    question: str,
    dataset: str | None = None,
    graph: str | None = None,
    entities: Sequence[str] = (),
    params: RetrievalParams | None = None,
    checkpoint: str | Path | None = None,
    record_it: bool = True,
    answer_it: bool = True,
    retriever: Retriever | None = None,
    llm: tuple[Any, Any] | None = None,
    answerer: Answerer | None = None,
    progress: Progress | None = None,
    decoding: Decoding | str = Decoding.AUTO,
    answer_by: AnswerBy | str = AnswerBy.AUTO,
    load_answerer_once: Callable[[], Answerer] | None = None,
) -> AskResult:
    """Retrieve the subgraph of ``question``, answer from it, and (unless ``record_it`` is False)
    record a ``Retrieval`` node linked to the chosen nodes.

    ``answer_it=False`` skips the LLM (retrieval and recording only, nothing of the model is
    imported); ``answerer`` is one already loaded (many questions); otherwise ``checkpoint`` (a
    trained model directory) or ``llm`` (a loaded ``(model, tokenizer)``) choose one;
    ``progress`` is told about a first-use conversion of the LLM; ``decoding``: see :class:`Decoding`.
    ``answer_by`` (auto): the graph's own answers when the selection gives some and no checkpoint
    is named (no model is loaded then), else the LLM; an explicit ``graph`` with no graph answers
    is an error. ``load_answerer_once``: returns the answerer when the LLM answers (a server's model,
    loaded once and shared); unlike ``answerer`` it leaves ``auto`` free to answer by the graph.
    """
    own = retriever is None
    retriever = retriever or Retriever(settings)
    try:
        result = retriever.retrieve(question, dataset, graph, entities, params or RetrievalParams())
        began = time.perf_counter()
        answer_by = AnswerBy(answer_by)
        by_graph = answer_by == AnswerBy.GRAPH or (answer_by == AnswerBy.AUTO and checkpoint is None and answerer is None
                                                   and llm is None and bool(result.graph_answers))
        if answer_it and result.not_in_graph:
            # Neither the graph nor an LLM should name something for a question the graph cannot answer.
            answer, by = None, f"nobody: not in the graph ({result.not_in_graph})"
        elif answer_it and by_graph:
            if not result.graph_answers:
                raise UsageError(f"the {result.mode} selection gives no answers of its own: use --answer-by llm (or the paths mode)")
            answer = SEPARATOR.join(result.nodes[i].text for i in result.graph_answers)
            by = "the graph (where the named entities meet)" if len(result.linked) > 1 else "the graph (the ends of the best relation path)"
        elif answer_it:
            if answerer is None and load_answerer_once is not None:
                answerer = load_answerer_once()
            answerer = answerer or load_answerer(settings, checkpoint, llm, progress, decoding)
            answer, by = answerer.answer(result), answerer.by
        else:
            answer, by = "", "nobody (answering skipped)"
        answer_ms = 1000 * (time.perf_counter() - began)
        answers = tuple(supported_answers(result, answer)) if answer_it and answer is not None else ()
        answer_ids = ([result.nodes[i].element_id for i in result.graph_answers] if answer_it and by_graph
                      else answer_node_ids(result, answers))
        said = None if not answer_it else answer if answer is not None else f"not in the graph: {result.not_in_graph}"
        rid = record(retriever, result, said, answer_ids) if record_it else None
        return AskResult(replace(result, retrieval_id=rid), answer, by, answer_ms, rid, answers)
    finally:
        if own:
            retriever.close()


# -- showing a recorded ask ---------------------------------------------------------------------


@dataclass(frozen=True)
class ShownRetrieval:
    id: str
    question: str
    dataset: str
    answer: str | None
    created_at: str
    nodes: int
    edges: int
    query: str
    browser_url: str | None


def show_query(rid: str) -> str:
    """The Cypher that shows exactly the subgraph of a recorded ask (the id written in, for Browser)."""
    if not ID_PATTERN.match(rid):
        raise UsageError(f"'{rid}' is not a retrieval id (12 hexadecimal digits, as `ask` prints)")
    lines = statement("retrieval_show").splitlines()
    body = [line for line in lines if not line.lstrip().startswith("//")]
    return "\n".join(body).replace("$id", f"'{rid}'")


def browser_url(settings: Settings, query: str | None = None) -> str | None:
    """The managed server's Browser URL (with the query pre-filled), or None for an external server."""
    if not settings.managed:
        return None
    state = layout_of(settings).read_state() or {}
    url = f"http://127.0.0.1:{state.get('http_port', settings.http_port)}/browser/"
    return url + ("?cmd=edit&arg=" + quote(query, safe="") if query else "")


def show(settings: Settings, rid: str, conn: Connection | None = None) -> ShownRetrieval:
    """A recorded ask: its question and answer, the query that shows its subgraph, the Browser URL."""
    query = show_query(rid)
    if conn is None:
        with connect(settings) as own:
            rows = own.read("retrieval_get", id=rid)
    else:
        rows = conn.read("retrieval_get", id=rid)
    if not rows:
        raise NotFound(f"no recorded retrieval '{rid}' (asks made with --no-record are not kept)")
    r = rows[0]
    return ShownRetrieval(
        id=r["id"],
        question=r["question"],
        dataset=r["dataset"],
        answer=r["answer"],
        created_at=r["created_at"],
        nodes=r["nodes"],
        edges=len(r["rel_ids"] or []),
        query=query,
        browser_url=browser_url(settings, query),
    )
