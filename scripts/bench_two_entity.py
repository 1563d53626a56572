"""Benchmark: questions that name two entities ("which films did Tom Hanks act in that were directed
by Robert Zemeckis"), generated from the knowledge graph itself with a fixed seed.

Needs MetaQA loaded (`gr-neo4j load metaqa`). The pairs are read from Neo4j
(`cypher/bench_shared_films.cypher`): an actor and a director (or writer) of the same film; the gold
answers are every film the KB links to both. Each pair is asked in one of a few phrasings, as a
person types it, and retrieved twice with the defaults of `gr-neo4j ask`:

* baseline: `--no-link`, the vector hits are the only seeds (what `ask` did before entity linking);
* ours: both names linked, and the `paths` mode starts from where their walks meet.

Prints one JSON document: for each, the share of questions whose two names were both linked,
answer recall (any gold film in the subgraph), all-answers recall, mean nodes and p50/p95 latency;
the target (answer recall >= 0.90); and the README demo question's films.

    python scripts/bench_two_entity.py [--count 150] [--seed 0] [--dataset metaqa] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import random

import numpy as np
from benchlib.report import emit

from gr_neo4j.metrics import percentiles
from gr_neo4j.retrieval import RetrievalParams, Retriever
from gr_neo4j.settings import load_settings

TARGET = 0.90
DEMO = ("which films did Tom Hanks act in that were directed by Robert Zemeckis", ["Forrest Gump", "The Polar Express"])
# (relation from the film to the first entity, to the second, phrasings with {first} and {second})
KINDS = [
    ("starred actors", "directed by", [
        "which films did {first} act in that were directed by {second}",
        "what movies directed by {second} star {first}",
        "{first} starred in which films directed by {second}",
    ]),
    ("starred actors", "written by", [
        "which movies written by {second} did {first} appear in",
        "what films starring {first} were written by {second}",
    ]),
]


def generate(retriever: Retriever, dataset: str, count: int, seed: int) -> list[dict]:
    """``count`` questions (split evenly over KINDS), each {question, first, second, answers}."""
    rng = random.Random(seed)
    out = []
    for k, (first_rel, second_rel, phrasings) in enumerate(KINDS):
        rows = retriever.conn.read("bench_shared_films", dataset=dataset, first_rel=first_rel, second_rel=second_rel)
        want = count // len(KINDS) + (k < count % len(KINDS))
        for r in rng.sample(rows, min(want, len(rows))):
            text = rng.choice(phrasings).format(first=r["first"], second=r["second"])
            out.append({"question": text, "first": r["first"], "second": r["second"], "answers": list(r["shared"])})
    return out


def run(retriever: Retriever, dataset: str, questions: list[dict], params: RetrievalParams) -> dict:
    linked = hits = full = 0
    nodes, total = [], []
    for q in questions:
        res = retriever.retrieve(q["question"], dataset, params=params)
        keys = {n.key for n in res.nodes}
        gold = set(q["answers"])
        linked += {q["first"], q["second"]} <= {x.key for x in res.linked}
        hits += bool(gold & keys)
        full += gold <= keys
        nodes.append(len(res.nodes))
        total.append(res.timings.total_ms)
    n = len(questions)
    return {
        "both_linked": round(linked / n, 4),
        "answer_recall": round(hits / n, 4),
        "all_answers_recall": round(full / n, 4),
        "mean_nodes": round(float(np.mean(nodes)), 1),
        "total_ms": percentiles(total),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dataset", default="metaqa")
    ap.add_argument("--out", help="also write the generated questions (JSON lines) here")
    args = ap.parse_args()
    with Retriever(load_settings()) as r:
        r.warm(args.dataset, 2)
        questions = generate(r, args.dataset, args.count, args.seed)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
        demo = r.retrieve(DEMO[0], args.dataset)
        report = {
            "dataset": args.dataset,
            "questions": len(questions),
            "seed": args.seed,
            "parameters": RetrievalParams().to_json(),
            "baseline_vector_seeds": run(r, args.dataset, questions, RetrievalParams(link=False)),
            "ours_linked": run(r, args.dataset, questions, RetrievalParams()),
            "target_answer_recall": TARGET,
            "demo": {
                "question": DEMO[0],
                "linked": [x.key for x in demo.linked],
                "expected": DEMO[1],
                "retrieved": [k for k in DEMO[1] if k in {n.key for n in demo.nodes}],
                "nodes": len(demo.nodes),
            },
        }
    emit(report)


if __name__ == "__main__":
    main()
