"""The wheel's package list names every package of the source tree (setuptools does not find them
here: loaders/ and cypher/ are mapped into the gr_neo4j namespace, so the list is explicit)."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_package_directory_is_in_the_wheel():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = {
        "gr_neo4j." + ".".join(p.parent.relative_to(REPO / "gr_neo4j").parts) if p.parent != REPO / "gr_neo4j" else "gr_neo4j"
        for p in (REPO / "gr_neo4j").rglob("__init__.py")
    }
    on_disk |= {"gr_neo4j.loaders", "gr_neo4j.cypher"}
    assert on_disk <= listed, f"missing from [tool.setuptools] packages: {sorted(on_disk - listed)}"
