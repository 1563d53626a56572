"""Request bodies of ``POST /retrieve`` and ``POST /ask``: the options of `gr-neo4j ask`, same names
and defaults (``entity`` is the repeatable ``--entity``), checked by pydantic before anything runs.

Unknown fields are refused (a misspelt ``hop`` would otherwise be ignored silently).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..defaults import AnswerBy, Mode
from ..retrieval.params import HELP, MAX_HOPS, RetrievalParams
from .config import MAX_ENTITIES, MAX_QUESTION_CHARS

DEFAULTS = RetrievalParams  # the dataclass's field defaults are the requests' defaults, as the CLI's


def _utf8(text: str) -> str:
    """JSON may carry a lone surrogate ("\\ud800"), which no UTF-8 encoder (the tokenizer, the driver)
    accepts: refuse it here rather than fail later with a 500."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("not valid Unicode text (a lone surrogate)") from None
    return text


class RetrieveRequest(BaseModel):
    """One question and how to retrieve its subgraph."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="The question, as typed.")
    dataset: str | None = Field(None, max_length=200, description=HELP["dataset"])
    graph: str | None = Field(None, max_length=200, description=HELP["graph"])
    entity: list[str] = Field([], max_length=MAX_ENTITIES, description=HELP["entity"])
    hops: int | None = Field(DEFAULTS.hops, ge=0, le=MAX_HOPS, description=HELP["hops"])
    topk: int = Field(DEFAULTS.topk, ge=0, le=100, description=HELP["topk"])
    topk_e: int | None = Field(None, ge=0, le=100, description=HELP["topk_e"])
    cost_e: float = Field(DEFAULTS.cost_e, ge=0, description=HELP["cost_e"])
    mode: Mode | None = Field(None, description=HELP["mode"])
    max_paths: int = Field(DEFAULTS.max_paths, ge=1, le=1000, description=HELP["max_paths"])
    node_budget: int = Field(DEFAULTS.node_budget, ge=1, le=1000, description=HELP["node_budget"])
    answer_cap: int = Field(DEFAULTS.answer_cap, ge=0, le=10000, description=HELP["answer_cap"])
    link: bool = Field(DEFAULTS.link, description=HELP["link"])
    path_ranker: bool = Field(DEFAULTS.path_ranker, description=HELP["path_ranker"])
    record: bool = Field(True, description="Record a Retrieval node (GET /retrievals/{id}); false for read-only users.")

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        return _utf8(value)

    @field_validator("entity")
    @classmethod
    def _entities(cls, value: list[str]) -> list[str]:
        if any(not e.strip() or len(e) > MAX_QUESTION_CHARS for e in value):
            raise ValueError(f"each entity must be non-blank text of at most {MAX_QUESTION_CHARS} characters")
        return [_utf8(e) for e in value]

    @field_validator("dataset", "graph")
    @classmethod
    def _names(cls, value: str | None) -> str | None:
        return None if value is None else _utf8(value)

    def params(self) -> RetrievalParams:
        return RetrievalParams(
            mode=self.mode, hops=self.hops, topk=self.topk, topk_e=self.topk_e, cost_e=self.cost_e, max_paths=self.max_paths,
            node_budget=self.node_budget, answer_cap=self.answer_cap, link=self.link, path_ranker=self.path_ranker,
        )


class AskRequest(RetrieveRequest):
    """A question to retrieve for and answer."""

    answer_by: AnswerBy = Field(AnswerBy.AUTO, description="auto: the graph's own answers where the selection gives some "
                                "and the server has no checkpoint, else the LLM; graph; llm.")
