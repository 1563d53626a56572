"""The load's write batches wait on no bookmark and survive transient errors.

A 10x MetaQA load failed after 36 minutes with `BookmarkTimeout`: its concurrent entity writers
shared the driver's bookmark manager, so each batch waited for the server to have applied every
other writer's newest transaction. A bookmark the server has not reached is made here by moving a
real bookmark's transaction id 10**6 ahead: the server waits for it (30 s) and gives up with the
same error, which the writers must neither wait for nor fail on.
"""

from __future__ import annotations

import base64
import time

import numpy as np
import pytest
from neo4j import Bookmarks
from neo4j.exceptions import TransientError

from gr_neo4j.ingest.embed import TextVectors
from gr_neo4j.ingest.lease import DatasetLease
from gr_neo4j.ingest.writer import IndependentSessions, write_rows
from gr_neo4j.schema import init_schema

DIM = 384  # the test embedder's: the vector indexes outlive this test in the session's database
BOOKMARK_TIMEOUT = "Neo.TransientError.Transaction.BookmarkTimeout"


def future_bookmark(conn) -> str:
    """A bookmark of this database 10**6 transactions after the newest one."""
    conn.query("CREATE (:BookmarkProbe)")
    (bookmark,) = conn.driver.execute_query_bookmark_manager.get_bookmarks()
    prefix, body = bookmark.split(":", 1)
    raw = base64.b64decode(body + "=" * (-len(body) % 4))  # standard alphabet, padding dropped
    # Neo4j 5's layout, in PackStream: a list of one (0x91) 16-byte string (0xcc 0x10, the database's
    # id), the transaction id (an integer), an empty list (0x90). The id becomes an INT_32 (0xca).
    assert raw[:3] == b"\x91\xcc\x10" and raw[-1:] == b"\x90", raw.hex()
    ahead = b"\xca" + (10**6).to_bytes(4, "big")
    return prefix + ":" + base64.b64encode(raw[:19] + ahead + raw[-1:]).decode().rstrip("=")


def entity_rows(n: int) -> tuple[list[dict], TextVectors]:
    texts = [f"entity {i}" for i in range(n)]
    rows = [{"uid": f"t||{t}", "graph": "", "key": t, "idx": -1, "text": t} for t in texts]
    matrix = np.eye(n, DIM, dtype=np.float32) + np.float32(0.01)
    return rows, TextVectors({t: i for i, t in enumerate(texts)}, matrix / np.linalg.norm(matrix, axis=1, keepdims=True))


def test_concurrent_writers_wait_on_no_shared_bookmark(conn):
    init_schema(conn, DIM)
    future = future_bookmark(conn)
    manager = conn.driver.execute_query_bookmark_manager
    manager.update_bookmarks((), [future])  # as if another writer had committed far ahead
    rows, vectors = entity_rows(40)

    began = time.monotonic()
    written = write_rows(conn, "load_entities", rows, "t", batch_size=5, vectors=vectors, workers=4)
    assert written.rows == 40 and written.created == 40
    assert time.monotonic() - began < 25, "a writer waited for the shared bookmark"

    # The batches' bookmarks reached the shared manager (for the reads that follow a write phase).
    published = manager.get_bookmarks() - {future}
    assert len(published) >= 2
    with conn.driver.session(database=conn.database, bookmarks=Bookmarks.from_raw_values(published)) as session:
        got = session.run("MATCH (e:Entity {dataset: 't'}) WHERE e.embedding IS NOT NULL RETURN count(e) AS n").single()["n"]
    assert got == 40


def test_a_transient_error_runs_the_batch_again(conn):
    future = future_bookmark(conn)
    errors: list[str] = []

    def work(tx):
        if not errors:  # first attempt: a real BookmarkTimeout from the server, inside the transaction
            try:
                with conn.driver.session(database=conn.database, bookmarks=Bookmarks.from_raw_values([future])) as other:
                    other.run("RETURN 1").consume()
            except TransientError as exc:
                errors.append(exc.code)
                raise
            pytest.fail("the server did not wait for a bookmark 10**6 transactions ahead")
        return tx.run("CREATE (p:RetryProbe) RETURN count(p) AS n").single()["n"]

    sessions = IndependentSessions(conn)
    assert sessions.write(work) == 1
    assert errors == [BOOKMARK_TIMEOUT]
    assert conn.read_tx(lambda tx: tx.run("MATCH (p:RetryProbe) RETURN count(p) AS n").single()["n"]) == 1


def test_the_claims_heartbeat_waits_on_no_shared_bookmark(conn):
    init_schema(conn, DIM)
    lease = DatasetLease(conn, "t")
    lease.acquire("knowledge-graph", "test-embedder", DIM)
    conn.driver.execute_query_bookmark_manager.update_bookmarks((), [future_bookmark(conn)])
    began = time.monotonic()
    assert lease.heartbeat()
    assert time.monotonic() - began < 25, "the heartbeat waited for the shared bookmark"
