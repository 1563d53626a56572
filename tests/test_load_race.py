"""One writer per dataset: a drop or a second load is refused while a load runs, a dropped dataset
fails the load that was writing it, a killed load's claim lapses at once, and drop removes retrievals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from test_load_resume import synthetic_triples
from test_load_support import counts, tiny_embedder, tiny_embedder_path

from gr_neo4j.errors import DatasetBusy
from gr_neo4j.ingest import drop_from, load_dataset


def start_cli_load(server, source, *extra) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(GR_NEO4J_HOME=str(server.home), GR_NEO4J_DIST=str(server.dist_dir), GR_NEO4J_EMBEDDER=str(tiny_embedder_path()))
    cmd = [sys.executable, "-c", "from gr_neo4j.cli import app; app()", "load", "triples", "--path", str(source), *extra]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True)


def wait_for_writes(conn, proc) -> None:
    """Until the load has committed some relationships (it is in its write phase)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if counts(conn, "triples")["rels"] > 0:
            return
        time.sleep(0.05)
    _out, err = proc.communicate()
    pytest.fail(f"the load ended before its write phase could be interrupted: {err[-500:]}")


@pytest.fixture()
def big_source(tmp_path):
    source = tmp_path / "big.tsv"
    return source, synthetic_triples(source)


def test_drop_is_refused_while_a_load_runs_and_the_load_completes(server, conn, big_source):
    source, n_triples = big_source
    proc = start_cli_load(server, source, "--batch-size", "100")
    try:
        wait_for_writes(conn, proc)
        with pytest.raises(DatasetBusy, match=rf"cannot drop 'triples': it is being loaded by pid {proc.pid} on .*then drop again"):
            drop_from(conn, "triples")
        with pytest.raises(DatasetBusy, match=r"cannot load 'triples': it is being loaded by pid"):
            load_dataset(server, "triples", path=source, embedder=tiny_embedder())
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err[-1000:]
    done = counts(conn, "triples")
    assert (done["rels"], done["rel_vectors"]) == (n_triples, n_triples)
    assert conn.query("MATCH (d:Dataset {name: 'triples'}) RETURN d.status AS s, d.load_token AS t")[0].values() == ["complete", None]


def test_a_killed_loads_claim_lapses_at_once(server, conn, big_source):
    source, _ = big_source
    proc = start_cli_load(server, source, "--batch-size", "100")
    try:
        wait_for_writes(conn, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    # same host, process gone: no need to wait LEASE_S for the heartbeat to go stale
    drop_from(conn, "triples")
    assert set(counts(conn, "triples").values()) == {0}


def test_a_load_whose_dataset_is_deleted_under_it_fails(server, conn, big_source):
    """A claim ignored (an older client, a hand-written DELETE): the load must not report success."""
    source, _ = big_source
    proc = start_cli_load(server, source, "--batch-size", "100")
    try:
        wait_for_writes(conn, proc)
        conn.query("MATCH (d:Dataset {name: 'triples'}) DETACH DELETE d")
        conn.query("MATCH ()-[r:REL {dataset: 'triples'}]->() WITH r LIMIT 50 DELETE r")
        _, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1
    assert "Traceback" not in err
    assert "nothing was marked complete; run the load again" in err
    # and running it again completes it
    report = load_dataset(server, "triples", path=source, embedder=tiny_embedder())
    assert report.totals.status == "complete" and report.totals.relationships == report.input_relationships


def test_drop_removes_the_datasets_retrievals(server, conn, tmp_path):
    source = tmp_path / "kg.tsv"
    source.write_text("a\tknows\tb\n", encoding="utf-8")
    load_dataset(server, "triples", path=source, embedder=tiny_embedder())
    conn.query("CREATE (:Retrieval {id: 'r1', dataset: 'triples'}), (:Retrieval {id: 'r2', dataset: 'other'})")
    conn.query("MATCH (r:Retrieval {id: 'r1'}), (n:Entity {dataset: 'triples'}) CREATE (r)-[:RETRIEVED]->(n)")
    drop_from(conn, "triples")
    assert [r["id"] for r in conn.query("MATCH (r:Retrieval) RETURN r.id AS id")] == ["r2"]
