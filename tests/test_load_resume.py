"""Idempotence and resumption: a repeated load changes nothing; a killed load, run again, completes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from conftest import FIXTURES
from test_load_support import counts, tiny_embedder, tiny_embedder_path

from gr_neo4j.ingest import load_dataset

N_ENTITIES, N_RELATIONS = 5000, 4


def synthetic_triples(path) -> int:
    """N_ENTITIES * N_RELATIONS distinct triples over N_ENTITIES entities; returns the number of triples."""
    lines = ["head\trelation\ttail"]
    for r in range(N_RELATIONS):
        for i in range(N_ENTITIES):
            lines.append(f"entity {i}\trelation {r}\tentity {(i * 7 + r + 1) % N_ENTITIES}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return N_ENTITIES * N_RELATIONS


def test_loading_twice_leaves_the_same_counts(server, conn):
    first = load_dataset(server, "webqsp", path=FIXTURES / "webqsp", embedder=tiny_embedder())
    before = counts(conn, "webqsp")
    second = load_dataset(server, "webqsp", path=FIXTURES / "webqsp_parquet", embedder=tiny_embedder())
    assert counts(conn, "webqsp") == before
    assert first.written_relationships == 11 and first.texts_embedded > 0
    assert (second.written_entities, second.written_relationships, second.written_questions, second.texts_embedded) == (0, 0, 0, 0)


def test_killed_load_completes_on_rerun_without_duplicates(server, conn, tmp_path):
    source = tmp_path / "big.tsv"
    n_triples = synthetic_triples(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(GR_NEO4J_HOME=str(server.home), GR_NEO4J_DIST=str(server.dist_dir), GR_NEO4J_EMBEDDER=str(tiny_embedder_path()))
    cli = "from gr_neo4j.cli import app; app()"
    cmd = [sys.executable, "-c", cli, "load", "triples", "--path", str(source), "--batch-size", "100"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if counts(conn, "triples")["rels"] > 0:
                break
            time.sleep(0.05)
        assert proc.poll() is None, f"the load ended before it could be killed: {proc.stderr.read().decode()[-500:]}"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    partial = counts(conn, "triples")
    assert 0 < partial["rels"] < n_triples, "the kill should land in the middle of the relationship writes"
    assert partial["rels"] % 100 == 0  # only whole batches were committed
    assert partial["entities"] == partial["entity_vectors"] == N_ENTITIES
    status = conn.query("MATCH (d:Dataset {name: 'triples'}) RETURN d.status AS s")[0]["s"]
    assert status == "loading"

    present = conn.query("MATCH ()-[r:REL {dataset: 'triples'}]->() RETURN count(DISTINCT r.text) AS n")[0]["n"]
    report = load_dataset(server, "triples", path=source, batch_size=1000, embedder=tiny_embedder())
    assert report.written_entities == 0
    # texts already embedded in the database are read back, not encoded again: only relation texts not written yet
    assert report.texts_embedded == N_RELATIONS - present
    assert report.written_relationships == n_triples - partial["rels"]
    done = counts(conn, "triples")
    assert (done["entities"], done["rels"], done["rel_vectors"]) == (N_ENTITIES, n_triples, n_triples)
    distinct = conn.query("MATCH ()-[r:REL {dataset: 'triples'}]->() RETURN count(DISTINCT r.uid) AS n")[0]["n"]
    assert distinct == n_triples
    assert conn.query("MATCH (d:Dataset {name: 'triples'}) RETURN d.status AS s")[0]["s"] == "complete"
