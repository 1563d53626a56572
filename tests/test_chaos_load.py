"""Smoke run of scripts/chaos_load.py: one client kill, one server kill and one drop racing a load, on
a small MetaQA slice with the tiny embedder, against the script's own Neo4j; no violation allowed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO, SHARED_DATASETS, shared_dist
from test_load_support import tiny_embedder_path

FAULTS = ("kill_client", "kill_server", "drop_race")


@pytest.mark.skipif(not (SHARED_DATASETS / "metaqa" / "kb.txt").is_file(), reason="no MetaQA in ../shared/datasets")
def test_chaos_smoke_run_has_no_violation():
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env["GR_NEO4J_DIST"] = str(shared_dist())
    cmd = [
        sys.executable, str(REPO / "scripts" / "chaos_load.py"),
        "--metaqa", str(SHARED_DATASETS / "metaqa"),
        "--triples", "2000", "--questions", "200", "--batch-size", "250",
        "--rounds", "3", "--faults", ",".join(FAULTS), "--starts", "empty",
        "--seed", "0",  # its three faults strike at a row count, i.e. during the writes
        "--time-limit", "1500", "--embedder", str(tiny_embedder_path()),
    ]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800, check=False)
    assert done.stdout.strip(), done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["violations"] == [], done.stderr[-3000:]
    assert done.returncode == 0
    assert summary["rounds"] == 3
    assert summary["reference_counts"] == summary["input_counts"]
    assert summary["input_counts"]["relationships"] == 2000 and summary["input_counts"]["questions"] > 0
    for kind in FAULTS:
        assert summary["faults"][kind] + summary["faults_missed"][kind] == 1
    assert sum(summary["faults"].values()) >= 2
    assert summary["faults_survived"] == sum(summary["faults"].values())
    assert (summary["records_lost"], summary["duplicates"], summary["missing_embeddings"]) == (0, 0, 0)
    assert (summary["tracebacks"], summary["exit0_incomplete"]) == (0, 0)
