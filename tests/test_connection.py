"""Version parsing and the minimum server version."""

import pytest

from gr_neo4j.connection import parse_version, require_supported
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
