"""Benchmark: does `ask` say "not in the graph" when the graph does not hold the answer?

Generates, with a fixed seed, questions a knowledge graph cannot answer, in three kinds:

* **names not in it**: the graph's own relations asked about invented names ("who directed
  Varnel Oskatrin");
* **relations not in it**: real entities of the graph asked for what no relation of it holds ("what
  is the population of <entity>");
* **other topics**: general questions that name nothing in a film graph ("how far is the moon").

Each is retrieved as `ask` retrieves it (the defaults: linking, the `paths` mode, the depth
read or predicted) and counts as abstained when the result is "not in the graph". As a control,
the dataset's own questions per hop count after the first 300 are asked the same way, those whose
named entity or answers the graph holds (answerable): the share abstained there should be small.
Prints one JSON document.

    python scripts/bench_abstention.py [--dataset metaqa] [--count 120] [--control 100] [--seed 0] [--untrained] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import sys

from benchlib.report import emit

from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.retrieval import RetrievalParams, Retriever
from gr_neo4j.retrieval.batch import questions_of
from gr_neo4j.retrieval.linking import unbracketed
from gr_neo4j.settings import load_settings

SYLLABLES = ["var", "nel", "osk", "atr", "quel", "lin", "mor", "dav", "zet", "rik", "pol", "bran", "dor", "ves", "tal", "mir", "gon", "sel"]
# Phrasings that ask a relation of the graph about a name: {rel} is a relation text, {name} the name.
NAME_FORMS = ["what is the {rel} of {name}", "who is the {rel} of {name}", "{name} {rel} what", "which {rel} does {name} have"]
ABSENT = ["what is the population of {name}", "what is the capital of {name}", "how tall is {name}", "who is the spouse of {name}",
          "where was {name} born", "what currency does {name} use", "how many employees does {name} have",
          "what is the phone number of {name}", "which university did {name} attend", "what is the boiling point of {name}"]
TOPICS = ["how far is the moon from the earth", "what is the boiling point of water", "who won the football world cup in 1998",
          "what is the square root of two", "how many bones are in the human body", "what is the tallest mountain on earth",
          "which element has the atomic number six", "what is the speed of light", "how do vaccines work",
          "what causes the tides", "what is the largest ocean", "when did the roman empire fall", "what is photosynthesis",
          "how many legs does a spider have", "what is the chemical formula of table salt", "who painted the sistine chapel ceiling",
          "what is the longest river in africa", "how does a transistor work", "what is the freezing point of mercury",
          "which planet has the most moons"]


def invented(rng: random.Random) -> str:
    """A two-word name of made-up syllables, capitalised as a name is typed."""
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize() for _ in range(2))


def generate(r: Retriever, dataset: str, count: int, seed: int) -> list[tuple[str, str]]:
    """(kind, question) pairs: ``count`` split over the three kinds, seeded."""
    rng = random.Random(seed)
    rels = r.vocab(dataset).texts
    third = count // 3
    names = [("names not in it", rng.choice(NAME_FORMS).format(rel=rng.choice(rels), name=invented(rng))) for _ in range(third)]
    pool = [row["text"] for row in r.conn.read("bench_sample_entities", dataset=dataset, skip=0, limit=5000)]
    absent = [("relations not in it", rng.choice(ABSENT).format(name=rng.choice(pool))) for _ in range(third)]
    topics = [("other topics", TOPICS[i % len(TOPICS)]) for i in range(count - 2 * third)]
    return names + absent + topics


def abstains(r: Retriever, question: str, dataset: str, params: RetrievalParams) -> bool:
    return r.retrieve(question, dataset, params=params).not_in_graph is not None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="metaqa")
    ap.add_argument("--count", type=int, default=120, help="out-of-graph questions (split over the three kinds)")
    ap.add_argument("--control", type=int, default=100, help="the dataset's own questions per hop count (answerable)")
    ap.add_argument("--hops", default="1,2,3", help="hop counts of the control questions")
    ap.add_argument("--skip", type=int, default=300, help="control questions start after this many per hop count (eval-retrieval's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--untrained", action="store_true", help="ask without the dataset's trained ranker and hop model (zero-shot)")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    try:
        hops = [int(x) for x in args.hops.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--hops takes hop counts separated by commas, got {args.hops!r}")
    if args.count < 3 or args.control < 0 or args.skip < 0 or any(h < 1 for h in hops):
        ap.error("--count must be at least 3 (one question per kind), --control and --skip not negative, --hops at least 1")
    params = RetrievalParams(path_ranker=not args.untrained)
    try:
        with Retriever(load_settings()) as r:
            r.knowledge_graph(args.dataset, "bench_abstention")
            by_kind: dict[str, list[bool]] = {}
            examples: dict[str, list[dict]] = {}
            for kind, q in generate(r, args.dataset, args.count, args.seed):
                res = r.retrieve(q, args.dataset, params=params)
                by_kind.setdefault(kind, []).append(res.not_in_graph is not None)
                if len(examples.setdefault(kind, [])) < 3:
                    examples[kind].append({"question": q, "not_in_graph": res.not_in_graph})
            control = {}
            for h in hops:
                qs = questions_of(r, args.dataset, None, hops=h, limit=args.control, skip=args.skip)
                # A question whose named entity or answers the graph lacks (MetaQA's KB misses a few
                # percent of its triples) is not in the graph: it is no control.
                held = [q for q in qs if q.topic_keys and q.answer_keys]
                if held:
                    said = [abstains(r, unbracketed(q.text), args.dataset, params) for q in held]
                    control[str(h)] = {"questions": len(said), "left_out": len(qs) - len(held), "abstained": round(sum(said) / len(said), 4)}
    except GrNeo4jError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    flat = [x for v in by_kind.values() for x in v]
    report = {
        "dataset": args.dataset, "seed": args.seed, "ranker": "untrained (zero-shot)" if args.untrained else "as stored",
        "out_of_graph": {"questions": len(flat), "abstained": round(sum(flat) / len(flat), 4),
                         "by_kind": {k: {"questions": len(v), "abstained": round(sum(v) / len(v), 4)} for k, v in by_kind.items()}},
        "in_graph_control": control, "examples": examples,
        "targets": {"out_of_graph_abstained": ">= 0.90", "in_graph_abstained": "<= 0.02"},
    }
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
