"""Every Cypher statement lives in `cypher/NAME.cypher`; code refers to it by NAME.

A statement may repeat a block: the lines between ``// @repeat N`` and ``// @end repeat`` are
written once and expanded N times when the statement is loaded (the k-hop expansion of
``retrieve_kg_candidates``: one round trip, one copy of the hop). `repeats(name)` gives N.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_REPEAT = re.compile(r"^// @repeat (\d+)[^\n]*\n(.*?)^// @end repeat[^\n]*\n", re.DOTALL | re.MULTILINE)


def _source(name: str) -> str:
    resource = resources.files("gr_neo4j.cypher").joinpath(f"{name}.cypher")
    if not resource.is_file():
        raise KeyError(f"no Cypher statement named {name!r} in gr_neo4j/cypher")
    return resource.read_text(encoding="utf-8")


@cache
def statement(name: str) -> str:
    """The text of `cypher/<name>.cypher` (shipped as package data of ``gr_neo4j.cypher``),
    with its repeated blocks expanded."""
    return _REPEAT.sub(lambda m: m.group(2) * int(m.group(1)), _source(name)).strip()


def repeats(name: str) -> int:
    """How often the repeated block of statement `name` runs (KeyError when it has none)."""
    counts = {int(m.group(1)) for m in _REPEAT.finditer(_source(name))}
    if len(counts) != 1:
        raise KeyError(f"Cypher statement {name!r} has {len(counts) or 'no'} repeat counts, not one")
    return counts.pop()


def statement_names() -> list[str]:
    return sorted(p.name[: -len(".cypher")] for p in resources.files("gr_neo4j.cypher").iterdir() if p.name.endswith(".cypher"))
