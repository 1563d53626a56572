"""Every Cypher statement lives in `cypher/NAME.cypher`; code refers to it by NAME."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def statement(name: str) -> str:
    """The text of `cypher/<name>.cypher` (shipped as package data of ``gr_neo4j.cypher``)."""
    resource = resources.files("gr_neo4j.cypher").joinpath(f"{name}.cypher")
    if not resource.is_file():
        raise KeyError(f"no Cypher statement named {name!r} in gr_neo4j/cypher")
    return resource.read_text(encoding="utf-8").strip()


def statement_names() -> list[str]:
    return sorted(p.name[: -len(".cypher")] for p in resources.files("gr_neo4j.cypher").iterdir() if p.name.endswith(".cypher"))
