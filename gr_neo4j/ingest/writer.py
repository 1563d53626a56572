"""Write phase: batched `UNWIND … MERGE` on uids, one explicit transaction per batch.

A batch is all or nothing (`execute_write` commits it or rolls it back, retrying transient errors),
and MERGE on the uid constraints makes a repeated or resumed load add nothing twice. Vectors travel
once per distinct text in a batch (`$vectors[row.v]`): a MetaQA batch of 5,000 relationships carries
at most 9 vectors instead of 5,000, and `db.create.set*VectorProperty` stores them as float32.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import numpy as np

from ..connection import Connection
from ..cypher_store import statement
from ..errors import GrNeo4jError
from .embed import TextVectors


class WriteMismatch(GrNeo4jError):
    """A batch wrote fewer rows than it carried (its transaction was rolled back)."""


def write_rows(
    conn: Connection,
    name: str,
    rows: Sequence[dict],
    dataset: str,
    batch_size: int,
    vectors: TextVectors | None = None,
    advance: Callable[[int], None] | None = None,
    workers: int = 1,
) -> int:
    """Write `rows` with the named statement in batches; returns how many rows were written.

    `workers` > 1 runs that many batches at once, each in its own transaction: only for rows that
    never lock the same node (entities with distinct uids), since concurrent relationship batches
    share hub nodes and would deadlock.
    """
    cypher = statement(name)

    def write_batch(start: int) -> int:
        batch = list(rows[start : start + batch_size])
        params = {"dataset": dataset, "rows": batch}
        if vectors is not None:
            params["rows"], params["vectors"] = _with_vectors(batch, vectors)
        count = conn.write_tx(lambda tx: tx.run(cypher, params).single()["written"])
        if count != len(batch):
            raise WriteMismatch(
                f"statement {name} wrote {count} of {len(batch)} rows (first uid {batch[0].get('uid')!r}); "
                "the batch was rolled back"
            )
        return count

    starts = range(0, len(rows), batch_size)
    written = 0
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for count in pool.map(write_batch, starts):  # in order; the first failure is raised here
            written += count
            if advance:
                advance(count)
    return written


def _with_vectors(batch: list[dict], vectors: TextVectors) -> tuple[list[dict], list[list[float]]]:
    """Rows with `v` = index into the batch's own list of distinct vectors."""
    rows_in_matrix = vectors.rows_of([row["text"] for row in batch])
    distinct, local = np.unique(rows_in_matrix, return_inverse=True)
    table = vectors.matrix[distinct].tolist()
    rows = [{**row, "v": int(v)} for row, v in zip(batch, local)]
    return rows, table
