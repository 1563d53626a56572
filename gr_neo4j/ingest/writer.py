"""Write phase: batched `UNWIND … MERGE` on uids, one explicit transaction per batch.

A batch is all or nothing (`execute_write` commits it or rolls it back, retrying transient errors),
and MERGE on the uid constraints makes a repeated or resumed load add nothing twice. Vectors travel
once per distinct text in a batch (`$vectors[row.v]`): a MetaQA batch of 5,000 relationships carries
at most 9 vectors instead of 5,000, and `db.create.set*VectorProperty` stores them as float32.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..connection import Connection
from ..cypher_store import statement
from ..errors import GrNeo4jError
from .embed import TextVectors


class WriteMismatch(GrNeo4jError):
    """A batch wrote fewer rows than it carried (its transaction was rolled back)."""


# What a statement creates, as counted by the server: MERGE on a uid that another load (or an
# interrupted one) wrote meanwhile matches instead of creating, and must not count as new.
CREATED = {"load_rels": "relationships_created"}


@dataclass(frozen=True)
class Written:
    """Rows a statement wrote (merged), and how many of them it created (the rest existed)."""

    rows: int = 0
    created: int = 0

    def __add__(self, other: Written) -> Written:
        return Written(self.rows + other.rows, self.created + other.created)


def write_rows(
    conn: Connection,
    name: str,
    rows: Sequence[dict],
    dataset: str,
    batch_size: int,
    vectors: TextVectors | None = None,
    advance: Callable[[int], None] | None = None,
    workers: int = 1,
) -> Written:
    """Write `rows` with the named statement in batches; returns how many rows were written and,
    from the server's counters, how many nodes or relationships were created.

    `workers` > 1 runs that many batches at once, each in its own transaction: only for rows that
    never lock the same node (entities with distinct uids), since concurrent relationship batches
    share hub nodes and would deadlock.
    """
    cypher = statement(name)
    counter = CREATED.get(name, "nodes_created")

    def run(tx, params: dict) -> Written:
        result = tx.run(cypher, params)
        count = result.single()["written"]
        return Written(count, getattr(result.consume().counters, counter))

    def write_batch(start: int) -> Written:
        batch = list(rows[start : start + batch_size])
        params = {"dataset": dataset, "rows": batch}
        if vectors is not None:
            params["rows"], params["vectors"] = _with_vectors(batch, vectors)
        done = conn.write_tx(lambda tx: run(tx, params))
        if done.rows != len(batch):
            raise WriteMismatch(
                f"statement {name} wrote {done.rows} of {len(batch)} rows (first uid {batch[0].get('uid')!r}); "
                "the batch was rolled back"
            )
        return done

    starts = range(0, len(rows), batch_size)
    written = Written()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for done in pool.map(write_batch, starts):  # in order; the first failure is raised here
            written += done
            if advance:
                advance(done.rows)
    return written


def _with_vectors(batch: list[dict], vectors: TextVectors) -> tuple[list[dict], list[list[float]]]:
    """Rows with `v` = index into the batch's own list of distinct vectors."""
    rows_in_matrix = vectors.rows_of([row["text"] for row in batch])
    distinct, local = np.unique(rows_in_matrix, return_inverse=True)
    table = vectors.matrix[distinct].tolist()
    rows = [{**row, "v": int(v)} for row, v in zip(batch, local)]
    return rows, table
