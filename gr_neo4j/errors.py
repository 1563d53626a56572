"""Errors that the CLI turns into one clear line instead of a stack trace."""

from __future__ import annotations

import re
from pathlib import Path

QUOTE_LIMIT = 80


class GrNeo4jError(Exception):
    """A failure with a message meant for the user, optionally pointing at a log file."""

    def __init__(self, message: str, log_path: Path | str | None = None):
        super().__init__(message)
        self.message = message
        self.log_path = Path(log_path) if log_path else None

    def __str__(self) -> str:
        if self.log_path:
            return f"{self.message} (log: {self.log_path})"
        return self.message


class ServerError(GrNeo4jError):
    """The managed Neo4j could not be installed, started or stopped."""


class ConnectionFailed(GrNeo4jError):
    """Neo4j is unreachable, rejects the credentials, or is too old."""


class SchemaError(GrNeo4jError):
    """The database schema disagrees with the configuration (e.g. embedding dimension)."""


def printable(text: str) -> str:
    """Text that any terminal can print: undecodable bytes of a command line or file name
    (kept by Python as lone surrogates) become backslash escapes such as \\xff."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # surrogates that no byte maps to (e.g. from JSON "\ud800")
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def shorten(text: str, limit: int = QUOTE_LIMIT) -> str:
    """Cut text to about `limit` characters, keeping its start and its end (a file name, say)."""
    text = printable(text)
    if len(text) <= limit:
        return text
    tail = max(limit // 4, 1)
    return f"{text[: limit - tail - 1]}…{text[-tail:]}"


def quoted(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A user's value quoted for a message, cut to a readable length."""
    return f"'{shorten(str(value), limit)}'"


_RESOLVED = re.compile(r"\s*\(resolved to \(.*?\)\):?")


def driver_text(text: str) -> str:
    """The first line of a driver message without the "(resolved to ('127.0.0.1:7687',)):" it
    appends to address errors, which tells a user nothing."""
    lines = text.strip().splitlines()
    return _RESOLVED.sub("", lines[0]) if lines else ""
