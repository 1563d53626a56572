#!/usr/bin/env python
"""What each integration adds to gr-neo4j's own retrieval, and whether PyG's loader gives the same
subgraphs.

For each question, in an order that rotates: ``Retriever.retrieve`` (the baseline), PyG's ``RAGQueryLoader.query``
over ``neo4j_rag_stores``, neo4j-graphrag's ``GRetrieverRetriever.search`` and LangChain's
``GRetrieverLangChain.invoke`` (nothing recorded, so no adapter writes), all on one shared
``Retriever``. The JSON gives each one's latency percentiles, the median per-question overhead over
the baseline, and how many of the PyG loader's subgraphs have the baseline's node keys, in order.

    python scripts/bench_integrations.py --questions ../shared/datasets/metaqa/1-hop/qa_dev.txt \\
        --n 100 --out docs/bench/integrations_metaqa.json

Needs a running server with the dataset loaded (``gr-neo4j db start``, ``gr-neo4j load metaqa``)
and the extras ``[pyg,graphrag,langchain]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from benchlib.report import emit

REPO = Path(__file__).resolve().parents[1]
ADAPTERS = ("pyg", "graphrag", "langchain")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="metaqa")
    ap.add_argument("--questions", type=Path, default=REPO.parent / "shared" / "datasets" / "metaqa" / "1-hop" / "qa_dev.txt",
                    help="MetaQA-format questions (question<TAB>answers, the topic in [brackets])")
    ap.add_argument("--n", type=int, default=100, help="the first N questions")
    ap.add_argument("--warmup", type=int, default=5, help="questions asked first through every path, not timed")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    from torch_geometric.llm import RAGQueryLoader

    from gr_neo4j.integrations.graphrag import GRetrieverRetriever
    from gr_neo4j.integrations.langchain import GRetrieverLangChain
    from gr_neo4j.integrations.pyg import neo4j_rag_stores
    from gr_neo4j.retrieval import Retriever
    from gr_neo4j.settings import load_settings

    lines = args.questions.read_text(encoding="utf-8").splitlines()[: args.warmup + args.n]
    questions = [line.split("\t")[0].replace("[", "").replace("]", "") for line in lines]
    settings = load_settings()
    with Retriever(settings) as retriever:
        stores, local_filter = neo4j_rag_stores(dataset=args.dataset, retriever=retriever)
        loader = RAGQueryLoader(stores, subgraph_filter=local_filter)
        graphrag = GRetrieverRetriever(dataset=args.dataset, record=False, retriever=retriever)
        langchain = GRetrieverLangChain(dataset=args.dataset, record=False, retriever=retriever)
        run = {
            "retrieve": lambda q: retriever.retrieve(q, args.dataset),
            "pyg": loader.query,
            "graphrag": lambda q: graphrag.search(query_text=q),
            "langchain": langchain.invoke,
        }
        ms: dict[str, list[float]] = {k: [] for k in run}
        same = 0
        for i, question in enumerate(questions):
            out = {}
            names = list(run)
            # A different path goes first each question: the first to ask warms Neo4j's caches for the others.
            for name in names[i % len(names):] + names[: i % len(names)]:
                began = time.perf_counter()
                out[name] = run[name](question)
                if i >= args.warmup:
                    ms[name].append(1000 * (time.perf_counter() - began))
            if i >= args.warmup:
                same += out["pyg"].node_keys == [n.key for n in out["retrieve"].nodes]
    timed = len(ms["retrieve"])
    report = {
        "dataset": args.dataset,
        "questions": str(args.questions),
        "n": timed,
        "latency_ms": {k: percentiles(v) for k, v in ms.items()},
        "overhead_ms_p50": {k: round(statistics.median(a - b for a, b in zip(ms[k], ms["retrieve"])), 2) for k in ADAPTERS},
        "pyg_same_subgraph": same,
        "target_overhead_ms_p50": 5.0,
    }
    emit(report, args.out)


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 2), "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2)}


if __name__ == "__main__":
    main()
