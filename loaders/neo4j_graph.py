"""A graph already in Neo4j, adopted as it stands: `gr-neo4j load neo4j --name NAME`.

The source is the configured database itself. The user's nodes (every label but gr-neo4j's own, or
those of ``--labels``) and relationships (every type between them, or those of
``--relationship-types``) are read in read transactions and never written: gr-neo4j keeps its own
copy, a dataset like any other, so retrieval, Browser, `drop` and `train-paths` need nothing new.

- A node becomes an entity whose text is its text property: per label, ``--text Label=property``
  or the first of :data:`TEXT_PROPERTIES` its nodes hold. It is keyed by that text, or by the text
  and its element id where two adopted nodes share a text.
- A relationship becomes a relation whose text is its type read as words (``ACTED_IN`` ->
  "acted in", ``directedBy`` -> "directed by").
- Every other property (text, number, boolean, date or time; each item of a list) becomes a
  relation from its node to a value entity, named by the property ("released" -> "1999"). A
  relationship's properties link both its ends to the value ("roles" -> "Neo" from Keanu Reeves
  and from The Matrix), so "what role did Keanu Reeves play in The Matrix" is where the two
  names meet. Points and byte arrays have no text and are left out. A text over
  :data:`KEY_TEXT_BYTES` is keyed by its start and a digest (Neo4j indexes keys of 8,000 bytes
  at most); over the loaders' 16 KB it is a bad record.

Errors name the label, type, property or node, and come before anything is written: a label or
type that is not in the database, a label whose nodes have no text property, a relationship type
with no letter to read, a value over the loaders' size limit (one bad record each).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gr_neo4j.connection import connect
from gr_neo4j.errors import MissingInput
from gr_neo4j.ingest.records import KNOWLEDGE_GRAPH, BadRecord, Edge, Fragment, Node
from gr_neo4j.ingest.source import DatabaseSource, LoaderSpec
from gr_neo4j.schema import OWN_LABELS, OWN_TYPES

NAME = "neo4j"
# The property that names a node, in order of preference, when --text does not say.
TEXT_PROPERTIES = ("name", "title", "text", "label", "caption", "displayName", "display_name", "id")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# A key goes into uids that Neo4j indexes (at most 8,000 bytes, records.MAX_KEY_BYTES): a longer
# text (a plot, a review) is keyed by its start and a digest, and keeps its whole text.
KEY_TEXT_BYTES = 512


def key_of(text: str) -> str:
    """The entity key of ``text``: the text itself, or its first 120 characters and a digest."""
    raw = text.encode("utf-8", "surrogatepass")
    return text if len(raw) <= KEY_TEXT_BYTES else f"{text[:120]}… #{hashlib.sha1(raw).hexdigest()[:16]}"


def words(name: str) -> str:
    """A relationship type or property name read as words: ``ACTED_IN`` -> "acted in",
    ``releaseYear`` -> "release year", ``imdb-rating`` -> "imdb rating"; "" when it has no
    letter or digit."""
    spaced = _CAMEL.sub(" ", name) if not name.isupper() else name
    return " ".join(w for w in re.split(r"[^0-9A-Za-z]+", spaced.casefold()) if w)


@dataclass(frozen=True)
class Plan:
    """What an adoption reads: the labels (each with its text property) and the types."""

    text_of: dict[str, str]
    types: tuple[str, ...]


def plan(source: DatabaseSource, label_rows: Sequence[Mapping[str, Any]], type_rows: Sequence[Mapping[str, Any]]) -> Plan:
    """Check ``source`` against the database's labels (``adopt_labels`` rows) and types
    (``adopt_types`` rows): a :class:`MissingInput` names the first thing that does not fit."""
    held: dict[str, dict[str, int]] = {}
    nodes: dict[str, int] = {}
    for r in label_rows:
        if r["key"] is None:
            nodes[r["label"]] = r["n"]
        else:
            held.setdefault(r["label"], {})[r["key"]] = r["n"]
    counts = {r["type"]: r["n"] for r in type_rows}
    if not nodes:
        raise MissingInput("the database holds no nodes of its own to adopt (only gr-neo4j's)")
    for label in source.labels:
        if label not in nodes:
            raise MissingInput(f"--labels: no label {label!r} in the database (labels: {', '.join(sorted(nodes))})")
    for rel_type in source.types:
        if rel_type not in counts:
            raise MissingInput(f"--relationship-types: no relationship type {rel_type!r} in the database (types: {', '.join(sorted(counts)) or 'none'})")
    labels = source.labels or tuple(sorted(nodes))
    for label, prop in source.text.items():
        if label not in labels:
            raise MissingInput(f"--text {label}={prop}: {label!r} is not a label adopted ({', '.join(labels)})")
        if prop not in held.get(label, {}):
            raise MissingInput(f"--text {label}={prop}: no {label} node has a property {prop!r} (they have: {', '.join(sorted(held.get(label, {}))) or 'none'})")
    text_of = {}
    for label in labels:
        prop = source.text.get(label) or next((p for p in TEXT_PROPERTIES if p in held.get(label, {})), None)
        if prop is None:
            have = ", ".join(sorted(held.get(label, {}))) or "none"
            count = f"{nodes[label]:,} node" + ("s" if nodes[label] != 1 else "")
            raise MissingInput(f"label {label!r} ({count}) has no text property (none of {', '.join(TEXT_PROPERTIES)}; "
                               f"it has: {have}): pass --text {label}=PROPERTY, or leave it out with --labels")
        text_of[label] = prop
    types = source.types or tuple(sorted(counts))
    for rel_type in types:
        if not words(rel_type):
            raise MissingInput(f"relationship type {rel_type!r} has no letter or digit to read as a relation text: "
                               "leave it out with --relationship-types")
    return Plan(text_of, types)


def values(value: Any) -> list[str]:
    """The texts of a property value: one per item of a list; none for a point or bytes."""
    items = value if isinstance(value, list) else [value]
    out = []
    for v in items:
        if isinstance(v, bool | int | float | str):
            text = str(v).strip()
        elif hasattr(v, "iso_format"):  # neo4j.time Date, DateTime, Time, Duration
            text = v.iso_format()
        else:  # a point, bytes: nothing a question names
            continue
        if text:
            out.append(text)
    return out


def read(source: DatabaseSource, splits: set[str] | None = None, limit: int | None = None) -> Iterator[Fragment | BadRecord]:
    """The fragments of the adopted graph: a node and each of its properties, then each
    relationship and its properties (``splits`` and ``limit`` do not apply: the graph is whole)."""
    with connect(source.settings) as conn:
        p = plan(source, conn.read("adopt_labels", own_labels=list(OWN_LABELS)), conn.read("adopt_types", own_types=list(OWN_TYPES)))
        labels = list(p.text_of)
        nodes = conn.read("adopt_nodes", labels=labels, own_labels=list(OWN_LABELS))
        rels = conn.read("adopt_relationships", labels=labels, types=list(p.types), own_labels=list(OWN_LABELS))
    where = f"{source}"
    named: dict[str, tuple[str, str, str]] = {}  # element id -> (label, text property, text)
    for n in nodes:
        label = next(x for x in n["labels"] if x in p.text_of)
        prop = p.text_of[label]
        text = values(n["properties"].get(prop))
        if not text:
            yield BadRecord(f"{where}: node {n['id']} (:{label})", f"no text: its {prop!r} property is missing or empty")
            continue
        named[n["id"]] = (label, prop, text[0])
    shared = Counter(text for _, _, text in named.values())
    keys = {i: key_of(text) if shared[text] == 1 else f"{key_of(text)} [{i}]" for i, (_, _, text) in named.items()}
    for n in nodes:
        if n["id"] not in named:
            continue
        label, prop, text = named[n["id"]]
        node = Node("", keys[n["id"]], text)
        at = f"{where}: node {n['id']} (:{label})"
        yield Fragment(at, nodes=[node])
        for name, value in sorted(n["properties"].items()):
            if name != prop:
                yield from _property(f"{at} property {name!r}", [node], name, value)
    for r in rels:
        if r["head"] not in keys or r["tail"] not in keys:
            continue  # an end without text: reported above
        head, tail = (Node("", keys[r[end]], named[r[end]][2]) for end in ("head", "tail"))
        at = f"{where}: relationship {r['id']} [:{r['type']}]"
        yield Fragment(at, nodes=[head, tail], edges=[Edge("", head.key, r["type"], tail.key, words(r["type"]))])
        for name, value in sorted(r["properties"].items()):
            yield from _property(f"{at} property {name!r}", [head, tail], name, value)


def _property(at: str, owners: list[Node], name: str, value: Any) -> Iterator[Fragment | BadRecord]:
    """One fragment per text of a property: each owner related to the value's entity."""
    relation = words(name)
    if not relation:
        yield BadRecord(at, "the property name has no letter or digit to read as a relation text")
        return
    for text in values(value):
        v = Node("", key_of(text), text)
        yield Fragment(at, nodes=[*owners, v], edges=[Edge("", o.key, name, v.key, relation) for o in owners])


LOADER = LoaderSpec(
    name=NAME,
    kind=KNOWLEDGE_GRAPH,
    splits=(),
    read=read,
    default_path=lambda: None,
    path_help="nothing: the graph is read from the configured database (--labels, --relationship-types, --text)",
    renamable=True,
    from_database=True,
)


def user_graph_checksum(conn) -> str:
    """SHA-256 over the user's nodes and relationships with their labels, types and properties
    (everything but gr-neo4j's own labels): equal before and after `load neo4j`, a re-run and
    `drop`, because adopting only reads the user's graph."""
    own = list(OWN_LABELS)
    rows = [*conn.read("adopt_checksum_nodes", own_labels=own), *conn.read("adopt_checksum_relationships", own_labels=own)]
    lines = sorted(json.dumps(row.data(), sort_keys=True, default=str) for row in rows)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()
