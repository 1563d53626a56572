"""`gr-neo4j serve`: a thin shell over gr_neo4j.api.serve."""

from __future__ import annotations

from pathlib import Path

import typer

from ..api.config import ServeConfig
from ..defaults import Decoding
from .common import DECODING, err_console, settings_from
from .errors import handles_errors
from .progress import RichProgress

DEFAULTS = ServeConfig  # the dataclass's field defaults are the options' defaults


def serve(
    host: str = typer.Option(DEFAULTS.host, "--host", help="Address to listen on; anything but loopback requires the bearer token."),
    port: int = typer.Option(DEFAULTS.port, "--port", help="Port to listen on (0: any free port, printed at start)."),
    concurrency: int = typer.Option(DEFAULTS.concurrency, "--concurrency", help="Retrievals that run at once (one driver and one embedder shared)."),
    require_token: bool = typer.Option(
        DEFAULTS.require_token, "--require-token", help="Require the bearer token on loopback too (always required elsewhere).",
    ),
    checkpoint: Path | None = typer.Option(
        None, "--checkpoint", help="A trained checkpoint that answers when the LLM answers (loaded at start; default: the LLM zero-shot, loaded on first use).",
    ),
    decoding: Decoding = DECODING,
    access_log: bool = typer.Option(True, "--access-log/--no-access-log", help="Log one line per request on stderr."),
) -> None:
    """Serve ask, retrieve, show and stats over HTTP (FastAPI + uvicorn; OpenAPI docs at /docs), models loaded once."""
    from ..api.run import serve as serve_fn

    config = ServeConfig(host=host, port=port, concurrency=concurrency, require_token=require_token, checkpoint=checkpoint, decoding=decoding)
    serve_fn(settings_from(), config, progress=RichProgress(err_console), access_log=access_log)


def register(app: typer.Typer) -> None:
    app.command()(handles_errors(serve))
