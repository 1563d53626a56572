"""Write phase: batched `UNWIND … MERGE` on uids, one explicit transaction per batch.

A batch is all or nothing (`execute_write` commits it or rolls it back), and MERGE on the uid
constraints makes a repeated or resumed load add nothing twice, so a batch that fails with a
transient error is simply run again (`BATCH_RETRY`), beyond the driver's own 15 s of retries.

Batches are independent: each runs in a session of its own that starts from no bookmark and
reports to no bookmark manager. With the driver's shared manager, each batch's transaction would
wait until the server had applied every transaction up to the newest bookmark of any writer; the
server's "applied up to" mark is gap-free, so under heavy load one slow vector-index update of a
concurrent writer held the others back until `BookmarkTimeout` (a 10x MetaQA load failed so after
36 minutes). Writes need no bookmarks (they run on the server, or the cluster leader, that holds
every committed write); the reads after the write phase do, so the batches' bookmarks are handed
to the shared manager once all of them are done. Vectors travel
once per distinct text in a batch (`$vectors[row.v]`): a MetaQA batch of 5,000 relationships carries
at most 9 vectors instead of 5,000, and `db.create.set*VectorProperty` stores them as float32.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import neo4j
import numpy as np
from neo4j.exceptions import TransientError
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from ..connection import Connection
from ..cypher_store import statement
from ..errors import WriteMismatch
from .embed import TextVectors

T = TypeVar("T")


# What a statement creates, as counted by the server: MERGE on a uid that another load (or an
# interrupted one) wrote meanwhile matches instead of creating, and must not count as new.
CREATED = {"load_rels": "relationships_created"}
# A batch that fails with a transient error (deadlock, lock or bookmark timeout, a busy server) is
# run again up to this many times in all, with backoff: a load of an hour must not fail on one.
BATCH_ATTEMPTS = 6
BATCH_RETRY_WAIT_S = (1.0, 30.0)  # first and longest wait between attempts


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
    sessions = IndependentSessions(conn)

    def run(tx, params: dict) -> Written:
        result = tx.run(cypher, params)
        count = result.single()["written"]
        return Written(count, getattr(result.consume().counters, counter))

    def write_batch(start: int) -> Written:
        batch = list(rows[start : start + batch_size])
        params = {"dataset": dataset, "rows": batch}
        if vectors is not None:
            params["rows"], params["vectors"] = _with_vectors(batch, vectors)
        done = sessions.write(lambda tx: run(tx, params))
        if done.rows != len(batch):
            raise WriteMismatch(
                f"statement {name} wrote {done.rows} of {len(batch)} rows (first uid {batch[0].get('uid')!r}); "
                "the batch was rolled back"
            )
        return done

    starts = range(0, len(rows), batch_size)
    written = Written()
    try:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            for done in pool.map(write_batch, starts):  # in order; the first failure is raised here
                written += done
                if advance:
                    advance(done.rows)
    finally:
        sessions.publish()  # also after a failure: what was committed is for later reads to see
    return written


class IndependentSessions:
    """Write transactions that wait on no other transaction's bookmark (see the module's docstring);
    `publish()` hands their bookmarks to the connection's shared manager, so that the next
    `execute_query` (a read included) sees every batch. Thread-safe: one session per transaction."""

    def __init__(self, conn: Connection):
        self.conn = conn
        self._bookmarks: set[str] = set()
        self._lock = threading.Lock()

    def write(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        """`work` in a write transaction of its own, run again on a transient error (BATCH_ATTEMPTS)."""
        for attempt in Retrying(
            stop=stop_after_attempt(BATCH_ATTEMPTS),
            wait=wait_exponential(multiplier=BATCH_RETRY_WAIT_S[0], max=BATCH_RETRY_WAIT_S[1]),
            retry=retry_if_exception(_transient),
            reraise=True,
        ):
            with attempt, self.conn.driver.session(database=self.conn.database, bookmark_manager=None) as session:
                result = session.execute_write(work)
                bookmarks = session.last_bookmarks().raw_values
        with self._lock:
            self._bookmarks.update(bookmarks)
        return result

    def publish(self) -> None:
        """Add the bookmarks of the transactions written so far to the connection's shared manager."""
        with self._lock:
            new, self._bookmarks = self._bookmarks, set()
        if new:
            # Nothing is replaced: these transactions began from no bookmark.
            self.conn.driver.execute_query_bookmark_manager.update_bookmarks((), new)


def _with_vectors(batch: list[dict], vectors: TextVectors) -> tuple[list[dict], list[list[float]]]:
    """Rows with `v` = index into the batch's own list of distinct vectors."""
    rows_in_matrix = vectors.rows_of([row["text"] for row in batch])
    distinct, local = np.unique(rows_in_matrix, return_inverse=True)
    table = vectors.matrix[distinct].tolist()
    rows = [{**row, "v": int(v)} for row, v in zip(batch, local)]
    return rows, table


def _transient(exc: BaseException) -> bool:
    """A transient error the driver deems worth retrying (a terminated transaction is not)."""
    return isinstance(exc, TransientError) and exc.is_retryable()
