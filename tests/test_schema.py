"""`db init`: constraints and indexes created once, vector search works, dimension checked."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from gr_neo4j.errors import SchemaError
from gr_neo4j.schema import ENTITY_VECTOR_INDEX, FULLTEXT_INDEX, REL_VECTOR_INDEX, init_schema, vector_dimension


@pytest.fixture()
def bare(conn):
    """A database without any constraint or index of ours."""

    def drop_all():
        for r in conn.query("SHOW CONSTRAINTS YIELD name RETURN name"):
            conn.query(f"DROP CONSTRAINT `{r['name']}`")
        for r in conn.query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"):
            conn.query(f"DROP INDEX `{r['name']}`")

    drop_all()
    yield conn
    drop_all()


def index_names(conn) -> Counter:
    return Counter(r["name"] for r in conn.query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name"))


def test_init_twice_leaves_one_of_each(bare):
    first = init_schema(bare, 8)
    assert {ENTITY_VECTOR_INDEX, REL_VECTOR_INDEX, FULLTEXT_INDEX, "entity_uid", "rel_uid"} <= set(first.created)
    after_first = index_names(bare)
    second = init_schema(bare, 8)
    assert second.created == []
    after_second = index_names(bare)
    assert after_first == after_second
    assert all(count == 1 for count in after_second.values())
    constraints = [r["name"] for r in bare.query("SHOW CONSTRAINTS YIELD name RETURN name")]
    assert sorted(constraints) == sorted(set(constraints))
    assert vector_dimension(bare) == 8


def test_vector_query_returns_the_nearest_first(bare):
    init_schema(bare, 4)
    vectors = {"north": [0.0, 1.0, 0.0, 0.0], "east": [1.0, 0.0, 0.0, 0.0], "north-east": [0.7, 0.7, 0.1, 0.0]}
    bare.query(
        "UNWIND $rows AS row CREATE (n:Entity {uid: row.key, key: row.key, dataset: 't', graph: ''}) "
        "WITH n, row CALL db.create.setNodeVectorProperty(n, 'embedding', row.vec)",
        {"rows": [{"key": k, "vec": v} for k, v in vectors.items()]},
    )
    bare.query("CALL db.awaitIndexes(60)")
    query = (np.array([0.1, 0.9, 0.0, 0.0]) / np.linalg.norm([0.1, 0.9, 0.0, 0.0])).tolist()
    rows = bare.query(
        "CALL db.index.vector.queryNodes($index, 3, $q) YIELD node, score RETURN node.key AS key, score",
        {"index": ENTITY_VECTOR_INDEX, "q": query},
    )
    assert [r["key"] for r in rows] == ["north", "north-east", "east"]
    assert rows[0]["score"] > rows[1]["score"] > rows[2]["score"]


def test_dimension_mismatch_is_refused(bare):
    init_schema(bare, 4)
    with pytest.raises(SchemaError, match="dimension 4 but the embedding model gives 384"):
        init_schema(bare, 384)
    assert vector_dimension(bare) == 4
