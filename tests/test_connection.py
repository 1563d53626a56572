"""Version parsing, the minimum server version, and bookmarks shared by sessions and execute_query."""

import inspect

import pytest

from gr_neo4j.connection import Connection, parse_version, require_supported
from gr_neo4j.errors import ConnectionFailed


@pytest.mark.parametrize(
    "agent, version",
    [("Neo4j/5.26.30", (5, 26)), ("Neo4j/5.18.0", (5, 18)), ("Neo4j/5.27-aura", (5, 27)), ("Neo4j/2025.01.0", (2025, 1))],
)
def test_parse_version(agent, version):
    assert parse_version(agent) == version


@pytest.mark.parametrize("agent", ["Neo4j/5.26.30", "Neo4j/5.23.0", "Neo4j/2025.10.1"])
def test_supported_versions_pass(agent):
    require_supported(agent, "bolt://x")


@pytest.mark.parametrize("agent", ["Neo4j/5.22.0", "Neo4j/5.18.1", "Neo4j/4.4.40"])
def test_old_versions_are_refused(agent):
    # 5.18-5.22 have relationship vector indexes but reject `CALL (x) { ... }`; the message says so.
    with pytest.raises(ConnectionFailed, match=r"needs Neo4j >= 5\.23 \(its Cypher uses scoped subqueries"):
        require_supported(agent, "bolt://x")


@pytest.mark.parametrize("how", ["write_tx", "run_autocommit"])
def test_sessions_share_the_execute_query_bookmarks(conn, how):
    """A session from Connection starts from execute_query's bookmarks and reports its commit back.

    The driver's manager replaces the bookmarks a transaction began from with the one it committed;
    a session outside the manager would leave the manager's bookmark as it was.
    """
    manager = conn.driver.execute_query_bookmark_manager
    conn.query("CREATE (:BookmarkProbe {n: 0})")  # through execute_query
    after_query = manager.get_bookmarks()
    assert len(after_query) == 1
    if how == "write_tx":
        conn.write_tx(lambda tx: tx.run("MATCH (p:BookmarkProbe) SET p.n = 1").consume())
    else:
        conn.run_autocommit("MATCH (p:BookmarkProbe) SET p.n = 1")
    after_session = manager.get_bookmarks()
    assert len(after_session) == 1 and after_session != after_query
    with conn.session(read=True) as session:
        assert session.run("MATCH (p:BookmarkProbe) RETURN p.n AS n").single()["n"] == 1
    assert conn.read_tx(lambda tx: tx.run("MATCH (p:BookmarkProbe) RETURN p.n AS n").single()["n"]) == 1


def test_a_statement_may_take_a_name_parameter():
    # conn.write("schema_x", name=...) must reach the statement, not clash with the statement's name.
    for method in (Connection.read, Connection.write):
        assert inspect.signature(method).parameters["name"].kind is inspect.Parameter.POSITIONAL_ONLY
