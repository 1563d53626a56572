"""`ask()`: retrieve, answer with the LLM (zero-shot) or a trained checkpoint, record the ask.

Retrieval runs in read transactions; recording the ``Retrieval`` node is one separate write
transaction that ``record=False`` skips, so a read-only database user can ask.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote

from ..errors import GrNeo4jError
from ..server.layout import layout_of
from ..settings import Settings
from .result import RetrievalResult
from .retriever import RetrievalParams, Retriever

ID_PATTERN = re.compile(r"^[0-9a-f]{12}$")
MAX_NEW_TOKENS = 64


@dataclass(frozen=True)
class AskResult:
    """The answer, the subgraph it came from, and where to see it."""

    retrieval: RetrievalResult
    answer: str
    answered_by: str
    answer_ms: float
    retrieval_id: str | None

    def to_json(self) -> dict:
        out = self.retrieval.to_json()
        out.update(answer=self.answer, answered_by=self.answered_by, answer_ms=self.answer_ms, retrieval_id=self.retrieval_id)
        return out


def new_retrieval_id() -> str:
    return uuid.uuid4().hex[:12]


def as_sample(result: RetrievalResult):
    """The retrieved subgraph as the model's input (no label)."""
    from ..samples import SubgraphSample

    return SubgraphSample(id="ask", question=result.question, label="", desc=result.desc, data=result.data,
                          dataset=result.dataset, node_texts=[n.text for n in result.nodes])


def model_answer(model, result: RetrievalResult) -> str:
    """Greedy answer of a :class:`~gr_neo4j.model.GRetrieverModel` (trained or zero-shot)."""
    from ..model.checkpoint import answer

    return answer(model, [as_sample(result)])[0].strip()


def record(retriever: Retriever, result: RetrievalResult, answer: str | None) -> str:
    """Write the Retrieval node (one write transaction) and return its id."""
    from ..cypher_store import statement

    rid = new_retrieval_id()
    params = dict(
        id=rid,
        question=result.question,
        dataset=result.dataset,
        graph=result.graph,
        mode=result.mode,
        parameters=json.dumps(result.parameters, sort_keys=True),
        answer=answer,
        rel_ids=[e.element_id for e in result.edges],
        node_ids=[n.element_id for n in result.nodes],
    )
    retriever.conn.write_tx(lambda tx: tx.run(statement("retrieval_record"), params).consume())
    return rid


def ask(
    settings: Settings,
    question: str,
    dataset: str | None = None,
    graph: str | None = None,
    entities: Sequence[str] = (),
    params: RetrievalParams = RetrievalParams(),
    checkpoint: str | Path | None = None,
    record_it: bool = True,
    answer_it: bool = True,
    retriever: Retriever | None = None,
    llm=None,
) -> AskResult:
    """Retrieve the subgraph of ``question``, answer from it, and (unless ``record_it`` is False)
    record a ``Retrieval`` node linked to the chosen nodes.

    ``answer_it=False`` skips the LLM (retrieval and recording only); ``llm`` is an already loaded
    ``(model, tokenizer)`` for zero-shot answering; ``checkpoint`` a trained model directory.
    """
    own = retriever is None
    retriever = retriever or Retriever(settings)
    try:
        result = retriever.retrieve(question, dataset, graph, entities, params)
        began = time.perf_counter()
        if not answer_it:
            answer, by = "", "nobody (answering skipped)"
        elif checkpoint is not None:
            from ..model.checkpoint import load_checkpoint

            answer, by = model_answer(load_checkpoint(checkpoint, settings=settings), result), f"checkpoint {checkpoint}"
        else:
            if llm is None:
                from ..llm import llm_source, load_llm

                llm, name = load_llm(settings), llm_source(settings).name
                by = f"{name} (zero-shot)"
            else:
                name, by = "", "given LLM (zero-shot)"
            from ..model import GRetrieverModel

            answer = model_answer(GRetrieverModel.llm_only(*llm, name, MAX_NEW_TOKENS), result)
        answer_ms = 1000 * (time.perf_counter() - began)
        rid = record(retriever, result, answer if answer_it else None) if record_it else None
        return AskResult(replace(result, retrieval_id=rid), answer, by, answer_ms, rid)
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
        raise GrNeo4jError(f"'{rid}' is not a retrieval id (12 hexadecimal digits, as `ask` prints)")
    from ..cypher_store import statement

    return statement("retrieval_show").split("\n", 1)[1].replace("$id", f"'{rid}'")


def browser_url(settings: Settings, query: str | None = None) -> str | None:
    """The managed server's Browser URL (with the query pre-filled), or None for an external server."""
    if not settings.managed:
        return None
    state = layout_of(settings).read_state() or {}
    url = f"http://127.0.0.1:{state.get('http_port', settings.http_port)}/browser/"
    return url + ("?cmd=edit&arg=" + quote(query, safe="") if query else "")


def show(settings: Settings, rid: str, conn=None) -> ShownRetrieval:
    """A recorded ask: its question and answer, the query that shows its subgraph, the Browser URL."""
    from ..connection import connect

    query = show_query(rid)
    if conn is None:
        with connect(settings) as own:
            rows = own.read("retrieval_get", id=rid)
    else:
        rows = conn.read("retrieval_get", id=rid)
    if not rows:
        raise GrNeo4jError(f"no recorded retrieval '{rid}' (asks made with --no-record are not kept)")
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
