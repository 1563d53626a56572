"""Neo4j's Movies graph (Browser's `:play movies`) as triples, read from the `neo4j-browser` jar
that `gr-neo4j db install` fetched: its `CREATE` script is parsed, not run, so that the graph can be
loaded as any user's triples file would be, with no question set."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NODE = re.compile(r"CREATE \((\w+):(Movie|Person) \{([^}]*)\}\)")
_REL = re.compile(r"\((\w+)\)-\[:(\w+)(?: \{[^}]*\})?\]->\((\w+)\)")
_PROP = re.compile(r"(\w+):\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|-?\d+)")
# Relationship types and properties as a triples file would spell them.
RELATIONS = {"ACTED_IN": "acted in", "DIRECTED": "directed", "PRODUCED": "produced", "WROTE": "wrote",
             "REVIEWED": "reviewed", "FOLLOWS": "follows"}
PROPERTIES = {"released": "released", "born": "born"}


@dataclass(frozen=True)
class Triple:
    head: str
    relation: str
    tail: str


def _value(raw: str) -> str:
    return raw[1:-1].replace("\\'", "'").replace('\\"', '"') if raw[0] in "'\"" else raw


def triples(script: str) -> list[Triple]:
    """(name or title, relation, name or title) for each relationship, and (node, property, value)
    for a movie's release year and a person's birth year."""
    names: dict[str, str] = {}
    out: list[Triple] = []
    for var, _label, props in _NODE.findall(script):
        p = {k: _value(v) for k, v in _PROP.findall(props)}
        names[var] = p.get("title") or p["name"]
        out += [Triple(names[var], rel, p[k]) for k, rel in PROPERTIES.items() if k in p]
    for head, rel, tail in _REL.findall(script):
        if head in names and tail in names and rel in RELATIONS:
            out.append(Triple(names[head], RELATIONS[rel], names[tail]))
    return list(dict.fromkeys(out))
