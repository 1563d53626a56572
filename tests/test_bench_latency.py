"""scripts/bench_latency.py times a baseline revision's own code: its tree, Cypher included."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import REPO


def bench():
    spec = importlib.util.spec_from_file_location("bench_latency", REPO / "scripts" / "bench_latency.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_baseline_imports_its_own_package_and_cypher(tmp_path):
    b = bench()
    tree = b.extract(b.resolve("HEAD"), tmp_path)
    b.check_imports(tree, tree)  # exits if gr_neo4j or gr_neo4j.cypher came from this checkout
    with pytest.raises(SystemExit, match="is imported instead of the code under"):
        b.check_imports(None, tree)  # this checkout's package is not the extracted one


def test_an_unknown_baseline_revision_is_one_line():
    with pytest.raises(SystemExit, match="'no-such-rev' is not in this clone's history"):
        bench().resolve("no-such-rev")
