"""Shared helpers of the CLI: consoles, settings from options, error handling."""

from __future__ import annotations

import functools
from typing import Callable

import typer
from rich.console import Console

from ..errors import GrNeo4jError
from ..settings import Settings, load_settings

console = Console()
err_console = Console(stderr=True)


def fail(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(1)


def handles_errors(fn: Callable) -> Callable:
    """Turn library errors into one line on stderr and exit code 1 (no stack trace)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except GrNeo4jError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            fail("interrupted")

    return wrapper


def settings_from(**overrides) -> Settings:
    try:
        return load_settings(**overrides)
    except GrNeo4jError as exc:
        fail(str(exc))
        raise  # unreachable


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
