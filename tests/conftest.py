"""Test fixtures: a real Neo4j started for the test session, on free ports, in its own home.

The Neo4j distribution (about 140 MB of jars) is shared between test sessions through
GR_NEO4J_DIST (default ~/.cache/gr-neo4j/dist), so only the first run fetches it from Maven Central;
the server home (store, logs, password) is a fresh temporary directory every session.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path

import neo4j
import pytest

from gr_neo4j.connection import connect
from gr_neo4j.server import process
from gr_neo4j.server.process import free_port
from gr_neo4j.settings import Settings, load_settings

REPO = Path(__file__).resolve().parents[1]
# The benchmark scripts' shared code (scripts/benchlib) is not part of the library: it needs psutil,
# a test-only dependency. The scripts find it next to them; the tests of it, through this path.
sys.path.insert(0, str(REPO / "scripts"))
SHARED_DATASETS = REPO.parent / "shared" / "datasets"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def server_checks(monkeypatch) -> list:
    """Every server check (``Driver.get_server_info``, one per connection attempt) the test makes.

    Tests of "said at once" count attempts instead of timing them: a loaded machine stretches
    the time of one attempt, but never turns one attempt into the retries the test rules out."""
    calls: list = []
    check = neo4j.Driver.get_server_info

    def counted(self, *args, **kwargs):
        calls.append(self)
        return check(self, *args, **kwargs)

    monkeypatch.setattr(neo4j.Driver, "get_server_info", counted)
    return calls


@functools.cache
def metaqa_fixture(name: str = "metaqa") -> Path:
    """A directory in MetaQA's layout (``kb.txt``, ``{k}-hop/qa_dev.txt``) built in a temporary
    folder from the invented films of ``fixtures/<name>/`` (``triples.txt``, ``questions_{k}hop.txt``),
    so that no file under tests/ carries the names of the real dataset's files."""
    parent = Path(tempfile.mkdtemp(prefix="gr-neo4j-fixture-"))
    atexit.register(shutil.rmtree, parent, True)
    src, root = FIXTURES / name, parent / name  # named as the fixture: stable test ids
    root.mkdir()
    shutil.copyfile(src / "triples.txt", root / "kb.txt")
    for questions in sorted(src.glob("questions_*hop.txt")):
        hops = questions.stem.removeprefix("questions_").removesuffix("hop")
        (root / f"{hops}-hop").mkdir()
        shutil.copyfile(questions, root / f"{hops}-hop" / "qa_dev.txt")
    return root




def shared_dist() -> Path:
    return Path(os.environ.get("GR_NEO4J_DIST") or Path.home() / ".cache" / "gr-neo4j" / "dist")


def make_settings(home: Path, **extra) -> Settings:
    """Settings for a managed server in `home`, isolated from the user's own NEO4J_* variables."""
    for var in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE"):
        os.environ.pop(var, None)
    return load_settings(
        home=home,
        dist_dir=shared_dist(),
        bolt_port=free_port(),
        http_port=free_port(),
        heap="1g",
        pagecache="512m",
        **extra,
    )


def server_home(name: str) -> Path:
    """A fresh server home outside pytest's basetemp: pytest keeps only its last three basetemps, so a
    parallel pytest run would otherwise delete the store of a server that is still running."""
    return Path(tempfile.mkdtemp(prefix=f"gr-neo4j-{name}-"))


@pytest.fixture(scope="session")
def server() -> Settings:
    """A running managed Neo4j for the whole session; stopped and removed at the end."""
    # 2 GB heap: the session loads the whole MetaQA KB (129k relationships with vectors).
    settings = make_settings(server_home("session")).with_(heap="2g")
    process.start(settings)
    yield settings
    process.stop(settings)
    shutil.rmtree(settings.home, ignore_errors=True)


@pytest.fixture()
def conn(server):
    """A connection to an empty database (everything is deleted before each test)."""
    with connect(server) as c:
        # Relationships first: DETACH DELETE of hub nodes (MetaQA genres, years) in one batch would
        # exceed the transaction memory pool.
        c.run_autocommit("MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 20000 ROWS")
        c.run_autocommit("MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF 20000 ROWS")
        yield c


@pytest.fixture()
def env(server) -> dict:
    """The environment of a CLI run (typer's CliRunner) against the session's server with the
    tiny test embedder; 200 columns so that rich tables are never cut."""
    from test_load_support import tiny_embedder_path

    return {
        "GR_NEO4J_HOME": str(server.home),
        "GR_NEO4J_DIST": str(server.dist_dir),
        "GR_NEO4J_EMBEDDER": str(tiny_embedder_path()),
        "NEO4J_URI": None,
        "COLUMNS": "200",
    }
