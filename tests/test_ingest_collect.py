"""The parse phase holds each shared string once: a relationship row's head and tail are its
entities' uid strings and a relation text repeated over many triples is one object (the parsed
rows of a 10x MetaQA load are about 1.3M relationships)."""

from __future__ import annotations

import sys

from gr_neo4j.ingest.collect import Collected
from gr_neo4j.ingest.records import Edge, Fragment, Node


def triple(line: int, head: str, relation: str, tail: str) -> Fragment:
    # new string objects per record, as a file reader makes them
    text = "".join(relation.replace("_", " "))
    return Fragment(f"kb.txt:{line}", nodes=[Node("", head, head), Node("", tail, tail)], edges=[Edge("", head, relation, tail, text)])


def test_relationships_share_their_entities_uids_and_relation_texts():
    collected = Collected("kb")
    collected.add_all(triple(i, f"film {i % 7}", "directed_by", f"person {i}") for i in range(50))
    collected.add_all(triple(100 + i, f"film {i % 7}", "release_year", "1999") for i in range(50))
    assert len(collected.entities) == 7 + 50 + 1 and len(collected.rels) == 57
    for row in collected.rels.values():
        assert row["head"] is collected.entities[row["head"]]["uid"]
        assert row["tail"] is collected.entities[row["tail"]]["uid"]
    texts = {id(row["text"]) for row in collected.rels.values()}
    assert len(texts) == 2
    assert {row["text"] for row in collected.rels.values()} == {"directed by", "release year"}


def test_the_parsed_rows_of_a_triple_stay_under_a_bound():
    """Measured, not estimated: the memory of the rows of 20,000 triples over 2,000 films (the
    dicts and the strings that only they hold), per triple."""
    collected = Collected("kb")
    collected.add_all(triple(i, f"film number {i % 2000}", ("directed_by", "starred_actors")[i % 2], f"person number {i}") for i in range(20_000))
    seen: set[int] = set()

    def size(obj) -> int:
        if id(obj) in seen:
            return 0
        seen.add(id(obj))
        inner = sum(size(v) for v in obj.values()) if isinstance(obj, dict) else 0
        return sys.getsizeof(obj) + inner

    total = size(collected.entities) + size(collected.rels)
    total += sum(size(row) for rows in (collected.entities, collected.rels) for row in rows.values())
    per_triple = total / len(collected.rels)
    # About 800 bytes here (1.1 entities per triple); 1,000 when head, tail and text were new
    # strings in every row.
    assert per_triple < 850, per_triple
