"""`gr-neo4j serve`: the HTTP API on a real uvicorn (a free loopback port) over the session's Neo4j,
with the small MetaQA-format and ExplaGraphs-format datasets of test_ask loaded by the real loaders."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import httpx
import pytest
import uvicorn
from conftest import make_settings, server_home
from test_ask import EXPLAGRAPHS, KB, QA
from test_model_support import tiny_llm
from typer.testing import CliRunner

from gr_neo4j.api import ServeConfig, Service, create_app
from gr_neo4j.api import service as service_module
from gr_neo4j.api.config import MAX_BODY_BYTES, MAX_QUESTION_CHARS
from gr_neo4j.api.run import listen, url_of
from gr_neo4j.api.token import read_or_create_token, token_file
from gr_neo4j.cli import app as cli_app
from gr_neo4j.connection import connect
from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.ingest.stats import drop_dataset
from gr_neo4j.server import process

NOLAN = {"question": "which movies did Christopher Nolan direct", "dataset": "metaqa", "hops": 1}


@contextmanager
def running(app) -> Iterator[str]:
    """``app`` on a real uvicorn in a thread, on a free loopback port; yields its base URL."""
    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@pytest.fixture(scope="module")
def tiny_llm_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-llm")
    model, tokenizer = tiny_llm()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def api(server, tmp_path_factory, tiny_llm_dir):
    """A Service over the session's Neo4j (emptied, then the small datasets loaded), its app on
    uvicorn, and an httpx client for it. The LLM is a random tiny one (answer_by llm)."""
    with connect(server) as c:
        c.run_autocommit("MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 20000 ROWS")
        c.run_autocommit("MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF 20000 ROWS")
    root = tmp_path_factory.mktemp("data")
    (root / "metaqa" / "1-hop").mkdir(parents=True)
    (root / "metaqa" / "kb.txt").write_text(KB)
    (root / "metaqa" / "1-hop" / "qa_dev.txt").write_text(QA)
    load_dataset(server, "metaqa", path=root / "metaqa")
    (root / "eg.tsv").write_text(EXPLAGRAPHS)
    load_dataset(server, "explagraphs", path=root / "eg.tsv")
    settings = server.with_(llm=str(tiny_llm_dir))
    service = Service(settings, ServeConfig(concurrency=4, queue_timeout_s=60))
    try:
        with running(create_app(service)) as url, httpx.Client(base_url=url, timeout=120) as client:
            yield service, client
    finally:
        service.close()


def is_json_error(response: httpx.Response, status: int, words: str) -> bool:
    body = response.json()
    return (response.status_code == status and response.headers["content-type"] == "application/json"
            and list(body) == ["error"] and words in body["error"] and "Traceback" not in body["error"])


def test_ask_answers_as_the_cli_json_does_and_the_retrieval_can_be_shown(api):
    _, client = api
    r = client.post("/ask", json=NOLAN)
    assert r.status_code == 200, r.text
    out = r.json()
    assert set(out["answer"].split("|")) == {"Inception", "The Dark Knight"} and out["answered_by"].startswith("the graph")
    assert {a["line"] for a in out["answers"]} == {"Christopher Nolan <-directed by- Inception", "Christopher Nolan <-directed by- The Dark Knight"}
    # The same keys as `gr-neo4j ask --json` (the same to_json of the same AskResult).
    cli = json.loads(CliRunner().invoke(cli_app, ["ask", NOLAN["question"], "-d", "metaqa", "--hops", "1", "--json", "--no-record"],
                                         env={"GR_NEO4J_HOME": str(api[0].settings.home)}).stdout)
    assert set(out) == set(cli) and out["answer"] == cli["answer"] and out["nodes"] == cli["nodes"]
    shown = client.get(f"/retrievals/{out['retrieval_id']}")
    assert shown.status_code == 200, shown.text
    assert shown.json()["question"] == NOLAN["question"] and shown.json()["answer"] == out["answer"]
    assert f"MATCH (r:Retrieval {{id: '{out['retrieval_id']}'}})" in shown.json()["query"]


def test_retrieve_datasets_healthz_and_docs(api):
    _, client = api
    r = client.post("/retrieve", json={"question": "who directed Titanic?", "dataset": "metaqa", "entity": ["Titanic"], "record": False})
    assert r.status_code == 200, r.text
    out = r.json()
    assert {"Titanic", "James Cameron"} <= {n["key"] for n in out["nodes"]} and out["retrieval_id"] is None and "answer" not in out
    per_sample = client.post("/retrieve", json={"question": "cannabis should be legal.", "dataset": "explagraphs", "graph": "0", "record": False})
    assert per_sample.status_code == 200 and per_sample.json()["mode"] == "whole"
    datasets = client.get("/datasets").json()["datasets"]
    assert {d["name"]: d["relationships"] for d in datasets} == {"explagraphs": 6, "metaqa": 13}
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["neo4j"].startswith("Neo4j/") and health["retrievers"] == 4
    assert client.get("/docs").status_code == 200
    assert {"/ask", "/retrieve", "/retrievals/{rid}", "/datasets", "/healthz"} <= set(client.get("/openapi.json").json()["paths"])


def test_bad_input_gets_one_json_error_line_and_a_4xx_status(api):
    _, client = api
    post = client.post
    cases = [
        (post("/ask", content=b"{not json", headers={"content-type": "application/json"}), 400, "not valid JSON"),
        (post("/ask", json={"question": "who?", "dataset": "nope"}), 400, "no dataset 'nope' is loaded"),
        (post("/ask", json={"question": "who?", "dataset": "metaqa", "entity": ["Nobody"]}), 400, "unknown entity in dataset 'metaqa'"),
        (post("/ask", json={"question": "why?", "dataset": "explagraphs"}), 400, "choose one with --graph"),
        (post("/ask", json={"question": "who?", "dataset": "metaqa", "mode": "magic"}), 422, "mode: Input should be 'paths'"),
        (post("/ask", json={"question": "   ", "dataset": "metaqa"}), 422, "question: the question is empty"),
        (post("/ask", json={"question": "", "dataset": "metaqa"}), 422, "question: String should have at least 1 character"),
        (post("/ask", json={"question": "x" * (MAX_QUESTION_CHARS + 1)}), 422, f"at most {MAX_QUESTION_CHARS} characters"),
        (post("/ask", json={"question": "who?", "hops": 9}), 422, "hops: Input should be less than or equal to 3"),
        (post("/ask", json={"question": "who?", "hop": 1}), 422, "hop: Extra inputs are not permitted"),
        (post("/ask", json={"dataset": "metaqa"}), 422, "question: Field required"),
        (post("/ask", content=b'{"question": "who \\ud800?"}', headers={"content-type": "application/json"}), 422, "question: Input should be a valid string"),
        (post("/ask", content=b'{"question": "who?", "entity": ["\\ud800"]}', headers={"content-type": "application/json"}), 422, "entity: not valid Unicode"),
        (post("/ask", json=["who?"]), 422, "Input should be a valid dictionary"),
        (post("/retrieve", json={"question": "who?", "answer_by": "llm"}), 422, "answer_by: Extra inputs are not permitted"),
        (post("/ask", json={"question": "who?", "answer_by": "oracle"}), 422, "answer_by: Input should be 'auto', 'graph' or 'llm'"),
        (post("/ask", content=b"{" + b" " * MAX_BODY_BYTES + b"}", headers={"content-type": "application/json"}), 413, "too large"),
        (client.get("/retrievals/000000000000"), 404, "no recorded retrieval '000000000000'"),
        (client.get("/retrievals/x' DETACH DELETE n"), 404, "is not a retrieval id"),
        (client.get("/nowhere"), 404, "Not Found"),
        (client.get("/ask"), 405, "Method Not Allowed"),
    ]
    for response, status, words in cases:
        assert is_json_error(response, status, words), (status, words, response.status_code, response.text)

    # A chunked body (no Content-Length) over the limit is cut off as it arrives.
    def chunks():
        yield b'{"question": "'
        for _ in range(MAX_BODY_BYTES // 1024 + 1):
            yield b"x" * 1024
        yield b'"}'

    assert is_json_error(post("/ask", content=chunks(), headers={"content-type": "application/json"}), 413, "too large")


def test_concurrent_requests_share_one_driver_one_embedder_and_one_llm(api, monkeypatch):
    service, client = api
    loads, active, most = [], [0], [0]
    lock = threading.Lock()
    real = service_module.load_answerer

    def counting_load(*args, **kwargs):  # the real loader; counts loads and overlapping generations
        loads.append(1)
        loaded = real(*args, **kwargs)

        def answer(result):
            with lock:
                active[0] += 1
                most[0] = max(most[0], active[0])
            try:
                time.sleep(0.05)  # overlap would show
                return loaded.answer(result)
            finally:
                with lock:
                    active[0] -= 1

        return service_module.Answerer(answer, loaded.by)

    monkeypatch.setattr(service_module, "load_answerer", counting_load)
    monkeypatch.setattr(service, "_answerer", None)
    serial = client.post("/retrieve", json=NOLAN | {"record": False}).json()
    bodies = [("/retrieve", NOLAN | {"record": False}), ("/ask", NOLAN), ("/ask", NOLAN | {"answer_by": "llm", "record": False})] * 8
    with ThreadPoolExecutor(16) as pool:
        responses = list(pool.map(lambda b: client.post(b[0], json=b[1]), bodies))
    assert [r.status_code for r in responses] == [200] * len(bodies), [r.text for r in responses if r.status_code != 200]
    for (path, body), r in zip(bodies, responses):
        out = r.json()
        assert [n["key"] for n in out["nodes"]] == [n["key"] for n in serial["nodes"]]
        if body.get("answer_by") == "llm":
            assert "zero-shot" in out["answered_by"] and set(out["answer"].split("|")) <= {n["text"] for n in out["nodes"]} | {"not in the graph"}
        elif path == "/ask":
            assert set(out["answer"].split("|")) == {"Inception", "The Dark Knight"}
    assert len(loads) == 1 and most[0] == 1  # the LLM loaded once; one generation at a time
    retrievers = list(service._pool.queue)
    assert len(retrievers) == 4 and all(r.conn is service.conn and r.embedder is service.embedder for r in retrievers)
    assert client.get("/healthz").json()["llm_loaded"] is True


def test_every_retriever_busy_gives_503_json_after_the_queue_timeout(api):
    service = Service(api[0].settings, ServeConfig(concurrency=1, queue_timeout_s=0.5))
    try:
        with running(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client:
            with service.retriever():  # the only one, held
                r = client.post("/retrieve", json=NOLAN | {"record": False})
            assert is_json_error(r, 503, "all 1 retrievers stayed busy") and r.headers["retry-after"] == "5"
            assert client.post("/retrieve", json=NOLAN | {"record": False}).status_code == 200
    finally:
        service.close()


def test_a_dataset_loaded_while_serving_is_found(api, tmp_path):
    service, client = api
    (tmp_path / "films.tsv").write_text("Heat\tdirected by\tMichael Mann\n")
    load_dataset(service.settings, "triples", path=tmp_path / "films.tsv", as_name="films")
    try:
        r = client.post("/retrieve", json={"question": "who directed Heat", "dataset": "films", "record": False})
        assert r.status_code == 200, r.text
        assert {"Heat", "Michael Mann"} <= {n["text"] for n in r.json()["nodes"]}
    finally:
        drop_dataset(service.settings, "films")


def test_the_token_is_required_where_asked_and_kept_private(api, tmp_path):
    service, _ = api
    assert ServeConfig(host="0.0.0.0").token_required and ServeConfig(host="192.168.1.5").token_required
    assert not ServeConfig().token_required and not ServeConfig(host="::1").token_required and not ServeConfig(host="localhost").token_required
    assert ServeConfig(require_token=True).token_required
    settings = service.settings.with_(home=tmp_path / "home")
    token = read_or_create_token(settings)
    assert read_or_create_token(settings) == token and len(token) >= 32
    assert stat.S_IMODE(token_file(settings).stat().st_mode) == 0o600
    with running(create_app(service, token)) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert is_json_error(client.get("/datasets"), 401, "missing or wrong token")
        assert is_json_error(client.post("/ask", json=NOLAN, headers={"Authorization": "Bearer nope"}), 401, "missing or wrong token")
        assert client.get("/datasets", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        assert client.post("/ask", json=NOLAN | {"record": False}, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        assert client.get("/healthz").status_code == 200  # probes need no token
        assert client.get("/datasets").headers["www-authenticate"] == "Bearer"


def test_the_cli_serves_until_interrupted(api, tmp_path):
    service, _ = api
    env = os.environ | {"GR_NEO4J_HOME": str(service.settings.home), "GR_NEO4J_LLM": str(service.settings.llm)}
    proc = subprocess.Popen([sys.executable, "-m", "gr_neo4j", "serve", "--port", "0", "--require-token", "--concurrency", "2", "--no-access-log"],
                            env=env, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if "serving on" in line:
                break
        text = "".join(lines)
        url = re.search(r"serving on (http://127\.0\.0\.1:\d+)", text)
        assert url, text
        assert f"Bearer $(cat {token_file(service.settings)})" in text.replace("\n", "")
        token = token_file(service.settings).read_text().strip()
        assert token not in text
        with httpx.Client(base_url=url.group(1), timeout=60) as client:
            assert client.get("/datasets").status_code == 401
            r = client.post("/ask", json=NOLAN | {"record": False}, headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200 and set(r.json()["answer"].split("|")) == {"Inception", "The Dark Knight"}
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with running(create_app(service)) as taken:  # a taken port: one line, before any model loads
        port = taken.rsplit(":", 1)[1]
        out = CliRunner().invoke(cli_app, ["serve", "--port", port], env={"GR_NEO4J_HOME": str(service.settings.home)})
        assert out.exit_code == 1 and f"error: cannot listen on 127.0.0.1:{port}" in out.output, out.output


def test_neo4j_down_gives_503_json(tmp_path):
    """A server of its own, stopped under the service."""
    settings = make_settings(server_home("serve-down"))
    process.start(settings)
    try:
        service = Service(settings, ServeConfig(concurrency=1))
        try:
            with running(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client:
                assert client.get("/healthz").status_code == 200
                process.stop(settings)
                assert is_json_error(client.get("/healthz"), 503, "Neo4j is unreachable")
                assert is_json_error(client.get("/datasets"), 503, "Neo4j is unreachable")
        finally:
            service.close()
    finally:
        process.stop(settings)
        shutil.rmtree(settings.home, ignore_errors=True)
