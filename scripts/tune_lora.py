#!/usr/bin/env python
"""Choose G-Retriever + LoRA's adapter configuration on the validation split, never the test split.

Each configuration (LoRA rank, alpha, target modules, LoRA learning rate) trains the same model
(GNN + projector + LLM with LoRA) on the same training split, under the same schedule and the same
wall-clock budget, and is scored on the validation split with the decoding `ask` uses (held to the
labels on ExplaGraphs). The JSON gives, per configuration, the validation accuracy, the validation
loss, training samples/s and the learning curve; the plot shows the curves side by side. The
configuration that wins here is the one `bench_ablation.py` then trains for every row and scores
once on the test split.

    python scripts/tune_lora.py --minutes 65 --epochs 2 --jobs 2 \\
        --configs "qv8@1e-3=8,16,q_proj+v_proj,1e-3" "all16@5e-4=16,32,all,5e-4" \\
        --out docs/bench/tune_lora_explagraphs.json --plot docs/img/tune_lora_explagraphs.png
    python scripts/tune_lora.py --limit 12 --minutes 0.2 --configs "a=8,16,q_proj+v_proj,1e-3"   # a smoke run

A configuration is ``NAME=R,ALPHA,TARGETS,LR``; TARGETS is ``+``-joined module names, or ``all``
for every linear layer of the decoder blocks (attention and MLP).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from bench_ablation import llm_label, plot_curves, train_curve
from benchlib.parallel import fan_out
from benchlib.report import earlier_part, emit

from gr_neo4j.defaults import Decoding, Gnn
from gr_neo4j.model.config import TrainConfig
from gr_neo4j.provenance import provenance

REPO = Path(__file__).resolve().parents[1]
DATASET = "explagraphs"  # whole graphs read from its TSV: nothing to retrieve before training
SETUP = ("dataset", "sizes", "llm", "schedule")
ALL_LINEAR = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def parse_config(text: str) -> tuple[str, dict]:
    """``NAME=R,ALPHA,TARGETS,LR`` -> (name, the TrainConfig fields it sets)."""
    try:
        name, spec = text.split("=", 1)
        r, alpha, targets, lr = spec.split(",")
        modules = ALL_LINEAR if targets == "all" else tuple(t for t in targets.split("+") if t)
        return name, {"lora_r": int(r), "lora_alpha": int(alpha), "lora_targets": modules, "lr": float(lr)}
    except ValueError:
        sys.exit(f"error: --configs {text!r}: expected NAME=R,ALPHA,TARGETS,LR (e.g. all16=16,32,all,5e-4)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tsv", type=Path, default=REPO.parent / "shared" / "datasets" / "explagraphs" / "train.tsv")
    ap.add_argument("--configs", nargs="+", required=True, help="NAME=R,ALPHA,TARGETS,LR, one per configuration")
    ap.add_argument("--minutes", type=float, default=10.0, help="training wall-clock budget of each configuration")
    ap.add_argument("--epochs", type=int, default=3, help="epochs the schedule is laid out for (the budget may stop it sooner)")
    ap.add_argument("--graph-lr", type=float, default=1e-3)
    ap.add_argument("--warmup-epochs", type=float, default=0.2)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--jobs", type=int, default=1,
                    help="configurations trained at once, each in its own process on cores/jobs threads (on 2 cores two "
                         "one-thread trainings get through more samples than one two-thread training)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads of this process (default: torch's)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--plot", type=Path, default=None)
    args = ap.parse_args()
    configs = dict(parse_config(c) for c in args.configs)
    if not args.tsv.is_file():
        sys.exit(f"error: {args.tsv}: no such file (pass --tsv)")

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    from gr_neo4j.llm import llm_source
    from gr_neo4j.model import evaluate, train
    from gr_neo4j.model.checkpoint import load_llm_named
    from gr_neo4j.model.datasets import load_splits
    from gr_neo4j.settings import load_settings

    settings = load_settings()
    splits = load_splits(DATASET, settings=settings, limit=args.limit, tsv=args.tsv)
    workdir = Path(tempfile.mkdtemp(prefix="tune-lora-"))
    report: dict = {
        "dataset": DATASET, "sizes": {k: len(v) for k, v in splits.items()}, "split_scored": "val",
        "llm": llm_label(llm_source(settings).name), "decoding": str(Decoding.AUTO),
        "schedule": {"minutes": args.minutes, "epochs": args.epochs, "graph_lr": args.graph_lr, "warmup_epochs": args.warmup_epochs},
        "configs": {},
    }
    report["configs"] = earlier_part(args.out, report, SETUP, "configs")
    if args.jobs > 1 and len(configs) > 1:
        report["configs"] |= fan_out(__file__, sys.argv[1:], "--configs", args.configs, "configs", args.jobs, workdir)
        configs = {}
    for name, fields in configs.items():
        llm = load_llm_named("", settings)
        out = workdir / name
        config = TrainConfig(dataset=DATASET, out=out, tsv=args.tsv, epochs=args.epochs, graph_lr=args.graph_lr,
                             min_lr=0.0, warmup_epochs=args.warmup_epochs, lora=True, gnn=Gnn.GT, limit=args.limit,
                             max_minutes=args.minutes, resume=False, patience=args.epochs, **fields)
        began = time.perf_counter()
        result = train(config, settings=settings, llm=llm, splits=splits)
        r = evaluate(out, "val", settings=settings, decoding=Decoding.AUTO)
        report["configs"][name] = {
            **{k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()},
            f"val_{r.metric}": round(r.value, 4), "val_loss": [round(h["val_loss"], 4) for h in result.history if "val_loss" in h],
            "samples_trained": sum(h["samples"] for h in result.history), "stopped": result.stopped,
            "train_samples_per_s": round(result.train_samples_per_s, 3), "threads": torch.get_num_threads(), "train_curve": train_curve(result.history, config.batch_size),
            "seconds": round(time.perf_counter() - began, 1), "provenance": provenance(),
        }
        print(f"{name}: val {r.metric} {r.value:.4f}, val loss {report['configs'][name]['val_loss']}", file=sys.stderr)
        if args.out:  # each configuration lands as soon as it is scored
            emit(report, args.out)
    if args.plot:
        plot(report, args.plot)
    emit(report, args.out)


def plot(report: dict, path: Path) -> None:
    """The learning curves of each configuration, its validation accuracy in the legend."""
    entries = {f"{name} (val accuracy {row['val_accuracy']:.3f})": row for name, row in report["configs"].items()}
    plot_curves(entries, f"LoRA configurations on {report['dataset']} with {report['llm']}", path)


if __name__ == "__main__":
    main()
