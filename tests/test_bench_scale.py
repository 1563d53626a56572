"""The MetaQA-like generator of scripts/bench_scale.py (determinism, vocabulary, names, answers,
degree skew) and a tiny end-to-end run of the script against the test Neo4j."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest
from benchlib.hash_embedder import HashEmbedder
from benchlib.metaqa_like import RELATION_NAMES, TEMPLATES, generate, make_questions, write_metaqa
from conftest import REPO
from gr_neo4j.loaders import metaqa

from gr_neo4j.ingest.collect import Collected


def digest(root):
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.txt")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_same_seed_same_files_other_seed_other_graph(tmp_path):
    a, b, c = generate(0.02, 3), generate(0.02, 3), generate(0.02, 4)
    assert a.names == b.names and np.array_equal(a.heads, b.heads) and np.array_equal(a.tails, b.tails)
    write_metaqa(a, make_questions(a, 15, 3), tmp_path / "a")
    write_metaqa(b, make_questions(b, 15, 3), tmp_path / "b")
    write_metaqa(c, make_questions(c, 15, 4), tmp_path / "c")
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    assert digest(tmp_path / "a") != digest(tmp_path / "c")


def test_relation_vocabulary_is_metaqas():
    kg = generate(0.1, 0)
    assert {RELATION_NAMES[r] for r in np.unique(kg.rels)} == {
        "directed_by", "written_by", "starred_actors", "has_tags", "release_year", "in_language", "has_genre",
        "has_imdb_votes", "has_imdb_rating",
    }
    assert np.all(kg.heads < kg.films)  # every triple starts at a film, as MetaQA's


def test_names_are_unique_and_read_back_as_written(tmp_path):
    kg = generate(0.05, 1)
    assert len({n.casefold() for n in kg.names}) == len(kg.names)
    assert not any(set(n) & set("|[]\t\n") or n != n.strip() for n in kg.names)
    root = write_metaqa(kg, make_questions(kg, 20, 1), tmp_path / "kb")
    collected = Collected("metaqa")
    for item in metaqa.read(root):
        collected.add(item)
    assert not collected.bad
    assert len(collected.entities) == kg.num_entities
    assert len(collected.rels) == kg.num_triples
    assert len(collected.questions) == 60


def test_answers_are_every_end_of_the_relation_path():
    kg = generate(0.05, 2)
    out, back = defaultdict(set), defaultdict(set)  # (entity, relation) -> neighbours, built independently
    for h, r, t in zip(kg.heads.tolist(), kg.rels.tolist(), kg.tails.tolist()):
        out[(kg.names[h], RELATION_NAMES[r])].add(kg.names[t])
        back[(kg.names[t], RELATION_NAMES[r])].add(kg.names[h])
    questions = make_questions(kg, 30, 2)
    assert {h: len(qs) for h, qs in questions.items()} == {1: 30, 2: 30, 3: 30}
    for hops, qs in questions.items():
        assert {q.path for q in qs} >= {tuple(("" if f else "~") + RELATION_NAMES[r] for r, f in steps) for steps, _ in TEMPLATES[hops][:3]}
        for q in qs:
            assert f"[{q.topic}]" in q.text and len(q.path) == hops
            front = {q.topic}
            for step in q.path:
                table = back if step.startswith("~") else out
                front = set().union(*(table[(e, step.lstrip("~"))] for e in front))
            assert set(q.answers) == front - {q.topic} and q.answers


def test_size_and_degree_skew_follow_metaqa():
    kg = generate(1.0, 0)
    assert abs(kg.num_entities - 42777) / 42777 < 0.01
    assert abs(kg.num_triples - 129233) / 129233 < 0.02
    degree = np.bincount(kg.tails, minlength=len(kg.names))
    directed = np.bincount(kg.tails[kg.rels == RELATION_NAMES.index("directed_by")])
    directors = directed[directed > 0]
    assert np.median(directors) <= 2 and directors.max() >= 30  # most direct one or two films, a few dozens
    assert degree.max() > 3000  # genre hubs
    assert generate(3.0, 0).num_triples > 2.9 * kg.num_triples


def test_hash_embedder_is_deterministic_unit_and_unrelated():
    e = HashEmbedder()
    x = e.encode(["Tom", "Tom", "Tim"])
    assert x.shape == (3, 384) and x.dtype == np.float32
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(x[0], x[1]) and abs(float(x[0] @ x[2])) < 0.3


def test_tiny_run_against_the_test_neo4j(server, conn, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(GR_NEO4J_HOME=str(server.home), GR_NEO4J_DIST=str(server.dist_dir), GR_NEO4J_BOLT_PORT=str(server.bolt_port),
               GR_NEO4J_HTTP_PORT=str(server.http_port), GR_NEO4J_HEAP=server.heap, GR_NEO4J_PAGECACHE=server.pagecache)
    out, png, md = tmp_path / "scale.json", tmp_path / "scale.png", tmp_path / "scale.md"
    cmd = [sys.executable, str(REPO / "scripts" / "bench_scale.py"), "--scales", "0.01", "--per-hop", "6", "--embedder", "hash",
           "--embedder-sample", "0", "--server", "configured", "--workdir", str(tmp_path), "--out", str(out), "--plot", str(png), "--markdown", str(md)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert json.loads(out.read_text()) == result and png.stat().st_size > 10_000
    assert "| 0.01x | paths | 3 |" in md.read_text()
    size = result["sizes"][0]
    assert size["load"]["triples"] == size["generated"]["triples"] and size["load"]["questions"] == 18
    assert size["embedder"].startswith("hash") and "not semantic" in size["embedder"]
    ret = size["retrieval"]
    for pipeline in ("neo4j", "in_memory"):
        assert set(ret[pipeline]) == {f"{m}/{h}" for m in ("paths", "reference") for h in (1, 2, 3)}
    # the topics are stored, so the 1-hop paths mode reaches the answers whatever the vectors
    assert ret["neo4j"]["paths/1"]["answer_recall"] == 1.0 == ret["in_memory"]["paths/1"]["answer_recall"]
    assert ret["in_memory_build"]["relationships"] == size["generated"]["triples"]
    assert size["after_load"]["heap_max_mb"] > 0 and size["after_load"]["store_mb"] > 0
    assert conn.query("MATCH (n) RETURN count(n) AS n")[0]["n"] == 0  # the script dropped what it loaded
    assert list(tmp_path.glob("bench-scale-*")) == []  # and removed its directory


def test_a_failing_child_is_one_line_in_the_parent(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_scale", REPO / "scripts" / "bench_scale.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    with pytest.raises(bench.ChildFailed, match=r"^embedder: FileNotFoundError: .*missing\.txt"):
        bench.run_child(["_embedder", str(tmp_path / "missing.txt")], dict(os.environ))


def test_the_server_is_gone_even_when_its_stop_command_cannot_find_it():
    """The 10x run's stop failed; whatever Neo4j's own stop does, no JVM of the size may outlive it.
    Here the pid file is gone, so Neo4j's stop finds no server: the pid recorded at start is used."""
    import psutil
    from conftest import make_settings, server_home

    from gr_neo4j.home.layout import layout_of
    from gr_neo4j.server import process

    spec = importlib.util.spec_from_file_location("bench_scale", REPO / "scripts" / "bench_scale.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    settings = make_settings(server_home("stop"))
    pid = process.start(settings).pid
    try:
        layout_of(settings).pid_file.unlink()
        how = bench.stop_server(settings, pid, wait_s=60)
        assert how == "stopped, then terminated (SIGTERM)"
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    finally:
        if psutil.pid_exists(pid):
            psutil.Process(pid).kill()
        shutil.rmtree(settings.home, ignore_errors=True)
