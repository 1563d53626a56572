"""`gr-neo4j models`: which embedding model and LLM are in use, and where they come from."""

from __future__ import annotations

import typer
from rich.table import Table

from ..embedder import embedder_source
from .common import console, handles_errors, settings_from


def register(app: typer.Typer) -> None:
    app.command("models")(models)


@handles_errors
def models() -> None:
    """Show the embedding model and the LLM in use and where their weights come from."""
    settings = settings_from()
    table = Table("role", "model", "origin", "location")
    src = embedder_source(settings)
    table.add_row("embedder", src.name, src.origin, src.location)
    console.print(table)
