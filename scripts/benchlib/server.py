"""A managed Neo4j of a benchmark's own: a temporary home on free ports, the distribution shared
through ``GR_NEO4J_DIST`` (else the configured home's), stopped and removed afterwards."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gr_neo4j.server import process
from gr_neo4j.server.process import free_port
from gr_neo4j.settings import Settings, load_settings

NEO4J_VARIABLES = ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE")


@contextmanager
def temporary_server(prefix: str, heap: str = "1g", pagecache: str = "512m", **options) -> Iterator[tuple[Settings, Path]]:
    """``(settings, root)`` of a started server whose home is ``root / "home"``; ``root`` is the
    benchmark's scratch directory. The user's NEO4J_* variables are dropped for the process, so
    that nothing the benchmark does reaches another server."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    configured = load_settings()
    for var in NEO4J_VARIABLES:
        os.environ.pop(var, None)
    settings = load_settings(home=root / "home", dist_dir=configured.dist_dir, bolt_port=free_port(), http_port=free_port(),
                             heap=heap, pagecache=pagecache, **options)
    process.start(settings)
    try:
        yield settings, root
    finally:
        process.stop(settings)
        shutil.rmtree(root, ignore_errors=True)
