"""Benchmark: a small dataset answers alike alone and beside a large one in the same database.

In a temporary managed Neo4j (its jars from `GR_NEO4J_DIST`, else this home's), Neo4j's Movies
graph is created by its Browser script and stored twice, as a user would: adopted as it stands
(`load neo4j --name movies`) and written out as triples (`load triples --name movies_triples`).
Every question of `bench_zero_shot_movies.py` (one per entity, relation and direction, seeded) and
a few the graph cannot answer are asked of both, as `ask` retrieves (linking, `paths`, no trained
ranker). Then the whole MetaQA knowledge graph (43k entities, whose film texts sit where these
questions are) is loaded beside them and every question is asked again. A question counts as alike
when its retrieved nodes, its graph answers and its "not in the graph" reason are all identical.
Prints one JSON document.

    python scripts/bench_isolation.py [--metaqa DIR] [--seed 0] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from bench_zero_shot_movies import questions
from benchlib.movies import triples
from benchlib.report import emit
from benchlib.server import temporary_server

from gr_neo4j.embedder import load_embedder
from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.examples import browser_jar, create_example, movies_script
from gr_neo4j.ingest import DatabaseSource, get_loader
from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.retrieval import RetrievalParams, Retriever

SMALL = ("movies", "movies_triples")
OUT_OF_GRAPH = ["who directed Titanic", "tell me about films", "what is the capital of France",
                "who wrote The Godfather", "which movies did Christopher Nolan direct"]


def answers(settings, asked: list[str]) -> dict[str, list[dict]]:
    """Per small dataset, per question: what `ask` retrieved (node keys), answered and refused."""
    params = RetrievalParams(path_ranker=False)
    out: dict[str, list[dict]] = {}
    with Retriever(settings) as r:
        for dataset in SMALL:
            rows = []
            for q in asked:
                res = r.retrieve(q, dataset, params=params)
                rows.append({"question": q, "nodes": sorted(n.key for n in res.nodes),
                             "answers": [res.nodes[i].key for i in res.graph_answers], "not_in_graph": res.not_in_graph})
            out[dataset] = rows
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--metaqa", type=Path, default=None, help="MetaQA directory (kb.txt); default: the shared datasets")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    metaqa = args.metaqa or get_loader("metaqa").default_path()
    if metaqa is None or not (metaqa / "kb.txt").is_file():
        print(f"error: no MetaQA kb.txt in {metaqa or 'the shared datasets'}: pass --metaqa DIR", file=sys.stderr)
        return 2
    try:
        with temporary_server("gr-neo4j-bench-isolation-", heap="2g", pagecache="1g") as (settings, root):
            create_example(settings, "movies")
            embedder = load_embedder(settings)
            rows = triples(movies_script(browser_jar(settings)))
            tsv = root / "movies.tsv"
            tsv.write_text("".join(f"{t.head}\t{t.relation}\t{t.tail}\n" for t in rows), encoding="utf-8")
            adopted = load_dataset(settings, "neo4j", path=DatabaseSource(settings), as_name="movies", embedder=embedder)
            exported = load_dataset(settings, "triples", path=tsv, as_name="movies_triples", embedder=embedder)
            asked = [q for _, q, _ in questions(rows, random.Random(args.seed))] + OUT_OF_GRAPH
            alone = answers(settings, asked)
            began = time.perf_counter()
            large = load_dataset(settings, "metaqa", path=metaqa, embedder=embedder)
            large_s = time.perf_counter() - began
            beside = answers(settings, asked)
    except GrNeo4jError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    per_dataset = {}
    for dataset, report in (("movies", adopted), ("movies_triples", exported)):
        differ = [{"question": a["question"], "alone": a, "beside": b} for a, b in zip(alone[dataset], beside[dataset], strict=True) if a != b]
        per_dataset[dataset] = {
            "entities": report.input_entities, "questions": len(asked), "alike": len(asked) - len(differ),
            "answered_alone": sum(bool(a["answers"]) for a in alone[dataset]),
            "not_in_graph_alone": sum(a["not_in_graph"] is not None for a in alone[dataset]),
            "differ": differ[:20],
        }
    emit({
        "large": {"dataset": "metaqa", "entities": large.input_entities, "relationships": large.input_relationships, "load_s": round(large_s, 1)},
        "small": per_dataset, "seed": args.seed, "ranker": "untrained (zero-shot)",
        "target": {"alike": "every question"},
    }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
