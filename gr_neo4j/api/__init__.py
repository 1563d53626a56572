"""`gr-neo4j serve`: the Python API over HTTP (FastAPI served by uvicorn), models loaded once.

    config.py    ServeConfig: host, port, pool size, checkpoint; the request limits
    requests.py  pydantic request bodies mirroring `ask`'s options -> RetrievalParams
    token.py     the bearer token (generated once, 0600 in the gr-neo4j home)
    service.py   Service: one driver, one embedder, a pool of Retrievers, one answerer (generation serialised)
    errors.py    every failure as a JSON {"error": ...} with a 4xx/5xx status, never a traceback
    limits.py    the request-body size limit (ASGI middleware)
    app.py       create_app(service, token): the routes
    run.py       serve(settings, config): start the service and uvicorn, stop both on Ctrl-C

Responses are the library's own results: ``/ask`` the ``AskResult.to_json()`` of ``ask --json``,
``/retrieve`` the ``RetrievalResult.to_json()``, ``/datasets`` the ``stats --json`` document.

The names below are imported on first use (PEP 562): ``gr_neo4j.api.config`` (the defaults the CLI
shows) stays light; FastAPI, uvicorn and the models load with the server.
"""

from __future__ import annotations

from ..lazy import lazy_attributes
from .config import ServeConfig

__getattr__ = lazy_attributes(__name__, {"Service": "service", "create_app": "app", "serve": "run"})
__all__ = ["ServeConfig", "Service", "create_app", "serve"]
