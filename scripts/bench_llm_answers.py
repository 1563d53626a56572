"""Benchmark: MetaQA answered from the same retrieved subgraphs by the graph itself and by the LLM
zero-shot, held to the subgraph or free, in one run.

For the first --limit questions of each hop count (as `gr-neo4j eval-retrieval`: typed without
MetaQA's brackets, retrieved as `ask` retrieves them: the `paths` mode with the dataset's stored
ranker, the depth predicted by its hop model), each subgraph is retrieved once and answered three
ways:

1. the graph's own answers (the `paths` selection's, no model: what `ask` answers by default);
2. the default LLM zero-shot behind G-Retriever's prompt (textualised subgraph and question, no
   graph token), its decoding held to the subgraph's node texts or "not in the graph" (`auto`);
3. the same LLM free, as in the paper.

Per hop and overall: Hit@1 (an answer item matches a gold answer), answer-set precision / recall /
F1, the share of answers naming something outside the subgraph, and answers per second. Needs a
running database holding the dataset (the configured one); it loads and trains nothing. Prints one
JSON document (and writes it to --out).

    python scripts/bench_llm_answers.py [--dataset metaqa] [--hops 1,2,3] [--limit 100] [--batch-size 8] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from benchlib.report import emit

from gr_neo4j.defaults import Decoding
from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.metrics import SEPARATOR, score
from gr_neo4j.retrieval.batch import questions_of
from gr_neo4j.retrieval.linking import unbracketed
from gr_neo4j.retrieval.params import RetrievalParams
from gr_neo4j.retrieval.retriever import Retriever
from gr_neo4j.samples import SubgraphSample
from gr_neo4j.settings import load_settings


def retrieved_samples(r: Retriever, dataset: str, hops: list[int], limit: int) -> tuple[list[SubgraphSample], list[str], dict[int, list[int]]]:
    """(samples, the graph's own answer of each, sample rows per hop count)."""
    samples, graph_answers, rows = [], [], {}
    for h in hops:
        rows[h] = []
        for q in questions_of(r, dataset, None, hops=h, limit=limit):
            res = r.retrieve(unbracketed(q.text), dataset, params=RetrievalParams())
            rows[h].append(len(samples))
            samples.append(SubgraphSample(id=q.uid, question=res.question, label=SEPARATOR.join(q.answers), desc=res.desc,
                                          data=res.data, dataset=dataset, node_texts=[n.text for n in res.nodes],
                                          topic=[n.topic for n in res.nodes]))
            graph_answers.append(SEPARATOR.join(res.nodes[i].text for i in res.graph_answers))
    return samples, graph_answers, rows


def figures(dataset: str, predictions: list[str], samples: list[SubgraphSample], rows: dict[int, list[int]], seconds: float) -> dict:
    def scored(idx: list[int]) -> dict:
        s = score(dataset, [predictions[i] for i in idx], [samples[i].label for i in idx], [samples[i].node_texts for i in idx])
        return {"hit@1": round(s.value, 4), "precision": round(s.precision, 4), "recall": round(s.recall, 4),
                "f1": round(s.f1, 4), "outside": round(s.outside_rate, 4), "questions": s.total}

    return {"all": scored(list(range(len(samples)))), "hops": {str(h): scored(idx) for h, idx in rows.items()},
            "answers_per_s": round(len(samples) / seconds, 2) if seconds else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="metaqa")
    parser.add_argument("--hops", default="1,2,3", help="comma-separated hop counts")
    parser.add_argument("--limit", type=int, default=100, help="questions per hop count (the first, in uid order)")
    parser.add_argument("--batch-size", type=int, default=8, help="LLM answers generated together")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    try:
        hops = [int(h) for h in args.hops.split(",")]
    except ValueError:
        raise SystemExit(f"--hops: comma-separated whole numbers such as 1,2,3, got {args.hops!r}") from None
    if args.limit < 1 or args.batch_size < 1:
        raise SystemExit("--limit and --batch-size must be at least 1")

    began = time.perf_counter()
    try:
        settings = load_settings()
        with Retriever(settings) as r:
            info = r.knowledge_graph(args.dataset, "bench_llm_answers")
            r.warm(info.name, max(hops))
            samples, graph_answers, rows = retrieved_samples(r, info.name, hops, args.limit)
    except GrNeo4jError as exc:  # no database, no such dataset or hop count: one line, as the CLI says it
        raise SystemExit(str(exc)) from None
    if not samples:
        raise SystemExit(f"dataset {info.name!r} has no questions with hops {args.hops}")
    retrieve_s = time.perf_counter() - began

    from gr_neo4j.model import GRetrieverModel, answer  # torch, transformers: only once the retrieval is done
    from gr_neo4j.model.checkpoint import load_llm_named

    began = time.perf_counter()
    llm, tokenizer = load_llm_named("", settings)
    model = GRetrieverModel.llm_only(llm, tokenizer, "")
    llm_load_s = time.perf_counter() - began
    report = {
        "dataset": info.name, "questions_per_hop": args.limit, "retrieval": "as ask: paths mode, stored ranker, depth predicted",
        "retrieve_s": round(retrieve_s, 1), "llm_load_s": round(llm_load_s, 1), "cpus": os.cpu_count(),
        "load_average_before": round(os.getloadavg()[0], 2),
        "mean_nodes": round(sum(len(s.node_texts) for s in samples) / len(samples), 1),
        "graph_answers": figures(info.name, graph_answers, samples, rows, 0.0),
    }
    for decoding in (Decoding.AUTO, Decoding.FREE):
        began = time.perf_counter()
        predictions = answer(model, samples, args.batch_size, decoding=decoding)
        report[f"llm_zero_shot_{decoding}"] = figures(info.name, predictions, samples, rows, time.perf_counter() - began)
        report[f"llm_zero_shot_{decoding}"]["examples"] = [
            {"question": s.question, "gold": s.label, "answer": p} for s, p in list(zip(samples, predictions))[:: max(1, len(samples) // 5)]
        ]
    report["load_average_after"] = round(os.getloadavg()[0], 2)
    emit(report, args.out)


if __name__ == "__main__":
    main()
