"""Every error of the library, each named for what the user can do about it.

The CLI prints any of them as one line (exit 1) and the HTTP API as ``{"error": ...}`` (503 for
:class:`TryAgain` and :class:`ConnectionFailed`, else 400), never as a stack trace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

QUOTE_LIMIT = 80
# The exit status of a command ended by Ctrl-C, as a shell reports one ended by SIGINT (128 + 2);
# scripts test for it.
INTERRUPTED = 130


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


class UsageError(GrNeo4jError):
    """An option, argument or request value is wrong: fix it (the message names it and what fits)."""


class MissingInput(GrNeo4jError):
    """A file, directory or model is not where it was said to be, or does not fit the command:
    point at the right one."""


class BadInput(GrNeo4jError):
    """A file's content is malformed: fix it where the message says (file, line). A load that found
    bad records keeps them in ``bad``; nothing of it was written."""

    def __init__(self, message: str, bad: Sequence = ()):
        super().__init__(message)
        self.bad = list(bad)


class NotFound(GrNeo4jError):
    """No dataset, graph, entity, split or recorded retrieval of that name is in the database:
    check the name (the message lists what there is), or load it."""


class NotReady(GrNeo4jError):
    """Something the command builds on was never made: run the command the message names first
    (`db install`, `train-paths`, a training that finishes an epoch...)."""


class CheckpointMismatch(GrNeo4jError):
    """A checkpoint or output directory belongs to another model, objective or prompt version:
    choose the right one, or train again."""


class TryAgain(GrNeo4jError):
    """Busy or interrupted by someone else: run the same command again, later."""


class Busy(TryAgain):
    """Every retriever of the HTTP server stayed busy for the whole queue timeout."""


class DatasetBusy(TryAgain):
    """Another process is loading (or dropping) the dataset right now."""


class LoadInterrupted(TryAgain):
    """The dataset was dropped or taken over while this load ran; nothing was marked complete."""


class WriteMismatch(TryAgain):
    """A batch wrote fewer rows than it carried (its transaction was rolled back)."""


class ServerError(GrNeo4jError):
    """The managed Neo4j could not be installed, started or stopped."""


class ConnectionFailed(GrNeo4jError):
    """Neo4j is unreachable, rejects the credentials, or is too old."""


class SchemaError(GrNeo4jError):
    """The database schema disagrees with the configuration (e.g. embedding dimension)."""


# Signals between parts of the library: each is caught next to where it is raised and turned into
# a retry or one of the errors above, so none reaches a user. They live here so that every
# exception class of the library is found in one module.


class FetchStopped(Exception):
    """Another jar's download failed or the user interrupted: give this one up quietly."""


class ArtifactMismatch(Exception):
    """The bytes received are not the locked jar (size or SHA-1 differ); retried."""


class HttpStatus(Exception):
    """The repository answered with something other than 200 OK; 5xx and 429 are retried."""

    def __init__(self, status: int, reason: str):
        super().__init__(f"HTTP {status} {reason}")
        self.status = status


class StaleVocabulary(KeyError):
    """A candidate relationship has a text the client's relation vocabulary does not know
    (loaded since it was read): the vocabulary is read again."""


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
