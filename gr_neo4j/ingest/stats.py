"""`gr-neo4j stats` and `gr-neo4j drop`: what each dataset has in Neo4j, and removing one.

Drops run as `CALL {…} IN TRANSACTIONS` (batches of 10,000) so deleting a large knowledge graph
never needs one huge transaction; every statement filters on the dataset, so other datasets are
untouched. An interrupted drop leaves the Dataset node marked 'dropping' and can be run again. A drop
is refused while a live load holds the dataset (see `lease`), and removes the dataset's recorded
retrievals too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from neo4j.exceptions import TransientError
from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from ..connection import Connection, connect
from ..cypher_store import statement
from ..errors import DatasetBusy, MissingInput
from ..settings import Settings
from .lease import LEASE_S, busy_message, stale_tokens

# Relationships before entities (DETACH DELETE of a hub in one batch would exceed the transaction
# memory); retrievals first, as they link to the entities.
DROP_STEPS = ("drop_retrievals", "drop_questions", "drop_rels", "drop_entities", "drop_graphs")


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

    def to_json(self) -> dict:
        """The fields and the questions' total (`gr-neo4j stats --json`)."""
        return {**asdict(self), "questions": self.questions}


def read_quietly(conn: Connection, name: str, **params) -> list:
    """A named read that may run before `db init` (fresh database): "unknown label" notices are noise there."""
    with conn.session(read=True, notifications_min_severity="OFF") as session:
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


def drop_from(conn: Connection, name: str, confirm: Callable[[DatasetStats], bool] | None = None) -> DatasetStats | None:
    """Delete one dataset's questions, relationships, entities, graphs and Dataset node. ``confirm``,
    if given, sees what the dataset holds first; when it says no, nothing is deleted and the result is None."""
    before = {s.name: s for s in stats_of(conn)}
    if name not in before:
        known = ", ".join(sorted(before)) or "none"
        raise MissingInput(f"no dataset named {name!r} in the database (loaded: {known})")
    if confirm is not None and not confirm(before[name]):
        return None
    row = conn.write("drop_mark", dataset=name, lease_s=LEASE_S, stale_tokens=[])[0]
    dead = [] if row["marked"] else stale_tokens(dict(row))
    if dead:
        row = conn.write("drop_mark", dataset=name, lease_s=LEASE_S, stale_tokens=dead)[0]
    if not row["marked"]:
        raise DatasetBusy(busy_message(name, dict(row), "drop"))
    for step in DROP_STEPS:
        _retrying(lambda step=step: conn.run_autocommit(statement(step), {"dataset": name}))
    conn.write("drop_dataset_node", dataset=name)
    return before[name]


def _retrying(work) -> None:
    """Run a drop step again on a transient error (a deadlock with a concurrent `ask` recording its
    retrieval): every step deletes what is left, so repeating one is safe."""
    for attempt in Retrying(
        stop=stop_after_attempt(5), wait=wait_exponential(multiplier=0.2, max=3.0),
        retry=retry_if_exception_type(TransientError), reraise=True,
    ):
        with attempt:
            work()


def drop_dataset(settings: Settings, name: str, confirm: Callable[[DatasetStats], bool] | None = None) -> DatasetStats | None:
    """Remove dataset `name` and nothing else; returns what it had (None: ``confirm`` said no, see drop_from)."""
    with connect(settings) as conn:
        return drop_from(conn, name, confirm)

