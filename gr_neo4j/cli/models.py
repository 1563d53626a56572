"""`gr-neo4j models`: which embedding model and LLM are in use, and where they come from."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from .common import JSON, console, err_console, print_json, settings_from
from .errors import handles_errors
from .progress import RichProgress

if TYPE_CHECKING:  # model_info imports the LLM stack: only when the command runs (see gr_neo4j.answer)
    from ..model_info import ModelInfo


def register(app: typer.Typer) -> None:
    app.command("models")(models)


@handles_errors
def models(as_json: bool = JSON) -> None:
    """Show the embedding model and the LLM in use, where their weights come from and their size.

    The first run converts the embedded SmolLM2 GGUF into a safetensors cache (once). Exit 1 when
    a model is unavailable.
    """
    from ..model_info import describe_models

    infos = describe_models(settings_from(), RichProgress(err_console))
    if as_json:
        print_json({"models": [info.to_json() for info in infos]})
    else:
        for info in infos:
            _print(info)
    if not all(info.available for info in infos):
        raise typer.Exit(1)


def _print(info: ModelInfo) -> None:
    # Plain key/value lines rather than a table: paths stay whole (copyable) in narrow terminals.
    console.print(f"[bold]{info.role}[/]  {escape(info.name)}", highlight=False, soft_wrap=True)
    rows = {"origin": info.origin, "location": info.location, "size": _size(info), "status": info.status}
    for key, value in rows.items():
        if value:
            style = "red" if key == "status" and not info.available else "default"
            console.print(f"  {key:<9}[{style}]{escape(value)}[/]", highlight=False, soft_wrap=True)


def _size(info: ModelInfo) -> str:
    parts = [info.architecture or ""]
    if info.dimension:
        parts.append(f"{info.dimension}-d embeddings" if info.role == "embedder" else f"hidden size {info.dimension}")
    if info.parameters:
        parts.append(f"{info.parameters / 1e6:.1f}M parameters")
    return ", ".join(p for p in parts if p)
