"""Configuration: environment variables over `$GR_NEO4J_HOME/config.toml` over defaults.

Environment variables (all optional):

=====================  ==========================================================
NEO4J_URI              an external Neo4j (``neo4j://``, ``neo4j+s://``, ``bolt://``);
                       unset means the managed local server
NEO4J_USERNAME         default ``neo4j``
NEO4J_PASSWORD         unset means the generated password of the managed server
NEO4J_DATABASE         default ``neo4j``
GR_NEO4J_HOME          home of the managed server, models cache, config
GR_NEO4J_DIST          where the Neo4j distribution is installed (default HOME/dist)
GR_NEO4J_BOLT_PORT     managed server Bolt port (7687)
GR_NEO4J_HTTP_PORT     managed server HTTP/Browser port (7474)
GR_NEO4J_HEAP          managed server max heap (2g)
GR_NEO4J_PAGECACHE     managed server page cache (2g)
GR_NEO4J_EMBEDDER      embedding model: a Hugging Face id or a local path
GR_NEO4J_LLM           LLM: a Hugging Face id or a local path
=====================  ==========================================================

GR_NEO4J_EMBEDDER_BACKEND says what runs the embedding model: ``onnx-int8``, ``onnx`` or ``torch``
(default: torch where an NVIDIA GPU is present, else onnx).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from platformdirs import user_data_dir

from .errors import BadInput, UsageError

# Newest 5.26 LTS patch that Maven Central serves; a Maven version range.
NEO4J_VERSION_RANGE = "[5.26.0,5.27.0)"
NEO4J_BROWSER_VERSION = "5.24.0"
# Scoped subqueries `CALL (x) { ... }`, used by many of the statements in cypher/, arrive in 5.23
# (relationship vector indexes, also needed, in 5.18).
MIN_SERVER_VERSION = (5, 23)

_ENV = {
    "uri": "NEO4J_URI",
    "username": "NEO4J_USERNAME",
    "password": "NEO4J_PASSWORD",
    "database": "NEO4J_DATABASE",
    "home": "GR_NEO4J_HOME",
    "dist_dir": "GR_NEO4J_DIST",
    "bolt_port": "GR_NEO4J_BOLT_PORT",
    "http_port": "GR_NEO4J_HTTP_PORT",
    "heap": "GR_NEO4J_HEAP",
    "pagecache": "GR_NEO4J_PAGECACHE",
    "embedder": "GR_NEO4J_EMBEDDER",
    "embedder_backend": "GR_NEO4J_EMBEDDER_BACKEND",
    "llm": "GR_NEO4J_LLM",
}


@dataclass(frozen=True)
class Settings:
    home: Path
    dist_dir: Path
    uri: str | None = None
    username: str = "neo4j"
    password: str | None = None
    database: str = "neo4j"
    bolt_port: int = 7687
    http_port: int = 7474
    heap: str = "2g"
    pagecache: str = "2g"
    neo4j_version: str = NEO4J_VERSION_RANGE
    embedder: str | None = None
    embedder_backend: str | None = None  # a gr_neo4j.defaults.EmbedderBackend value; None: the default
    llm: str | None = None

    @property
    def managed(self) -> bool:
        """True when gr-neo4j runs the server itself (no NEO4J_URI given)."""
        return not self.uri

    @property
    def config_file(self) -> Path:
        return self.home / "config.toml"

    @property
    def cache_dir(self) -> Path:
        """Converted models and other derived files."""
        return self.home / "cache"

    def with_(self, **changes) -> Settings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def load_settings(**overrides) -> Settings:
    """Build the settings: explicit overrides > environment > config.toml > defaults."""
    home = Path(overrides.get("home") or os.environ.get("GR_NEO4J_HOME") or user_data_dir("gr-neo4j"))
    values: dict = {}
    config_file = home / "config.toml"
    if config_file.is_file():
        try:
            data = tomllib.loads(config_file.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise BadInput(f"{config_file}: invalid TOML: {exc}") from None
        known = {f.name for f in fields(Settings)}
        for key, value in data.items():
            if key not in known:
                raise BadInput(f"{config_file}: unknown setting '{key}' (known: {', '.join(sorted(known))})")
            values[key] = value
    for key, var in _ENV.items():
        if os.environ.get(var):
            values[key] = os.environ[var]
    values.update({k: v for k, v in overrides.items() if v is not None})
    values["home"] = home
    values["dist_dir"] = Path(values.get("dist_dir") or home / "dist")
    for key in ("bolt_port", "http_port"):
        if key in values:
            try:
                values[key] = int(values[key])
            except ValueError:
                raise UsageError(f"{_ENV[key]} must be a port number, got {values[key]!r}") from None
    return Settings(**values)
