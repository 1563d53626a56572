#!/usr/bin/env python
"""Benchmark the GNN + LLM model with the default LLM (SmolLM2-135M-Instruct) on this machine.

Trains G-Retriever (graph transformer + frozen LLM, or --lora) within a wall-clock budget on the
real ExplaGraphs TSV (whole graphs, split 60/20/20 with seed 42) or on a samples file written by
`gr-neo4j retrieve --out` (--retrieved, e.g. MetaQA subgraphs retrieved from Neo4j; same split),
then answers the test split with the trained model and, side by side, with the same LLM zero-shot
(the same prompt and textualised graph, no graph token: the baseline), each decoding both ways:
held to the labels or node texts (`auto`, the default of `ask` and `eval`) and free (the paper's).
Prints one JSON object: training and generation samples/s, peak RSS, the test metric of each of the
four, the majority-class rate of the test split (ExplaGraphs), epochs run.

    .venv/bin/python scripts/bench_train.py --minutes 60 --epochs 3          # the paper's recipe
    .venv/bin/python scripts/bench_train.py --minutes 55 --epochs 3 --lora --lr 2e-4 --graph-lr 1e-3
    .venv/bin/python scripts/bench_train.py --objective label --epochs 8 --batch-size 16 --encoder-lr 1e-4 --min-lr 0
    .venv/bin/python scripts/bench_train.py --objective label --epochs 6 --batch-size 16 --min-lr 0 --final
    .venv/bin/python scripts/bench_train.py --dataset metaqa --retrieved dev1.pt --minutes 20
    .venv/bin/python scripts/bench_train.py --minutes 2 --eval-limit 40   # a smoke run
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchlib.report import emit

from gr_neo4j.defaults import Decoding, Gnn, Objective
from gr_neo4j.model.config import TrainConfig  # light (no torch): the defaults of the options below

REPO = Path(__file__).resolve().parents[1]
T = TrainConfig


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="explagraphs")
    ap.add_argument("--retrieved", type=Path, default=None, help="samples file of `gr-neo4j retrieve --out`")
    ap.add_argument("--tsv", type=Path, default=REPO.parent / "shared" / "datasets" / "explagraphs" / "train.tsv")
    ap.add_argument("--minutes", type=float, default=60.0, help="training wall-clock budget")
    ap.add_argument("--epochs", type=int, default=T.epochs)
    ap.add_argument("--batch-size", type=int, default=T.batch_size)
    ap.add_argument("--lr", type=float, default=T.lr)
    ap.add_argument("--graph-lr", type=float, default=T.graph_lr, help="peak learning rate of the GNN and projector (default: --lr)")
    ap.add_argument("--min-lr", type=float, default=T.min_lr)
    ap.add_argument("--lora", action="store_true")
    ap.add_argument("--objective", type=Objective, choices=list(Objective), default=T.objective,
                    help="lm: G-Retriever; label: the fine-tuned label classifier (ExplaGraphs), no LLM")
    ap.add_argument("--encoder-lr", type=float, default=T.encoder_lr, help="peak learning rate of the label classifier's encoder")
    ap.add_argument("--encoder", default=T.encoder, help="hub id or path of the label classifier's encoder (default: the embedder's)")
    ap.add_argument("--gnn", type=Gnn, choices=list(Gnn), default=T.gnn)
    ap.add_argument("--limit", type=int, default=None, help="at most this many samples per split")
    ap.add_argument("--eval-limit", type=int, default=None, help="answer only the first N test samples")
    ap.add_argument("--eval-batch-size", type=int, default=T.eval_batch_size)
    ap.add_argument("--final", action="store_true",
                    help="train on train + val for exactly --epochs and keep the last (epochs and rates chosen on val before)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the zero-shot LLM baseline")
    ap.add_argument("--no-free", action="store_true", help="decode only as `auto` (skip the free-generation rows)")
    ap.add_argument("--out", type=Path, default=None, help="checkpoint directory (default: a temporary one)")
    args = ap.parse_args()

    import torch
    from rich.console import Console

    from gr_neo4j.cli.progress import RichProgress
    from gr_neo4j.llm import llm_source
    from gr_neo4j.metrics import score
    from gr_neo4j.model import GRetrieverModel, answer, evaluate, train
    from gr_neo4j.model.checkpoint import load_llm_named, read_config
    from gr_neo4j.model.datasets import load_splits
    from gr_neo4j.settings import load_settings

    settings = load_settings()
    progress = RichProgress(Console(stderr=True)) if sys.stderr.isatty() else None
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-train-"))
    t0 = time.perf_counter()
    source = {"retrieved": args.retrieved} if args.retrieved else {"tsv": args.tsv}
    splits = load_splits(args.dataset, settings=settings, limit=args.limit, **source)
    samples_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    llm = load_llm_named("", settings)
    llm_load_s = time.perf_counter() - t0

    config = TrainConfig(dataset=args.dataset, out=out, **source, epochs=args.epochs, batch_size=args.batch_size,
                         lr=args.lr, graph_lr=args.graph_lr, min_lr=args.min_lr, lora=args.lora, gnn=args.gnn,
                         limit=args.limit, max_minutes=args.minutes, resume=False, objective=args.objective,
                         encoder_lr=args.encoder_lr, encoder=args.encoder, final=args.final)
    cpu0 = time.process_time()
    result = train(config, settings=settings, llm=llm, splits=splits, progress=progress)
    train_cpu_s = time.process_time() - cpu0
    decodings = [Decoding.AUTO] + ([] if args.no_free else [Decoding.FREE])
    trained = {}
    for decoding in decodings if args.objective != Objective.LABEL else [Decoding.AUTO]:  # a classifier does not decode
        r = evaluate(out, "test", settings=settings, batch_size=args.eval_batch_size, limit=args.eval_limit,
                     progress=progress, decoding=decoding)
        trained[str(decoding)] = {f"test_{r.metric}": round(r.value, 4), "test_answered": r.total,
                                  "hallucination_rate": r.hallucination_rate, "generation_samples_per_s": round(r.samples_per_s, 3)}
    test = splits["test"][: args.eval_limit]
    saved = read_config(out)
    report = {
        "dataset": args.dataset, "source": str(args.retrieved or args.tsv), "objective": str(args.objective),
        "llm": saved["model"]["llm"] or llm_source(settings).name, "gnn": args.gnn, "lora": args.lora, "device": "cpu" if not torch.cuda.is_available() else "cuda",
        "threads": torch.get_num_threads(), "sizes": saved["sizes"],
        "samples_build_s": round(samples_s, 1), "llm_load_s": round(llm_load_s, 1),
        "train": {"budget_minutes": args.minutes, "epochs_planned": args.epochs, "batch_size": args.batch_size,
                  "lr": args.lr, "graph_lr": args.graph_lr, "encoder_lr": args.encoder_lr, "encoder": saved["model"]["embedder"], "min_lr": args.min_lr, "epochs_run": result.epochs_run,
                  "stopped": result.stopped, "samples_per_s": round(result.train_samples_per_s, 3),
                  "seconds": round(result.seconds, 1), "cpu_seconds": round(train_cpu_s, 1),
                  "final": args.final, "best_epoch": result.best_epoch,
                  "best_val_loss": None if result.best_val_loss is None else round(result.best_val_loss, 4),
                  "history": [{k: (float(f"{v:.4g}") if isinstance(v, float) else v) for k, v in h.items() if k != "step_losses"}
                              for h in result.history]},
        "trained": trained,  # G-Retriever (objective lm) or the label classifier (label)
    }
    if args.dataset == "explagraphs":
        labels = Counter(x.label for x in test)
        label, count = labels.most_common(1)[0]
        report["majority_class"] = {"label": label, "test_accuracy": round(count / len(test), 4)}
    if not args.no_baseline:
        # a fresh copy of the LLM: with --lora the trained run wrapped the loaded one in adapters
        base = GRetrieverModel.llm_only(*load_llm_named("", settings), report["llm"])
        report["zero_shot_llm"] = {}
        for decoding in decodings:
            t0 = time.perf_counter()
            preds = answer(base, test, batch_size=args.eval_batch_size, decoding=decoding)
            rate = len(test) / (time.perf_counter() - t0)
            s = score(args.dataset, preds, [x.label for x in test], [x.node_texts for x in test])
            report["zero_shot_llm"][str(decoding)] = {f"test_{s.metric}": round(s.value, 4), "test_answered": s.total,
                                                      "hallucination_rate": s.hallucination_rate,
                                                      "generation_samples_per_s": round(rate, 3)}
    report["peak_rss_mb"] = round(peak_rss_mb(), 1)
    report["checkpoint"] = str(out)
    emit(report)


if __name__ == "__main__":
    main()
