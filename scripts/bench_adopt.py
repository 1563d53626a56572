"""Benchmark: adopting a graph already in Neo4j (`load neo4j`), beside writing it out as triples.

In a temporary managed Neo4j (its jars from `GR_NEO4J_DIST`, else this home's), Neo4j's Movies
graph is created by its own Browser script (`gr-neo4j db example movies`), then

The embedding model is loaded once beforehand (a fresh home converts it first; timed apart) and
used by both loads.

- **ours**: `load neo4j --name movies` adopts it as it stands, a second run re-adopts it, `drop`
  removes the copy; each is timed, and a checksum of the user's nodes, relationships and properties
  is taken before and after each;
- **baseline**: the graph written out as triples (relationships, release and birth years: what a
  user exports by hand) and loaded with `load triples`, timed the same way.

Both are asked the same questions, including ones only properties answer ("what role did Keanu
Reeves play in The Matrix", "what is the tagline of The Matrix"). Prints one JSON document.

    python scripts/bench_adopt.py [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time

from benchlib.movies import triples
from benchlib.report import emit
from benchlib.server import temporary_server
from gr_neo4j.loaders.neo4j_graph import user_graph_checksum

from gr_neo4j.connection import connect
from gr_neo4j.embedder import load_embedder
from gr_neo4j.examples import browser_jar, create_example, movies_script
from gr_neo4j.ingest import DatabaseSource
from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.ingest.stats import drop_dataset
from gr_neo4j.retrieval import Retriever

# (question, right answers): relationships, node properties and relationship properties.
QUESTIONS = [
    ("who directed The Matrix", {"Lana Wachowski", "Lilly Wachowski"}),
    ("which movies did Tom Hanks act in", None),  # every ACTED_IN of Tom Hanks (read from the graph)
    ("when was The Matrix released", {"1999"}),
    ("when was Keanu Reeves born", {"1964"}),
    ("what role did Keanu Reeves play in The Matrix", {"Neo"}),
    ("what is the tagline of The Matrix", {"Welcome to the Real World"}),
    ("what rating did Jessica Thompson give Cloud Atlas", {"95"}),
    ("who produced The Matrix", {"Joel Silver"}),
]






def timed(fn):
    began = time.perf_counter()
    out = fn()
    return out, round(time.perf_counter() - began, 2)


def asked(settings, dataset: str, gold_acted: set[str]) -> dict:
    hits, rows = 0, []
    with Retriever(settings) as r:
        for q, gold in QUESTIONS:
            gold = gold if gold is not None else gold_acted
            res = r.retrieve(q, dataset)
            got = [res.nodes[i].text for i in res.graph_answers]
            ok = bool(got) and got[0] in gold
            hits += ok
            rows.append({"question": q, "first": got[0] if got else None, "hit": ok, "not_in_graph": res.not_in_graph})
    return {"hit_at_1": round(hits / len(QUESTIONS), 4), "questions": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()
    with temporary_server("gr-neo4j-bench-adopt-") as (settings, root):
        created = create_example(settings, "movies")
        # The embedding model once, outside both timed loads (a fresh home converts it first).
        embedder, model_s = timed(lambda: load_embedder(settings))
        rows = triples(movies_script(browser_jar(settings)))
        acted = {t.tail for t in rows if t.relation == "acted in" and t.head == "Tom Hanks"}
        with connect(settings) as conn:
            before = user_graph_checksum(conn)
            adopted, adopt_s = timed(lambda: load_dataset(settings, "neo4j", path=DatabaseSource(settings), as_name="movies", embedder=embedder))
            after_adopt = user_graph_checksum(conn)
            ours = asked(settings, "movies", acted)
            texts = sorted(r["t"] for r in conn.query("MATCH ()-[r:REL {dataset: 'movies'}]->() RETURN DISTINCT r.text AS t"))
            again, readopt_s = timed(lambda: load_dataset(settings, "neo4j", path=DatabaseSource(settings), as_name="movies", embedder=embedder))
            after_readopt = user_graph_checksum(conn)
            _, drop_s = timed(lambda: drop_dataset(settings, "movies"))
            after_drop = user_graph_checksum(conn)
            tsv = root / "movies.tsv"
            tsv.write_text("".join(f"{t.head}\t{t.relation}\t{t.tail}\n" for t in rows))
            baseline_report, baseline_s = timed(lambda: load_dataset(settings, "triples", path=tsv, as_name="movies_triples", embedder=embedder))
            baseline = asked(settings, "movies_triples", acted)
    emit({
        "embedding_model_load_s": model_s,
        "graph": {"created_nodes": created.nodes, "created_relationships": created.relationships, "from": created.jar.name},
        "ours": {
            "command": "gr-neo4j load neo4j --name movies",
            "adopt_s": adopt_s, "readopt_s": readopt_s, "drop_s": drop_s,
            "adopt_phases_s": {k: round(v, 2) for k, v in adopted.phase_seconds.items()},
            "entities": adopted.input_entities, "relationships": adopted.input_relationships,
            "readopt_written": again.written_entities + again.written_relationships,
            "relation_texts": texts,
            "user_graph_unchanged": {"adopt": after_adopt == before, "readopt": after_readopt == before, "drop": after_drop == before},
            **ours,
        },
        "baseline": {
            "command": "gr-neo4j load triples --name movies_triples (the graph exported by hand: relationships, release and birth years)",
            "load_s": baseline_s, "phases_s": {k: round(v, 2) for k, v in baseline_report.phase_seconds.items()}, "triples": len(rows), "entities": baseline_report.input_entities, **baseline,
        },
        "target": {"adopt_s": "< 30", "user_graph_unchanged": True},
    }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
