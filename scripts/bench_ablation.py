#!/usr/bin/env python
"""G-Retriever's ablation on this machine: which part of the model makes the answers.

Each row is trained (or not) and scored on the same split of the same samples, with the same LLM,
prompt and decoding (``auto``: held to the labels on ExplaGraphs, to the subgraph's node texts on
knowledge graphs, as `ask` does):

- ``llm``: the LLM zero-shot on the textualized graph (nothing trained);
- ``lora``: LoRA on the textualized graph, no graph token (``--gnn none --lora``);
- ``frozen``: G-Retriever with the LLM frozen, only the GNN and projector trained;
- ``g_retriever_lora``: G-Retriever with LoRA (GNN, projector and adapters trained);
- ``g_retriever_lora_no_text``: the same without the textualized graph (``--max-txt-len 0``).

Rows run one after another and each is written to ``--out`` as soon as it is scored, with its own
provenance; a later run with the same ``--out`` and setup adds or replaces rows, so the table can
be made one row at a time. Every trained row gets the same wall-clock budget and rates; the JSON gives, per row, the test
metric, the share of answers naming nothing in the subgraph, training samples/s, epochs and the
learning curves (training loss every 100 samples, validation loss every epoch), beside a baseline
that reads nothing: the majority rate on ExplaGraphs, and on knowledge graphs the expected Hit@1 of
a node drawn at random from the subgraph's nodes that the question does not name (what decoding
held to the subgraph gets for free). A plot shows the learning curves. The LLM is the configured
one (``GR_NEO4J_LLM``: the default, a ``.gguf`` file or a model directory) and is part of the setup.

    python scripts/bench_ablation.py --dataset explagraphs --minutes 60 --jobs 2 --out runs/ablation_explagraphs.json \\
        --plot runs/ablation_explagraphs.png   # docs/training.md gives the commands behind docs/bench's tables
    python scripts/bench_ablation.py --dataset metaqa --retrieved runs/metaqa-1hop.pt --minutes 40 --rows g_retriever_lora
    python scripts/bench_ablation.py --limit 40 --minutes 2 --rows lora,g_retriever_lora   # a smoke run
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchlib.parallel import fan_out
from benchlib.report import earlier_part, emit

from gr_neo4j.defaults import Decoding, Gnn
from gr_neo4j.model.config import TrainConfig  # light (no torch): the defaults of the options below
from gr_neo4j.provenance import provenance

REPO = Path(__file__).resolve().parents[1]
T = TrainConfig
# row -> (GNN, LoRA, textualized graph kept)
ROWS = {
    "llm": (Gnn.NONE, False, True),
    "lora": (Gnn.NONE, True, True),
    "frozen": (Gnn.GT, False, True),
    "g_retriever_lora": (Gnn.GT, True, True),
    "g_retriever_lora_no_text": (Gnn.GT, True, False),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="explagraphs")
    ap.add_argument("--retrieved", type=Path, default=None, help="samples file of `gr-neo4j retrieve --out` (knowledge graphs)")
    ap.add_argument("--tsv", type=Path, default=REPO.parent / "shared" / "datasets" / "explagraphs" / "train.tsv")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated, of: {', '.join(ROWS)}")
    ap.add_argument("--minutes", type=float, default=60.0, help="training wall-clock budget of each trained row")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=T.batch_size)
    ap.add_argument("--lr", type=float, default=2e-4, help="peak learning rate of the LoRA adapters")
    ap.add_argument("--graph-lr", type=float, default=1e-3, help="peak learning rate of the GNN and projector")
    ap.add_argument("--min-lr", type=float, default=0.0)
    ap.add_argument("--warmup-epochs", type=float, default=0.2, help="linear warm-up before the half cosine (the paper: 1)")
    ap.add_argument("--lora-r", type=int, default=T.lora_r)
    ap.add_argument("--lora-alpha", type=int, default=T.lora_alpha)
    ap.add_argument("--lora-targets", default=",".join(T.lora_targets))
    ap.add_argument("--max-txt-len", type=int, default=T.max_txt_len)
    ap.add_argument("--limit", type=int, default=None, help="at most this many samples per split")
    ap.add_argument("--eval-batch-size", type=int, default=T.eval_batch_size)
    ap.add_argument("--workdir", type=Path, default=None, help="where the checkpoints go (default: a temporary directory)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="rows trained at once, each in its own process on cores/jobs threads (on 2 cores two one-thread "
                         "trainings get through more samples than one two-thread training)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads of this process (default: torch's)")
    ap.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    ap.add_argument("--plot", type=Path, default=None, help="learning curves of the trained rows (PNG)")
    args = ap.parse_args()
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    unknown = sorted(set(rows) - set(ROWS))
    if unknown:
        ap.error(f"unknown rows: {', '.join(unknown)}")

    import torch
    from rich.console import Console

    if args.threads:
        torch.set_num_threads(args.threads)
    from gr_neo4j.cli.progress import RichProgress
    from gr_neo4j.llm import llm_source
    from gr_neo4j.metrics import score
    from gr_neo4j.model import GRetrieverModel, answer, evaluate, train
    from gr_neo4j.model.checkpoint import load_llm_named
    from gr_neo4j.model.datasets import load_splits
    from gr_neo4j.settings import load_settings

    settings = load_settings()
    progress = RichProgress(Console(stderr=True)) if sys.stderr.isatty() else None
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-ablation-"))
    source = {"retrieved": args.retrieved} if args.retrieved else {"tsv": args.tsv}
    splits = load_splits(args.dataset, settings=settings, limit=args.limit, **source)
    test = splits["test"]
    report: dict = {
        "dataset": args.dataset, "source": str(args.retrieved or args.tsv), "sizes": {k: len(v) for k, v in splits.items()},
        "llm": llm_label(llm_source(settings).name),
        "decoding": str(Decoding.AUTO),
        "config": {"minutes": args.minutes, "epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr, "graph_lr": args.graph_lr,
                   "min_lr": args.min_lr, "warmup_epochs": args.warmup_epochs, "lora_r": args.lora_r, "lora_alpha": args.lora_alpha, "lora_targets": args.lora_targets,
                   "max_txt_len": args.max_txt_len},
        "rows": {},
    }
    report["rows"] = earlier_part(args.out, report, SETUP, "rows")
    if args.dataset == "explagraphs":
        label, count = Counter(x.label for x in test).most_common(1)[0]
        report["majority_class"] = {"label": label, "test_accuracy": round(count / len(test), 4)}
    else:
        report["random_node"] = {"test_hit@1": round(random_node_hit(test), 4)}
    if args.jobs > 1 and len(rows) > 1:
        report["rows"] |= fan_out(__file__, sys.argv[1:], "--rows", rows, "rows", args.jobs, workdir)
        rows = []
    for row in rows:
        gnn, lora, text = ROWS[row]
        llm = load_llm_named("", settings)  # a fresh copy: LoRA wraps the one it is given
        if row == "llm":
            model = GRetrieverModel.llm_only(*llm, "")
            began = time.perf_counter()
            preds = answer(model, test, batch_size=args.eval_batch_size, decoding=Decoding.AUTO)
            s = score(args.dataset, preds, [x.label for x in test], [x.node_texts for x in test])
            report["rows"][row] = {f"test_{s.metric}": round(s.value, 4), "test_answered": s.total, "outside": s.hallucination_rate,
                                   "answer_samples_per_s": round(len(test) / (time.perf_counter() - began), 3)}
            save_row(report, row, args.out)
            continue
        out = workdir / row
        config = TrainConfig(
            dataset=args.dataset, out=out, **source, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, graph_lr=args.graph_lr,
            min_lr=args.min_lr, warmup_epochs=args.warmup_epochs, lora=lora, lora_r=args.lora_r, lora_alpha=args.lora_alpha,
            lora_targets=tuple(t for t in args.lora_targets.split(",") if t), gnn=gnn, max_txt_len=args.max_txt_len if text else 0,
            limit=args.limit, max_minutes=args.minutes, resume=False, patience=args.epochs,
        )
        result = train(config, settings=settings, llm=llm, splits=splits, progress=progress)
        r = evaluate(out, "test", settings=settings, batch_size=args.eval_batch_size, decoding=Decoding.AUTO, progress=progress)
        report["rows"][row] = {
            f"test_{r.metric}": round(r.value, 4), "test_answered": r.total, "outside": r.hallucination_rate,
            "train_samples_per_s": round(result.train_samples_per_s, 3), "train_seconds": round(result.seconds, 1),
            "epochs_run": result.epochs_run, "stopped": result.stopped, "best_epoch": result.best_epoch,
            "val_loss": [round(h["val_loss"], 4) for h in result.history if "val_loss" in h],
            "train_curve": train_curve(result.history, args.batch_size),
            "answer_samples_per_s": round(r.samples_per_s, 3),
        }
        save_row(report, row, args.out)
    if args.plot:
        plot(report, args.plot)
    emit(report, args.out)


SETUP = ("dataset", "source", "sizes", "llm", "config")
CURVE_WINDOW = 100  # training samples per point of a row's training-loss curve


def llm_label(name: str) -> str:
    """The LLM as the report names it: a hub id as is, a local file or directory by its name only
    (the report is read on other machines)."""
    return Path(name).name if name.startswith((".", "/", "~")) else name


def train_curve(history: list[dict], batch_size: int) -> list[list[float]]:
    """``[[samples seen, mean training loss], ...]``, one point per ``CURVE_WINDOW`` samples: the
    learning curve between the per-epoch validation points."""
    losses = [loss for h in history for loss in h.get("step_losses", [])]
    per_point = max(1, CURVE_WINDOW // batch_size)
    return [[(i + len(chunk)) * batch_size, round(sum(chunk) / len(chunk), 4)]
            for i in range(0, len(losses), per_point) for chunk in [losses[i:i + per_point]]]


def save_row(report: dict, row: str, out: Path | None) -> None:
    """Stamp ``row`` with the threads it ran on and this run's provenance, and write the whole report
    to ``out`` at once."""
    import torch

    report["rows"][row] |= {"threads": torch.get_num_threads(), "provenance": provenance()}
    if out is not None:
        from gr_neo4j.atomic import atomic_write_text

        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out, json.dumps({**report, "provenance": provenance()}, indent=2, ensure_ascii=False) + "\n")


def random_node_hit(samples) -> float:
    """Expected Hit@1 of one node drawn uniformly from each subgraph's nodes the question does not
    name (0 for a subgraph without such nodes): the floor of decoding held to the subgraph."""
    total = 0.0
    for x in samples:
        gold = {a.strip().lower() for a in x.label.split("|")}
        question = x.question.lower()
        unnamed = [t.lower() for t in x.node_texts if t.lower() not in question]
        total += sum(t in gold for t in unnamed) / len(unnamed) if unnamed else 0.0
    return total / len(samples)


def plot(report: dict, path: Path) -> None:
    """Learning curves of each trained row (:func:`plot_curves`)."""
    plot_curves(report["rows"], f"G-Retriever ablation on {report['dataset']} with {report.get('llm', 'the default LLM')}", path)


def plot_curves(entries: dict[str, dict], title: str, path: Path) -> None:
    """Training loss against samples seen (left) and validation loss per epoch (right), one line
    per entry that has them, labelled by its name."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (train_ax, val_ax) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    for name, entry in entries.items():
        if entry.get("train_curve"):
            train_ax.plot(*zip(*entry["train_curve"]), "-", label=name)
        if entry.get("val_loss"):
            val_ax.plot(range(1, len(entry["val_loss"]) + 1), entry["val_loss"], "o-", label=name)
    train_ax.set_xlabel("training samples seen")
    train_ax.set_ylabel(f"training loss (mean of {CURVE_WINDOW} samples)")
    val_ax.set_xlabel("epoch")
    val_ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    val_ax.set_ylabel("validation answer-token cross-entropy")
    fig.suptitle(title)
    for ax in (train_ax, val_ax):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    main()
