"""Connecting to Neo4j: the managed server or any Neo4j >= 5.18 through NEO4J_* variables.

A server that is still starting and transient errors are retried (tenacity, bounded, with backoff);
wrong credentials and too-old servers fail at once with one clear line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

import neo4j
from neo4j import GraphDatabase, RoutingControl
from neo4j.exceptions import (
    AuthError,
    ConfigurationError,
    DatabaseUnavailable,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_exponential

from .cypher_store import statement
from .errors import ConnectionFailed
from .server.layout import layout_of
from .settings import MIN_SERVER_VERSION, Settings

T = TypeVar("T")
RETRYABLE = (ServiceUnavailable, SessionExpired, TransientError, DatabaseUnavailable)


@dataclass(frozen=True)
class Target:
    """Where and as whom to connect."""

    uri: str
    username: str
    password: str
    database: str
    managed: bool


def resolve_target(settings: Settings) -> Target:
    if not settings.managed:
        if settings.password is None:
            raise ConnectionFailed(f"NEO4J_PASSWORD is not set for NEO4J_URI={settings.uri}")
        return Target(settings.uri, settings.username, settings.password, settings.database, managed=False)
    layout = layout_of(settings)
    state = layout.read_state() or {}
    port = state.get("bolt_port", settings.bolt_port)
    password = settings.password or layout.read_password()
    if password is None:
        raise ConnectionFailed(
            f"the managed Neo4j in {settings.home} has no password yet: run `gr-neo4j db start` "
            "(or set NEO4J_URI and NEO4J_PASSWORD for another server)"
        )
    return Target(f"bolt://127.0.0.1:{port}", settings.username, password, settings.database, managed=True)


def parse_version(agent: str) -> tuple[int, int]:
    """'Neo4j/5.26.30' -> (5, 26); calendar versions 'Neo4j/2025.01.0' -> (2025, 1)."""
    match = re.search(r"(\d+)\.(\d+)", agent)
    if not match:
        raise ConnectionFailed(f"cannot read the Neo4j version from the server agent {agent!r}")
    return int(match.group(1)), int(match.group(2))


class Connection:
    """An open driver bound to one database; statements are run by their name in `cypher/`."""

    def __init__(self, driver: neo4j.Driver, target: Target, agent: str):
        self.driver = driver
        self.target = target
        self.database = target.database
        self.agent = agent
        self.version = parse_version(agent)

    def read(self, name: str, **params: Any) -> list[neo4j.Record]:
        """Run a named read-only statement (routed to a reader in a cluster)."""
        return self.query(statement(name), params, routing=RoutingControl.READ)

    def write(self, name: str, **params: Any) -> list[neo4j.Record]:
        return self.query(statement(name), params, routing=RoutingControl.WRITE)

    def query(self, cypher: str, params: dict | None = None, routing=RoutingControl.WRITE) -> list[neo4j.Record]:
        records, _, _ = self.driver.execute_query(cypher, params or {}, database_=self.database, routing_=routing)
        return records

    def run_autocommit(self, cypher: str, params: dict | None = None) -> None:
        """For statements that manage their own transactions (`CALL {…} IN TRANSACTIONS`)."""
        with self.driver.session(database=self.database) as session:
            session.run(cypher, params or {}).consume()

    def read_tx(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with self.driver.session(database=self.database) as session:
            return session.execute_read(work)

    def write_tx(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with self.driver.session(database=self.database) as session:
            return session.execute_write(work)

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_driver(target: Target, wait_s: float = 8.0) -> tuple[neo4j.Driver, str]:
    """Open a driver and wait (bounded) until the server answers; returns (driver, agent)."""
    try:
        driver = GraphDatabase.driver(
            target.uri,
            auth=(target.username, target.password),
            connection_timeout=3.0,
            connection_acquisition_timeout=max(wait_s, 5.0),
            max_transaction_retry_time=15.0,
            # Server notifications (e.g. "relationship type ON_GRAPH does not exist" on a database
            # without per-sample datasets) are about query texts we ship, not about the user's data.
            notifications_min_severity="OFF",
        )
    except (ConfigurationError, ValueError) as exc:
        raise ConnectionFailed(f"invalid Neo4j URI {target.uri!r}: {exc}") from None
    try:
        for attempt in Retrying(
            stop=stop_after_delay(wait_s),
            wait=wait_exponential(multiplier=0.2, max=2.0),
            retry=retry_if_exception_type(RETRYABLE),
            reraise=True,
        ):
            with attempt:
                info = driver.get_server_info()
    except AuthError:
        driver.close()
        hint = "the password in GR_NEO4J_HOME/password" if target.managed else "NEO4J_USERNAME/NEO4J_PASSWORD"
        raise ConnectionFailed(f"Neo4j at {target.uri} rejected the credentials of user '{target.username}' (check {hint})") from None
    except RETRYABLE as exc:
        driver.close()
        hint = " (start it with `gr-neo4j db start`)" if target.managed else ""
        raise ConnectionFailed(f"Neo4j at {target.uri} is unreachable after {wait_s:.0f} s{hint}: {_short(exc)}") from None
    return driver, info.agent


def connect(settings: Settings, wait_s: float = 8.0) -> Connection:
    """Connect, check the server version (>= 5.18) and the database, and return a Connection."""
    target = resolve_target(settings)
    driver, agent = open_driver(target, wait_s)
    try:
        require_supported(agent, target.uri)
    except ConnectionFailed:
        driver.close()
        raise
    return Connection(driver, target, agent)


def require_supported(agent: str, uri: str) -> None:
    """Refuse servers older than 5.18, the first with vector indexes on relationships."""
    if parse_version(agent) < MIN_SERVER_VERSION:
        need = ".".join(map(str, MIN_SERVER_VERSION))
        raise ConnectionFailed(f"Neo4j at {uri} is {agent}; gr-neo4j needs Neo4j >= {need} (vector indexes on relationships)")


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:200]
