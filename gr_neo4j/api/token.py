"""The bearer token of `gr-neo4j serve`, made the way the Neo4j password is: generated once with
``secrets``, kept in a 0600 file in the gr-neo4j home, never printed or logged. Clients send it as
``Authorization: Bearer <token>``."""

from __future__ import annotations

import secrets
from pathlib import Path

from ..home.layout import layout_of
from ..settings import Settings

TOKEN_FILE = "api-token"


def token_file(settings: Settings) -> Path:
    return settings.home / TOKEN_FILE


def read_or_create_token(settings: Settings) -> str:
    """The stored token, or a new one written to a 0600 file first."""
    path = token_file(settings)
    if path.is_file():
        token = path.read_text().strip()
        if token:
            return token
    token = secrets.token_urlsafe(32)
    settings.home.mkdir(parents=True, exist_ok=True)
    layout_of(settings).write_private(path, token + "\n")
    return token


def token_matches(header: str | None, token: str) -> bool:
    """Whether an Authorization header carries ``token`` (compared in constant time)."""
    if not header:
        return False
    scheme, _, value = header.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(value.strip().encode(), token.encode())
