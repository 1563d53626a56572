"""`gr-neo4j stats` and `gr-neo4j drop`: what each dataset has in Neo4j, and removing one.

Drops run as `CALL {…} IN TRANSACTIONS` (batches of 10,000) so deleting a large knowledge graph
never needs one huge transaction; every statement filters on the dataset, so other datasets are
untouched. An interrupted drop leaves the Dataset node marked 'dropping' and can be run again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..connection import Connection, connect
from ..cypher_store import statement
from ..settings import Settings
from .records import MissingInput


@dataclass(frozen=True)
class DatasetStats:
    """What one dataset has in the database."""

    name: str
    kind: str | None
    status: str | None
    embedder: str | None
    dimension: int | None
    loaded_at: str | None
    entities: int
    entities_embedded: int
    relationships: int
    relationships_embedded: int
    graphs: int
    questions_by_split: dict[str, int] = field(default_factory=dict)

    @property
    def questions(self) -> int:
        return sum(self.questions_by_split.values())


def read_quietly(conn: Connection, name: str, **params) -> list:
    """A named read that may run before `db init` (fresh database): "unknown label" notices are noise there."""
    with conn.driver.session(database=conn.database, notifications_min_severity="OFF") as session:
        return list(session.run(statement(name), params))


def stats_of(conn: Connection) -> list[DatasetStats]:
    out = []
    for r in read_quietly(conn, "stats_datasets"):
        d = r["dataset"]
        out.append(
            DatasetStats(
                name=d["name"],
                kind=d.get("kind"),
                status=d.get("status"),
                embedder=d.get("embedder"),
                dimension=d.get("dimension"),
                loaded_at=d.get("loaded_at"),
                entities=r["entities"],
                entities_embedded=r["entities_embedded"],
                relationships=r["relationships"],
                relationships_embedded=r["relationships_embedded"],
                graphs=r["graphs"],
                questions_by_split={split: n for split, n in r["splits"]},
            )
        )
    return out


def dataset_stats(settings: Settings) -> list[DatasetStats]:
    """One entry per loaded (or partly loaded) dataset, sorted by name."""
    with connect(settings) as conn:
        return stats_of(conn)


def drop_from(conn: Connection, name: str) -> DatasetStats:
    """Delete one dataset's questions, relationships, entities, graphs and Dataset node."""
    before = {s.name: s for s in stats_of(conn)}
    if name not in before:
        known = ", ".join(sorted(before)) or "none"
        raise MissingInput(f"no dataset named {name!r} in the database (loaded: {known})")
    conn.write("drop_mark", dataset=name)
    for step in ("drop_questions", "drop_rels", "drop_entities", "drop_graphs"):
        conn.run_autocommit(statement(step), {"dataset": name})
    conn.write("drop_dataset_node", dataset=name)
    return before[name]


def drop_dataset(settings: Settings, name: str) -> DatasetStats:
    """Remove dataset `name` and nothing else; returns what it had."""
    with connect(settings) as conn:
        return drop_from(conn, name)

