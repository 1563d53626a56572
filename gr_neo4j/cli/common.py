"""Shared helpers of the CLI: consoles, shared options, settings from options."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console, ConsoleDimensions

from ..defaults import Decoding
from ..settings import Settings, load_settings

# Width of stdout when it is not a terminal: wide enough that no table cell and no line is cut or
# wrapped (rich would otherwise take 80 columns, or the width of a terminal on stderr or stdin).
PIPE_WIDTH = 100_000


class _Stdout(Console):
    """stdout's console: the terminal's width on a terminal; on a pipe or a file, every table cell
    whole and every line unbroken, whatever COLUMNS or a terminal on stderr says."""

    def _size(self) -> ConsoleDimensions:
        isatty = getattr(self.file, "isatty", None)
        try:
            tty = bool(isatty and isatty())
        except ValueError:  # a closed file
            tty = False
        return Console.size.fget(self) if tty else ConsoleDimensions(PIPE_WIDTH, 25)

    size = property(_size, Console.size.fset)


console = _Stdout()
err_console = Console(stderr=True)

DECODING = typer.Option(
    Decoding.AUTO, "--decoding",
    help="auto: only node texts of the subgraph (or 'not in the graph') on knowledge graphs, only the labels on ExplaGraphs; free: any text, as the paper.",
)

JSON = typer.Option(False, "--json", help="Print the result as one JSON document on stdout, nothing else (progress and notes on stderr).")


def print_json(document) -> None:
    """``document`` (a library result's to_json()) as the only thing on stdout."""
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def settings_from(**overrides) -> Settings:
    """The settings, with ``overrides`` from options (an error in them ends the command through
    :func:`~.errors.handles_errors`, as every library error does)."""
    return load_settings(**overrides)


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
