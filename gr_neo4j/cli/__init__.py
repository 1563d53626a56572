"""The `gr-neo4j` command: a thin typer shell over the Python API.

Each sub-module registers its commands; every command calls one public library function and only
formats its result. Errors of the library (GrNeo4jError) end as one red line and exit code 1.
"""

from __future__ import annotations

import warnings

import typer
from typer.core import TyperGroup

# Deprecation notices of torch internals (torch.jit in PyG) are for library authors, not CLI users.
warnings.filterwarnings("ignore", category=FutureWarning, module=r"torch(\.|$)")

from . import data, db, models, retrieval, serve, train
from .errors import check_arguments


class _Root(TyperGroup):
    """The root command group: refuses arguments that are not UTF-8 before anything parses them."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        check_arguments(args)
        return super().parse_args(ctx, args)


app = typer.Typer(
    name="gr-neo4j",
    cls=_Root,
    help="G-Retriever on Neo4j: load textual graphs, retrieve subgraphs with PCST, answer with a GNN + LLM.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"gr-neo4j {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """G-Retriever on Neo4j: load textual graphs, retrieve subgraphs with PCST, answer with a GNN + LLM."""


app.add_typer(db.app, name="db")
data.register(app)
models.register(app)
retrieval.register(app)
serve.register(app)
train.register(app)

