"""Every failure of a request as JSON ``{"error": "..."}`` with a status that says whose it is:

===  ==========================================================================================
400  the body is not JSON; the library refused the question (unknown dataset, graph or entity...)
401  the bearer token is missing or wrong (the server requires one)
404  no such path, or no recorded retrieval with that id
413  the body is over the size limit (:mod:`.limits`)
422  the body does not fit the request model (unknown mode, empty or too long question, ...)
503  Neo4j is unreachable or busy, or every retriever stayed busy: try again later
500  anything else; the traceback goes to the server's log, never into the response
===  ==========================================================================================
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired, TransientError
from starlette.exceptions import HTTPException

from ..errors import ConnectionFailed, GrNeo4jError, TryAgain, driver_text, printable, shorten

log = logging.getLogger("gr_neo4j.api")
MESSAGE_LIMIT = 500
RETRY_AFTER = {"Retry-After": "5"}


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": shorten(" ".join(printable(message).split()), MESSAGE_LIMIT)}, status_code=status, headers=headers)


def describe_validation(errors: list[dict]) -> str:
    """pydantic's errors as 'field: problem; ...' (the input itself is not echoed)."""
    parts = []
    for e in errors:
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {str(e.get('msg', 'invalid')).removeprefix('Value error, ')}")
    return "; ".join(parts)


def install(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        bad_json = [e for e in errors if e.get("type") == "json_invalid"]
        if bad_json:
            return error(400, f"the body is not valid JSON ({bad_json[0].get('ctx', {}).get('error', 'parse error')})")
        return error(422, describe_validation(errors))

    @app.exception_handler(HTTPException)
    async def http(request: Request, exc: HTTPException) -> JSONResponse:
        return error(exc.status_code, str(exc.detail), exc.headers)

    @app.exception_handler(TryAgain)
    async def busy(request: Request, exc: TryAgain) -> JSONResponse:
        return error(503, str(exc), RETRY_AFTER)

    @app.exception_handler(GrNeo4jError)
    async def refused(request: Request, exc: GrNeo4jError) -> JSONResponse:
        if isinstance(exc, ConnectionFailed):
            return error(503, str(exc), RETRY_AFTER)
        return error(400, str(exc))

    @app.exception_handler(Neo4jError)
    @app.exception_handler(DriverError)
    async def neo4j(request: Request, exc: Exception) -> JSONResponse:
        name = type(exc).__name__
        detail = driver_text(str(getattr(exc, "message", None) or exc)) or name
        if isinstance(exc, (ServiceUnavailable, SessionExpired)):
            return error(503, f"Neo4j is unreachable ({name}: {detail}); try again once it is up", RETRY_AFTER)
        if isinstance(exc, TransientError):
            return error(503, f"Neo4j could not complete the request ({exc.code}); try again", RETRY_AFTER)
        log.error("Neo4j error on %s %s", request.method, request.url.path, exc_info=exc)
        return error(500, f"Neo4j refused the request ({getattr(exc, 'code', None) or name}); see the server's log")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # Starlette raises it again after this response, so uvicorn logs the traceback once.
        return error(500, f"internal error ({type(exc).__name__}); see the server's log")
