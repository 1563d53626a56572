"""Write phase: batched `UNWIND … MERGE` on uids, one explicit transaction per batch.

A batch is all or nothing (`execute_write` commits it or rolls it back, retrying transient errors),
and MERGE on the uid constraints makes a repeated or resumed load add nothing twice. Vectors travel
once per distinct text in a batch (`$vectors[row.v]`): a MetaQA batch of 5,000 relationships carries
at most 9 vectors instead of 5,000, and `db.create.set*VectorProperty` stores them as float32.
"""

from __future__ import annotations

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
) -> int:
    """Write `rows` with the named statement in batches; returns how many rows were written."""
    cypher = statement(name)
    written = 0
    for start in range(0, len(rows), batch_size):
        batch = list(rows[start : start + batch_size])
        params = {"dataset": dataset, "rows": batch}
        if vectors is not None:
            params["rows"], params["vectors"] = _with_vectors(batch, vectors)

        def work(tx, params=params):
            return tx.run(cypher, params).single()["written"]

        count = conn.write_tx(work)
        if count != len(batch):
            raise WriteMismatch(
                f"statement {name} wrote {count} of {len(batch)} rows (first uid {batch[0].get('uid')!r}); "
                "the batch was rolled back"
            )
        written += count
        if advance:
            advance(len(batch))
    return written


def _with_vectors(batch: list[dict], vectors: TextVectors) -> tuple[list[dict], list[list[float]]]:
    """Rows with `v` = index into the batch's own list of distinct vectors."""
    rows_in_matrix = vectors.rows_of([row["text"] for row in batch])
    distinct, local = np.unique(rows_in_matrix, return_inverse=True)
    table = vectors.matrix[distinct].tolist()
    rows = [{**row, "v": int(v)} for row, v in zip(batch, local)]
    return rows, table
