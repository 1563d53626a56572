"""How the CLI ends on an error: one line on stderr and an exit code, never a stack trace.

Every command is wrapped by :func:`handles_errors`; :func:`fail` is the one way a command stops
with a message of its own.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import signal
from collections.abc import Callable

import typer
from neo4j.exceptions import (
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)
from rich.markup import escape

from ..errors import INTERRUPTED, GrNeo4jError, driver_text, printable, shorten
from ..settings import load_settings
from .common import err_console

# GR_NEO4J_DEBUG=1 lets unexpected exceptions through with their traceback, and the driver's logs.
DEBUG_ENV = "GR_NEO4J_DEBUG"
if not os.environ.get(DEBUG_ENV):
    # The driver logs each retry as a warning, which Python prints to stderr when nothing is
    # configured; the CLI reports the outcome in one line instead.
    logging.getLogger("neo4j").addHandler(logging.NullHandler())
# One error line stays readable however long the argument it quotes (a 100 KB --path or question).
LINE_LIMIT = 400
TOKEN_LIMIT = 120
RESUME = "run it again: loads resume where they stopped"


def fail(message: str, code: int = 1) -> None:
    err_console.print(f"[bold red]error:[/] {escape(one_line(message))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def one_line(message: str) -> str:
    """The message on one printable line, each overlong word and the whole line cut in the middle."""
    text = " ".join(printable(message).split())
    text = re.sub(rf"\S{{{TOKEN_LIMIT + 1},}}", lambda m: shorten(m.group(0), TOKEN_LIMIT), text)
    if len(text) > LINE_LIMIT:  # keep the end: it holds the hint and the log path
        text = f"{text[: LINE_LIMIT - 101]}…{text[-100:]}"
    return text


def handles_errors(fn: Callable) -> Callable:
    """Turn library errors, and Neo4j or file errors that escape the library, into one line on
    stderr and exit code 1 (no stack trace); Ctrl-C into "interrupted" and exit code 130."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        # The entry point ends the process on SIGINT until a command runs (gr_neo4j.__main__);
        # from here Ctrl-C is a KeyboardInterrupt again, so that `finally` blocks clean up.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            return fn(*args, **kwargs)
        except GrNeo4jError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            err_console.print("interrupted", highlight=False)
            raise typer.Exit(INTERRUPTED) from None
        except (Neo4jError, DriverError, OSError) as exc:
            if os.environ.get(DEBUG_ENV):
                raise
            fail(describe_failure(exc))

    return wrapper


def describe_failure(exc: BaseException) -> str:
    """One line for an exception the library did not turn into a GrNeo4jError: what happened, the
    Neo4j error code or class, and what to do."""
    name = type(exc).__name__
    detail = _first_line(exc)
    if isinstance(exc, IncompleteCommit):
        return f"Neo4j stopped while committing ({name}): the last write may or may not be stored; {RESUME}"
    if isinstance(exc, (ServiceUnavailable, SessionExpired)):
        return f"Neo4j stopped or became unreachable during the command ({name}: {detail}); once it is up, {RESUME}"
    if isinstance(exc, Neo4jError):
        code = exc.code
        if code.startswith("Neo.DatabaseError."):
            store = _full_store()
            if store is not None:
                return (
                    f"Neo4j could not write ({code}): the disk of its store {store} is full; free space, "
                    f"restart Neo4j (`gr-neo4j db stop`, `gr-neo4j db start`) and {RESUME}"
                )
        if code.startswith("Neo.DatabaseError.") or code == "Neo.TransientError.General.DatabaseUnavailable":
            return f"Neo4j failed on the server ({code}: {detail}); see its log (`gr-neo4j db logs`), restart it and {RESUME}"
        if code.startswith("Neo.TransientError."):
            return f"Neo4j could not complete the command ({code}: {detail}); {RESUME}"
        return f"Neo4j refused the command ({code}: {detail})"
    if isinstance(exc, DriverError):
        return f"Neo4j driver error ({name}: {detail})"
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename is not None else ""
        return f"{where}{exc.strerror} ({name})"
    return f"{name}: {detail}"


def _full_store():
    """The managed server's store directory if its log says the disk is full, else None."""
    from ..server.process import out_of_disk_space

    try:
        settings = load_settings()
    except GrNeo4jError:
        return None
    return out_of_disk_space(settings) if settings.managed else None


def _first_line(exc: BaseException) -> str:
    message = getattr(exc, "message", None) if isinstance(exc, Neo4jError) else None
    return driver_text(str(message or exc)) or type(exc).__name__


def check_arguments(args: list[str]) -> None:
    """Exit 2 with one line for an argument that is not valid UTF-8.

    Python keeps undecodable bytes of argv as lone surrogates, which fail later, when printed or
    sent to Neo4j, with a UnicodeEncodeError traceback.
    """
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            fail(f"argument '{shorten(arg, 80)}' is not valid UTF-8", code=2)
