"""Connecting to Neo4j: the managed server or any Neo4j >= 5.23 through NEO4J_* variables.

A server that is still starting and transient errors are retried (tenacity, bounded, with backoff);
wrong credentials and too-old servers fail at once with one clear line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self, TypeVar
from urllib.parse import urlsplit

import neo4j
from neo4j import GraphDatabase, RoutingControl
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConfigurationError,
    DatabaseUnavailable,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_delay,
    wait_exponential,
)

from .cypher_store import statement
from .errors import ConnectionFailed, driver_text, quoted, shorten
from .home.layout import layout_of
from .home.pid import running_pid
from .settings import MIN_SERVER_VERSION, Settings

T = TypeVar("T")
RETRYABLE = (ServiceUnavailable, SessionExpired, TransientError, DatabaseUnavailable)
RATE_LIMIT = "Neo.ClientError.Security.AuthenticationRateLimit"
DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"


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
    if running_pid(layout) is None:
        # Say so at once: retrying a port that nothing will open only delays the same answer.
        raise ConnectionFailed(f"the managed Neo4j in {settings.home} is not running: run `gr-neo4j db start`")
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

    def read(self, name: str, /, **params: Any) -> list[neo4j.Record]:
        """Run a named read-only statement (routed to a reader in a cluster).

        `name` is positional-only so that a statement may take a `$name` parameter.
        """
        return self.query(statement(name), params, routing=RoutingControl.READ)

    def write(self, name: str, /, **params: Any) -> list[neo4j.Record]:
        return self.query(statement(name), params, routing=RoutingControl.WRITE)

    def query(self, cypher: str, params: dict | None = None, routing=RoutingControl.WRITE) -> list[neo4j.Record]:
        records, _, _ = self.driver.execute_query(cypher, params or {}, database_=self.database, routing_=routing)
        return records

    def session(self, read: bool = False, **config: Any) -> neo4j.Session:
        """A session on this database that shares `execute_query`'s bookmarks (causal consistency).

        `execute_query` (read, write, query) tracks bookmarks in the driver's
        `execute_query_bookmark_manager`; a plain session would not, so on a `neo4j://` cluster a
        read routed to a follower could miss a write made just before. Every session opened here
        starts from that manager's bookmarks and reports its own commits back to it. `read=True`
        routes auto-commit statements to a reader; `config` goes to `driver.session`.
        """
        if read:
            config.setdefault("default_access_mode", neo4j.READ_ACCESS)
        return self.driver.session(database=self.database, bookmark_manager=self.driver.execute_query_bookmark_manager, **config)

    def run_autocommit(self, cypher: str, params: dict | None = None) -> None:
        """For statements that manage their own transactions (`CALL {…} IN TRANSACTIONS`)."""
        with self.session() as session:
            session.run(cypher, params or {}).consume()

    def read_tx(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with self.session(read=True) as session:
            return session.execute_read(work)

    def write_tx(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with self.session() as session:
            return session.execute_write(work)

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_driver(target: Target, wait_s: float = 8.0) -> tuple[neo4j.Driver, str]:
    """Open a driver and wait (bounded) until the server answers; returns (driver, agent)."""
    check_scheme(target.uri)
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
        raise ConnectionFailed(f"invalid Neo4j URI {quoted(target.uri)}: {_short(exc)}") from None
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
        raise ConnectionFailed(
            f"Neo4j at {target.uri} rejected the credentials of user {quoted(target.username)} (check {_credentials(target)})"
        ) from None
    except RETRYABLE as exc:
        driver.close()
        hint = " (start it with `gr-neo4j db start`)" if target.managed else _port_hint(target.uri)
        raise ConnectionFailed(f"Neo4j at {target.uri} is unreachable after {wait_s:.0f} s{hint}: {_short(exc)}") from None
    except Neo4jError as exc:
        driver.close()
        if exc.code == RATE_LIMIT:
            # After dbms.security.auth_max_failed_attempts wrong passwords Neo4j locks the user for
            # dbms.security.auth_lock_time (5 s by default) and says so with this code, not AuthError.
            raise ConnectionFailed(
                f"Neo4j at {target.uri} refuses user {quoted(target.username)} for now: too many failed logins; "
                f"wait a few seconds and check the password ({_credentials(target)})"
            ) from None
        raise
    return driver, info.agent


def check_scheme(uri: str) -> None:
    """Refuse an HTTP address with the fix: the driver only speaks Bolt."""
    scheme = urlsplit(uri).scheme.lower() if "://" in uri else ""
    if scheme in ("http", "https"):
        raise ConnectionFailed(
            f"NEO4J_URI={quoted(uri)} is an HTTP address and gr-neo4j talks Bolt: use bolt:// or neo4j:// (+s for TLS, e.g. neo4j+s://); "
            "7474 is Neo4j's HTTP port, Bolt is 7687"
        )


def connect(settings: Settings, wait_s: float = 8.0) -> Connection:
    """Connect, check the server version (>= 5.23) and the database, and return a Connection."""
    target = resolve_target(settings)
    driver, agent = open_driver(target, wait_s)
    try:
        require_supported(agent, target.uri)
        require_database(driver, target)
    except BaseException:
        driver.close()
        raise
    return Connection(driver, target, agent)


def require_database(driver: neo4j.Driver, target: Target) -> None:
    """Name a missing database at connect time rather than in the first query's error."""
    try:
        driver.execute_query("RETURN 1", database_=target.database, routing_=RoutingControl.READ)
    except ClientError as exc:
        if exc.code != DATABASE_NOT_FOUND:
            raise
        raise ConnectionFailed(
            f"database {quoted(target.database)} does not exist on Neo4j at {target.uri}"
            f"{_databases(driver)}; set NEO4J_DATABASE to one that does"
        ) from None


def _databases(driver: neo4j.Driver) -> str:
    """' (it has: neo4j, system)', or nothing when the user may not list databases."""
    try:
        records, _, _ = driver.execute_query("SHOW DATABASES YIELD name RETURN DISTINCT name ORDER BY name", database_="system")
    except Neo4jError:
        return ""
    return f" (it has: {', '.join(r['name'] for r in records)})" if records else ""


def require_supported(agent: str, uri: str) -> None:
    """Refuse servers older than 5.23: gr-neo4j's statements use scoped subqueries `CALL (x) { ... }`
    (new in 5.23) and vector indexes on relationships (5.18), which older servers reject as syntax
    errors or unknown procedures in the middle of a load or a question."""
    if parse_version(agent) < MIN_SERVER_VERSION:
        need = ".".join(map(str, MIN_SERVER_VERSION))
        raise ConnectionFailed(
            f"Neo4j at {uri} is {agent}; gr-neo4j needs Neo4j >= {need} "
            "(its Cypher uses scoped subqueries `CALL (x) {...}`, new in 5.23, and relationship vector indexes)"
        )


def _credentials(target: Target) -> str:
    if target.managed:
        # NEO4J_PASSWORD or config.toml's password win over the generated one when set.
        return "NEO4J_PASSWORD if set, else the password in GR_NEO4J_HOME/password"
    return "NEO4J_USERNAME/NEO4J_PASSWORD"


def _port_hint(uri: str) -> str:
    try:
        port = urlsplit(uri).port
    except ValueError:
        return ""
    return " (7474 is Neo4j's HTTP port; Bolt is 7687)" if port == 7474 else ""


def _short(exc: Exception) -> str:
    return shorten(driver_text(str(exc)) or type(exc).__name__, 200)
