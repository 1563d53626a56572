"""``create_app(service, token)``: the routes of `gr-neo4j serve`, each one call of the :class:`Service`.

=====================  =======================================================================
POST /ask              AskRequest -> ``AskResult.to_json()`` (as ``gr-neo4j ask --json``)
POST /retrieve         RetrieveRequest -> ``RetrievalResult.to_json()`` (``ask --no-answer --json``'s subgraph)
GET /retrievals/{id}   a recorded ask (``gr-neo4j show``): question, answer, show query, Browser URL
GET /datasets          ``{"datasets": [...]}`` as ``gr-neo4j stats --json``
GET /healthz           Neo4j's agent, the models, the retriever pool; 503 when Neo4j is down
GET /docs              OpenAPI docs (``/openapi.json``)
=====================  =======================================================================

With a ``token`` every route but ``/healthz`` and the docs needs ``Authorization: Bearer <token>``.
Routes are plain ``def``: FastAPI runs them in its thread pool, so requests run side by side up to
the service's pool of retrievers.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Path
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .. import __version__
from ..answer import ID_PATTERN
from ..errors import GrNeo4jError
from . import errors
from .config import MAX_BODY_BYTES
from .limits import BodyLimit
from .requests import AskRequest, RetrieveRequest
from .service import Service
from .token import token_matches

ERRORS = {code: {"description": text, "content": {"application/json": {"example": {"error": "..."}}}} for code, text in {
    400: "bad JSON, or the library refused the question", 401: "missing or wrong bearer token", 413: "body too large",
    422: "the body does not fit the request", 503: "Neo4j unreachable or every retriever busy",
}.items()}
# Module-level: FastAPI reads the routes' annotations (strings here) in this module's namespace.
BEARER = HTTPBearer(auto_error=False, description="The token in the file that `gr-neo4j serve` names at start.")


def create_app(service: Service, token: str | None = None) -> FastAPI:
    app = FastAPI(
        title="gr-neo4j",
        version=__version__,
        description="G-Retriever on Neo4j: retrieve a question's subgraph and answer from it. Every error is JSON `{\"error\": ...}`.",
    )
    errors.install(app)
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    def authorised(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]) -> None:
        header = f"{credentials.scheme} {credentials.credentials}" if credentials else None
        if token is not None and not token_matches(header, token):
            raise HTTPException(401, "missing or wrong token: send `Authorization: Bearer <token>` with the token the server named at start",
                                headers={"WWW-Authenticate": "Bearer"})

    api = APIRouter(dependencies=[Depends(authorised)] if token is not None else [], responses=ERRORS)

    @api.post("/ask", summary="Retrieve the question's subgraph and answer from it (as `gr-neo4j ask --json`)")
    def ask(request: AskRequest) -> dict:
        return service.ask(request).to_json()

    @api.post("/retrieve", summary="Retrieve the question's subgraph only (as `gr-neo4j ask --no-answer --json`)")
    def retrieve(request: RetrieveRequest) -> dict:
        return service.retrieve(request).to_json()

    @api.get("/retrievals/{rid}", summary="A recorded ask: its question, answer, show query and Browser URL (as `gr-neo4j show`)",
             responses={404: {"description": "no recorded retrieval with this id"}})
    def retrieval(rid: Annotated[str, Path(description="The retrieval_id of an ask or retrieve", max_length=64)]) -> dict:
        if not ID_PATTERN.match(rid):
            raise HTTPException(404, f"'{rid}' is not a retrieval id (12 hexadecimal digits, the retrieval_id of /ask)")
        try:
            return asdict(service.show(rid))
        except GrNeo4jError as exc:
            raise HTTPException(404, str(exc)) from None

    @api.get("/datasets", summary="What each dataset holds (as `gr-neo4j stats --json`)")
    def datasets() -> dict:
        return {"datasets": [s.to_json() for s in service.datasets()]}

    @app.get("/healthz", summary="Neo4j's version, the models and the retriever pool; 503 when Neo4j is down", responses=ERRORS)
    def healthz() -> dict:
        return service.health().to_json()

    app.include_router(api)
    return app
