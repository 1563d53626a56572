"""Errors that the CLI turns into one clear line instead of a stack trace."""

from __future__ import annotations

from pathlib import Path


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
