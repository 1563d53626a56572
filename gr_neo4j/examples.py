"""Example graphs that ship with what `gr-neo4j db install` fetched: `gr-neo4j db example movies`.

Neo4j's Movies graph (Browser's `:play movies`: 38 Movie and 133 Person nodes, ACTED_IN {roles},
DIRECTED, PRODUCED, WROTE, REVIEWED {summary, rating}, FOLLOWS) is a `CREATE` statement inside
the `neo4j-browser` jar of the installed Neo4j. It is read from there, so a bare clone with no
data folder still has a real graph, with its own labels, types and properties, to adopt
(`gr-neo4j load neo4j`) and ask.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from .connection import connect
from .errors import MissingInput, NotReady, UsageError
from .settings import Settings


class Example(str, Enum):
    MOVIES = "movies"


# The guide's statement runs from its first CREATE to the query that follows it.
_START, _END = "CREATE (TheMatrix:Movie", "WITH TomH as a"


@dataclass(frozen=True)
class Created:
    example: str
    jar: Path
    nodes: int
    relationships: int


def browser_jar(settings: Settings) -> Path:
    """The `neo4j-browser` jar of the installed Neo4j under ``settings.dist_dir``."""
    jars = sorted(settings.dist_dir.glob("neo4j-community-*/lib/neo4j-browser-*.jar"))
    if not jars:
        raise NotReady(f"no neo4j-browser jar under {settings.dist_dir}: run `gr-neo4j db install` first")
    return jars[-1]


def movies_script(jar: Path) -> str:
    """The Movies `CREATE` statement, as Cypher, from the Browser's bundled guide."""
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if not name.endswith(".js"):
                continue
            text = z.read(name).decode("utf-8", errors="replace")
            i = text.find(_START)
            if i >= 0:
                j = text.find(_END, i)
                # The guide holds it as a JavaScript string literal: undo its escapes ("\n", "\'").
                return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text[i:j])
    raise MissingInput(f"{jar}: no Movies guide found in it")


def create_example(settings: Settings, example: Example | str = Example.MOVIES) -> Created:
    """Create ``example`` in the configured database, in one transaction; refused when the
    database already holds a node of its labels (a second run would duplicate every node)."""
    example = Example(example)
    jar = browser_jar(settings)
    script = movies_script(jar)
    with connect(settings) as conn:
        if conn.read("example_movies_present")[0]["present"]:
            raise UsageError("the database already holds Movie or Person nodes: the Movies graph is not created twice "
                               "(remove them first to start again)")
        summary = conn.driver.execute_query(script, database_=conn.target.database).summary
    c = summary.counters
    return Created(example.value, jar, c.nodes_created, c.relationships_created)
