"""Benchmark: how well the question-conditioned node head (gr_neo4j.model.answer_head) picks the
answers out of retrieved MetaQA subgraphs, without any LLM.

Needs MetaQA loaded (`gr-neo4j load metaqa`; `gr-neo4j train-paths` first for today's default
retrieval). Questions are retrieved as typed (brackets removed, entities linked), like `ask`:
training on ``--train`` questions per hop after the first ``--skip`` (uid order), testing on the
first ``--test`` per hop, a part of dev disjoint from both the training slice and train-paths'
(1000-1999) when ``--skip`` is 2000. Baseline: the non-topic node most similar to the question.

Prints one JSON document: per hop, Hit@1 and answer-set precision / recall / F1 of the head and of
the baseline, the share of test subgraphs holding an answer at all, and the training time.

    python scripts/bench_answer_head.py [--train 600] [--skip 2000] [--test 300] [--epochs 10]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import torch
from benchlib.report import emit

from gr_neo4j.metrics import normalize, split_answers
from gr_neo4j.model.answer_head import AnswerHead, answer_mask, evaluate_head, train_head
from gr_neo4j.retrieval import RetrievalParams, Retriever
from gr_neo4j.retrieval.batch import questions_of
from gr_neo4j.retrieval.linking import unbracketed
from gr_neo4j.samples import SubgraphSample
from gr_neo4j.settings import load_settings


def samples_of(r: Retriever, dataset: str, hops: int, skip: int, limit: int) -> tuple[list[SubgraphSample], list[list[bool]]]:
    """Retrieved samples (as typed) and, per sample, which nodes are topic entities."""
    out, topics = [], []
    params = replace(RetrievalParams(), hops=hops)
    for q in questions_of(r, dataset, None, hops=hops, limit=limit, skip=skip):
        res = r.retrieve(unbracketed(q.text), dataset, params=params)
        if not res.nodes:
            continue
        out.append(SubgraphSample(q.uid, unbracketed(q.text), "|".join(q.answers), res.desc, res.data, dataset,
                                  [n.text for n in res.nodes], [n.topic for n in res.nodes]))
        topics.append([n.topic for n in res.nodes])
    return out, topics


def baseline(samples: list[SubgraphSample], topics: list[list[bool]], q: torch.Tensor) -> dict:
    """The non-topic node most similar to the question, as the one answer: Hit@1 and F1."""
    hits, f1 = 0, 0.0
    for s, t, v in zip(samples, topics, q):
        sims = s.data.x @ v
        sims[torch.tensor(t, dtype=torch.bool)] = -2.0
        if normalize(s.node_texts[int(sims.argmax())]) in {normalize(a) for a in split_answers(s.label)}:
            recall = 1 / len(split_answers(s.label))
            hits, f1 = hits + 1, f1 + 2 * recall / (1 + recall)
    return {"hit_at_1": round(hits / len(samples), 4), "f1": round(f1 / len(samples), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="metaqa")
    ap.add_argument("--train", type=int, default=600)
    ap.add_argument("--skip", type=int, default=2000)
    ap.add_argument("--test", type=int, default=300)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--hops", default="1,2,3")
    args = ap.parse_args()
    hops = [int(h) for h in args.hops.split(",")]
    torch.manual_seed(0)
    report = {"dataset": args.dataset, "train_per_hop": args.train, "skip": args.skip, "test_per_hop": args.test, "hops": {}}
    with Retriever(load_settings()) as r:
        r.warm(args.dataset, max(hops))
        began = time.perf_counter()
        train, test = [], {}
        for h in hops:
            train += samples_of(r, args.dataset, h, args.skip, args.train)[0]
            test[h] = samples_of(r, args.dataset, h, 0, args.test)
        report["retrieval_seconds"] = round(time.perf_counter() - began, 1)
        embed = lambda xs: torch.from_numpy(r.embed([s.question for s in xs]))
        q_train = embed(train)
        head = AnswerHead(dim=q_train.shape[1])
        began = time.perf_counter()
        losses = train_head(head, train, q_train, epochs=args.epochs)
        report["train_seconds"] = round(time.perf_counter() - began, 1)
        report["losses"] = [round(x, 4) for x in losses]
        for h, (samples, topics) in test.items():
            q = embed(samples)
            fig = evaluate_head(head, samples, q)
            holds = sum(bool(answer_mask(s.node_texts, s.label).any()) for s in samples) / len(samples)
            report["hops"][str(h)] = {
                "questions": len(samples), "answer_in_subgraph": round(holds, 4),
                "head": {"hit_at_1": round(fig.hit_at_1, 4), "precision": round(fig.precision, 4), "recall": round(fig.recall, 4), "f1": round(fig.f1, 4)},
                "baseline_most_similar_node": baseline(samples, topics, q),
            }
    emit(report)


if __name__ == "__main__":
    main()
