"""`gr-neo4j db init`: constraints, range, vector and fulltext indexes, created idempotently.

The vector dimension comes from the configured embedding model; an existing index of another
dimension is an error, because vectors of two sizes can never be compared.
"""

from __future__ import annotations

from dataclasses import dataclass

from .connection import Connection
from .errors import SchemaError

# The data model's own labels and relationship types (docs/design.md): `load neo4j` adopts every
# other node and relationship of the database, and never these.
OWN_LABELS = ("Entity", "Dataset", "Question", "Graph", "Retrieval")
OWN_TYPES = ("REL", "TOPIC", "ANSWER", "RETRIEVED", "ON_GRAPH")

# Index names, here only: the statements that create and query them take them as parameters.
ENTITY_VECTOR_INDEX = "entity_text_embedding"
REL_VECTOR_INDEX = "rel_text_embedding"
FULLTEXT_INDEX = "entity_text_fulltext"

# Named statements in cypher/, in creation order; indexes by name -> the statement creating them.
CONSTRAINTS = ["schema_entity_uid", "schema_rel_uid", "schema_question_uid", "schema_graph_uid", "schema_dataset_name", "schema_retrieval_id"]
RANGE_INDEXES = [
    "schema_entity_dataset_graph", "schema_rel_dataset", "schema_question_dataset_split", "schema_graph_dataset",
    "schema_retrieval_dataset",
]
FULLTEXT_INDEXES = {FULLTEXT_INDEX: "schema_entity_text_fulltext"}
VECTOR_INDEXES = {ENTITY_VECTOR_INDEX: "schema_entity_embedding", REL_VECTOR_INDEX: "schema_rel_embedding"}


@dataclass(frozen=True)
class SchemaReport:
    dimension: int
    created: list[str]


def init_schema(conn: Connection, dimension: int, await_s: int = 120) -> SchemaReport:
    """Create every constraint and index that does not exist yet; return the names created."""
    if dimension <= 0:
        raise SchemaError(f"embedding dimension must be positive, got {dimension}")
    existing = _vector_dimensions(conn)
    for name, dim in existing.items():
        if dim != dimension:
            raise SchemaError(
                f"vector index '{name}' has dimension {dim} but the embedding model gives {dimension}: "
                "the database was loaded with another embedding model; use that model "
                "(GR_NEO4J_EMBEDDER) or drop the data and the index first"
            )
    before = _index_names(conn)
    for statement in CONSTRAINTS + RANGE_INDEXES:
        conn.write(statement)
    for name, statement in FULLTEXT_INDEXES.items():
        conn.write(statement, index=name)
    for name, statement in VECTOR_INDEXES.items():
        conn.write(statement, index=name, dimension=dimension)
    conn.write("schema_await_indexes", timeout_s=await_s)
    created = sorted(_index_names(conn) - before)
    return SchemaReport(dimension=dimension, created=created)


def vector_dimension(conn: Connection) -> int | None:
    """The dimension of the existing vector indexes, or None before `db init`."""
    dims = set(_vector_dimensions(conn).values())
    return dims.pop() if len(dims) == 1 else None


def _vector_dimensions(conn: Connection) -> dict[str, int]:
    """Dimension of every vector index on Entity.embedding or REL.embedding, whatever its name."""
    records = conn.read("schema_vector_dimensions")
    return {r["name"]: int(r["dimension"]) for r in records}


def _index_names(conn: Connection) -> set[str]:
    return {r["name"] for r in conn.read("schema_index_names")}


def ensure_schema(settings, dimension: int | None = None) -> SchemaReport:
    """Connect with `settings` and create the schema for the configured embedder's dimension."""
    from .connection import connect
    from .embedder import load_embedder

    if dimension is None:
        dimension = load_embedder(settings).dimension
    with connect(settings) as conn:
        return init_schema(conn, dimension)
