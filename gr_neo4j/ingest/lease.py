"""One writer per dataset: the claim a load holds on its Dataset node, and what `drop` respects.

A load claims the dataset before it looks for existing rows (`load_lease_acquire`): status 'loading',
a random token, its pid and host, and a heartbeat refreshed by a background thread. While the claim
is live, another load and `drop` of the same dataset are refused with one line; a claim lapses when
its heartbeat is older than `LEASE_S` or, on the same host, at once when its process is gone (a
killed load). The load marks the dataset complete only if it still holds the claim and every input
row is in the database (`load_verify`), so exit 0 always means complete: a dataset dropped or taken
over under a load makes that load fail instead.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from neo4j import RoutingControl
from neo4j.exceptions import DriverError, Neo4jError

from ..connection import Connection
from ..cypher_store import statement
from ..errors import DatasetBusy, LoadInterrupted

LEASE_S = 60  # a claim without a heartbeat for this long is taken to be dead
HEARTBEAT_S = 5.0
# What `load_verify` counts -> the parameter holding the load's uids of that kind.
VERIFIED = {"entities": "entity_uids", "relationships": "rel_uids", "graphs": "graph_uids", "questions": "question_uids"}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stale_tokens(holder: dict) -> list[str]:
    """[holder's token] when the holder ran on this host and its process is gone, else []."""
    token, pid, host = holder.get("token"), holder.get("pid"), holder.get("host")
    if token and pid and host == socket.gethostname() and pid != os.getpid() and not _pid_alive(pid):
        return [token]
    return []


def busy_message(dataset: str, holder: dict, action: str) -> str:
    where = f"pid {holder.get('pid')} on {holder.get('host')}" if holder.get("pid") else "another process"
    idle = holder.get("idle_s")
    since = f", last progress {idle} s ago" if idle is not None else ""
    return (
        f"cannot {action} {dataset!r}: it is being loaded by {where}{since}; wait for that load to end or stop it "
        f"(a stopped load's claim lapses after {LEASE_S} s), then {action} again"
    )


class DatasetLease:
    """A load's claim on one dataset; `heartbeat()` keeps it alive, `finish()` marks it complete."""

    def __init__(self, conn: Connection, dataset: str):
        self.conn = conn
        self.dataset = dataset
        self.token = secrets.token_hex(12)

    def acquire(self, kind: str, embedder: str, dimension: int) -> None:
        params = {
            "dataset": self.dataset, "token": self.token, "kind": kind, "embedder": embedder,
            "dimension": dimension, "pid": os.getpid(), "host": socket.gethostname(), "lease_s": LEASE_S,
            "stale_tokens": [],
        }
        row = self.conn.write("load_lease_acquire", **params)[0]
        dead = [] if row["acquired"] or row["status"] != "loading" else stale_tokens(dict(row))
        if dead:
            row = self.conn.write("load_lease_acquire", **{**params, "stale_tokens": dead})[0]
        if row["acquired"]:
            return
        if row["status"] == "dropping":
            raise DatasetBusy(f"dataset {self.dataset!r} is being dropped (or a drop was interrupted): run `gr-neo4j drop {self.dataset}` to finish, then load")
        raise DatasetBusy(busy_message(self.dataset, dict(row), "load"))

    def heartbeat(self) -> bool:
        """True while the claim is still ours.

        Without bookmarks: the shared manager's newest bookmark may be a transaction that the server
        has committed but not yet applied while the load's batches run (measured at 10x MetaQA:
        641 asked, 636 applied), and a heartbeat waiting on it would let the claim lapse."""
        records, _, _ = self.conn.driver.execute_query(
            statement("load_lease_heartbeat"), {"dataset": self.dataset, "token": self.token},
            database_=self.conn.database, routing_=RoutingControl.WRITE, bookmark_manager_=None,
        )
        return bool(records)

    @contextmanager
    def kept_alive(self) -> Iterator[None]:
        """Refresh the heartbeat every HEARTBEAT_S seconds in a background thread while the body runs."""
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_S):
                try:
                    if not self.heartbeat():
                        return  # the claim is gone; `finish` reports it
                except (Neo4jError, DriverError, OSError):
                    pass  # a failing server fails the load's own writes, with a better message

        thread = threading.Thread(target=beat, name=f"lease-{self.dataset}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def finish(self, source: str, expected: dict[str, list[str]]) -> None:
        """Check every input row is present, then mark the dataset complete while still holding it."""
        found = self.conn.read("load_verify", **expected)[0]
        missing = {kind: len(expected[param]) - found[kind] for kind, param in VERIFIED.items()}
        missing = {kind: n for kind, n in missing.items() if n}
        if missing:
            what = ", ".join(f"{n:,} {kind}" for kind, n in missing.items())
            raise LoadInterrupted(
                f"dataset {self.dataset!r} changed under this load ({what} of the input are missing; was it dropped?): "
                "nothing was marked complete; run the load again"
            )
        if not self.conn.write("load_dataset_finish", dataset=self.dataset, token=self.token, source=source):
            raise LoadInterrupted(
                f"dataset {self.dataset!r} was dropped or taken over by another load while this load ran: "
                "nothing was marked complete; run the load again"
            )


def expected_uids(collected) -> dict[str, list[str]]:
    """The uids of every row a load read, as `load_verify`'s parameters (a `collect.Collected`)."""
    return {
        "entity_uids": list(collected.entities), "rel_uids": list(collected.rels),
        "graph_uids": list(collected.graphs), "question_uids": list(collected.questions),
    }
