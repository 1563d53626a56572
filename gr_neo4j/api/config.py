"""What `gr-neo4j serve` is started with (the dataclass's defaults are the CLI's), and the limits
every request is held to."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from ..defaults import Decoding

# A question longer than this is refused (422): MetaQA's longest is under 200 characters, and the
# embedder reads 256 tokens at most, so a longer one would be cut without the caller knowing.
MAX_QUESTION_CHARS = 1000
# Whole request bodies above this are refused (413) before they are parsed.
MAX_BODY_BYTES = 64 * 1024
MAX_ENTITIES = 16  # topic entities named in one request


@dataclass(frozen=True)
class ServeConfig:
    """host, port: where to listen (port 0: any free port, printed at start).
    concurrency: retrievals that run at once, each on its own Retriever (read session and caches),
        all sharing one driver and one embedder; more requests wait for a free one.
    queue_timeout_s: how long a request waits for a free Retriever before a 503.
    require_token: ask for the bearer token on loopback too (it is always required elsewhere).
    checkpoint, decoding: the model that answers when the LLM answers, fixed for the server's life:
        loaded once (at start with a checkpoint, else on the first request that needs the LLM).
    """

    host: str = "127.0.0.1"
    port: int = 8000
    concurrency: int = 4
    queue_timeout_s: float = 30.0
    require_token: bool = False
    checkpoint: Path | None = None
    decoding: Decoding = Decoding.AUTO

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def token_required(self) -> bool:
        """Anything but a loopback bind is reachable from other machines: only token holders may ask."""
        return self.require_token or not self.loopback


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and 'localhost'; False for names and other addresses (0.0.0.0 too)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
