"""Neo4j's Movies graph (Browser's `:play movies`) as triples, read from the `neo4j-browser` jar
that `gr-neo4j db install` fetched: its `CREATE` script is parsed, not run, so that the graph can be
loaded as any user's triples file would be, with no question set."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from gr_neo4j.settings import Settings

START, END = "CREATE (TheMatrix:Movie", "WITH TomH as a"
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


def browser_jar(settings: Settings) -> Path:
    jars = sorted(settings.dist_dir.glob("neo4j-community-*/lib/neo4j-browser-*.jar"))
    if not jars:
        raise SystemExit(f"no neo4j-browser jar under {settings.dist_dir}: run `gr-neo4j db install` first")
    return jars[-1]


def create_script(jar: Path) -> str:
    """The Movies `CREATE` script, as a Cypher string, from the Browser's bundled guide."""
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.endswith(".js"):
                text = z.read(name).decode("utf-8", errors="replace")
                i = text.find(START)
                if i >= 0:
                    j = text.find(END, i)
                    # The guide is a JavaScript string literal: its escapes are undone here (the
                    # Cypher string's own, in :func:`_value`).
                    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text[i:j])
    raise SystemExit(f"{jar}: no Movies guide found in it")


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
