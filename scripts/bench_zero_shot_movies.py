"""Benchmark: zero-shot answers on a graph nobody has questions for, Neo4j's Movies graph.

The Movies graph (`:play movies`, read from the `neo4j-browser` jar that `gr-neo4j db install`
fetches) is written as triples (relationships, release and birth years) and loaded with
`load triples` as dataset `movies`, as a user's own file would be. Questions are generated from
the triples with fixed, hand-written phrasings per relation and direction ("who directed
{movie}", "which movies did {person} act in", "when was {person} born"); none of them is used for
anything but this measurement. Each is asked as `ask` retrieves (linking, the `paths` mode, the
depth read from the question, no trained ranker) and counts as a hit when the first answer the
graph gives is a right one. Prints one JSON document, per relation and overall.

    python scripts/bench_zero_shot_movies.py [--seed 0] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from benchlib.movies import triples
from benchlib.report import emit

from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.examples import browser_jar, movies_script
from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.retrieval import RetrievalParams, Retriever
from gr_neo4j.settings import load_settings

DATASET = "movies"
# (relation, asked about its head?) -> phrasings; {x} is the entity asked about.
FORMS = {
    ("acted in", False): ["who acted in {x}", "which actors starred in {x}", "who played in {x}"],
    ("acted in", True): ["which movies did {x} act in", "what films has {x} acted in"],
    ("directed", False): ["who directed {x}", "who was the director of {x}"],
    ("directed", True): ["which movies did {x} direct", "what did {x} direct"],
    ("produced", False): ["who produced {x}", "who was the producer of {x}"],
    ("produced", True): ["which films did {x} produce"],
    ("wrote", False): ["who wrote {x}", "who was the writer of {x}"],
    ("wrote", True): ["what movies did {x} write"],
    ("released", True): ["when was {x} released", "what year was {x} released"],
    ("born", True): ["when was {x} born", "in what year was {x} born"],
    ("reviewed", False): ["who reviewed {x}"],
    ("follows", True): ["who does {x} follow"],
    ("follows", False): ["who follows {x}"],
}


def questions(rows, rng: random.Random) -> list[tuple[str, str, set[str]]]:
    """(relation key, question, right answers): one per entity, relation and direction."""
    gold: dict[tuple[str, bool, str], set[str]] = defaultdict(set)
    for t in rows:
        gold[(t.relation, True, t.head)].add(t.tail)
        gold[(t.relation, False, t.tail)].add(t.head)
    out = []
    for (rel, from_head, x), answers in sorted(gold.items()):
        forms = FORMS.get((rel, from_head))
        if forms:
            out.append((f"{'' if from_head else '~'}{rel}", rng.choice(forms).format(x=x), answers))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    settings = load_settings()
    try:
        rows = triples(movies_script(browser_jar(settings)))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "movies.tsv"
            path.write_text("".join(f"{t.head}\t{t.relation}\t{t.tail}\n" for t in rows), encoding="utf-8")
            load_dataset(settings, "triples", path, as_name=DATASET)
        params = RetrievalParams(path_ranker=False)
        by_rel: dict[str, list[bool]] = defaultdict(list)
        misses = []
        with Retriever(settings) as r:
            for key, q, answers in questions(rows, random.Random(args.seed)):
                res = r.retrieve(q, DATASET, params=params)
                first = res.nodes[res.graph_answers[0]].text if res.graph_answers else None
                by_rel[key].append(first in answers)
                if first not in answers and len(misses) < 20:
                    misses.append({"question": q, "got": first, "not_in_graph": res.not_in_graph,
                                   "path": [("~" if b else "") + t for t, b in res.path]})
    except GrNeo4jError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    flat = [x for v in by_rel.values() for x in v]
    report = {
        "dataset": DATASET, "triples": len(rows), "seed": args.seed, "ranker": "untrained (zero-shot)",
        "hit_at_1": round(sum(flat) / len(flat), 4), "questions": len(flat),
        "by_relation": {k: {"questions": len(v), "hit_at_1": round(sum(v) / len(v), 4)} for k, v in sorted(by_rel.items())},
        "misses": misses, "target": {"hit_at_1": ">= 0.90"},
    }
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
