"""`gr-neo4j train` and `gr-neo4j eval`: thin shells over gr_neo4j.model.train / evaluate."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ..defaults import Decoding, Gnn, Objective
from ..model.config import TrainConfig  # light: the defaults below are the library's
from .common import DECODING, JSON, console, err_console, print_json, settings_from
from .errors import handles_errors
from .progress import RichProgress

T = TrainConfig  # option defaults read from the dataclass, never restated here


def register(app: typer.Typer) -> None:
    app.command("train")(train)
    app.command("eval")(eval_)


@handles_errors
def train(
    dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset name (explagraphs, metaqa, webqsp, gqa, ...)."),
    retrieved: Path | None = typer.Option(None, "--retrieved", help="Samples file written by `gr-neo4j retrieve --out`."),
    tsv: Path | None = typer.Option(None, "--tsv", help="ExplaGraphs only: the raw TSV, trained on whole graphs."),
    out: Path = typer.Option(..., "--out", "-o", help="Checkpoint directory (resumed when it holds one)."),
    epochs: int = typer.Option(T.epochs, "--epochs"),
    batch_size: int = typer.Option(T.batch_size, "--batch-size"),
    grad_accum: int = typer.Option(T.grad_accum, "--grad-accum", help="Batches summed before each optimiser step."),
    lr: float = typer.Option(T.lr, "--lr", help="Peak learning rate of AdamW."),
    graph_lr: float | None = typer.Option(T.graph_lr, "--graph-lr", help="Peak learning rate of the GNN and projector (default: --lr)."),
    min_lr: float = typer.Option(T.min_lr, "--min-lr", help="Floor the half cosine decays to (G-Retriever's; capped at --lr, at --encoder-lr for --objective label)."),
    lora: bool = typer.Option(T.lora, "--lora/--frozen", help="Tune the LLM with LoRA adapters or keep it frozen."),
    lora_r: int = typer.Option(T.lora_r, "--lora-r", min=1, help="LoRA rank."),
    lora_alpha: int = typer.Option(T.lora_alpha, "--lora-alpha", min=1, help="LoRA scaling (alpha / r multiplies the update)."),
    lora_targets: str = typer.Option(",".join(T.lora_targets), "--lora-targets",
                                     help="Comma-separated LLM modules that get adapters (e.g. q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj)."),
    gnn: Gnn = typer.Option(T.gnn, "--gnn", help="Graph encoder: gt (graph transformer), gat, gcn, or none (LLM only, needs --lora)."),
    graph_tokens: int = typer.Option(T.graph_tokens, "--graph-tokens", help="Graph tokens given to the LLM."),
    max_txt_len: int = typer.Option(T.max_txt_len, "--max-txt-len", help="Tokens of the textualised graph kept in the prompt."),
    llm: str | None = typer.Option(T.llm, "--llm", help="Hugging Face id or path (default: the configured LLM)."),
    patience: int = typer.Option(T.patience, "--patience", help="Epochs without a better validation loss (validation accuracy for --objective label) before stopping."),
    limit: int | None = typer.Option(T.limit, "--limit", help="At most this many samples per split (quick runs)."),
    max_minutes: float | None = typer.Option(T.max_minutes, "--max-minutes", help="Wall-clock budget for the training."),
    resume: bool = typer.Option(T.resume, "--resume/--no-resume", help="Continue the checkpoint in --out if there is one."),
    objective: Objective = typer.Option(T.objective, "--objective", help="lm (answer tokens), node (a question-conditioned node "
                                        "head alone, BCE on the answer nodes, no LLM), joint (both; the prompt lists the head's best nodes), or label (ExplaGraphs: "
                                        "an encoder, the embedder's or --encoder's, fine-tuned to pick the label, no LLM)."),
    node_weight: float = typer.Option(T.node_weight, "--node-weight", help="Weight of the node head's loss with --objective joint."),
    head_lr: float = typer.Option(T.head_lr, "--head-lr", help="Peak learning rate of the node head."),
    encoder_lr: float = typer.Option(T.encoder_lr, "--encoder-lr", help="Peak learning rate of the encoder fine-tuned by --objective label."),
    encoder: str | None = typer.Option(T.encoder, "--encoder", help="Hugging Face id or path of the encoder --objective label fine-tunes "
                                       "(default: the embedder's)."),
    final: bool = typer.Option(T.final, "--final", help="Train on the train and validation splits together for exactly --epochs and keep "
                               "the last epoch (once the epochs and rates were chosen on validation); the test split stays unseen."),
) -> None:
    """Train the GNN + LLM model (G-Retriever), or a node head, and write a checkpoint directory."""
    from ..model.training import train as run

    targets = tuple(t.strip() for t in lora_targets.split(",") if t.strip())
    if lora and not targets:
        raise typer.BadParameter("name at least one module", param_hint="--lora-targets")

    config = TrainConfig(dataset=dataset, out=out, retrieved=retrieved, tsv=tsv, llm=llm, epochs=epochs,
                         batch_size=batch_size, grad_accum=grad_accum, lr=lr, min_lr=min_lr, lora=lora, lora_r=lora_r, lora_alpha=lora_alpha,
                         lora_targets=targets, gnn=gnn,
                         graph_tokens=graph_tokens, max_txt_len=max_txt_len, patience=patience, limit=limit,
                         max_minutes=max_minutes, resume=resume, objective=objective, node_weight=node_weight, head_lr=head_lr,
                         graph_lr=graph_lr, encoder_lr=encoder_lr, encoder=encoder, final=final)
    result = run(config, settings=settings_from(), progress=RichProgress(err_console))
    console.print(
        f"trained {result.epochs_run} epochs ({result.stopped}), "
        + ("kept the last (nothing held out)" if result.best_val_loss is None
           else f"best validation loss {result.best_val_loss:.4f} at epoch {result.best_epoch}")
        + f", {result.train_samples_per_s:.2f} samples/s; checkpoint {result.out}, "
        f"curves {result.curves}", highlight=False)


@handles_errors
def eval_(
    checkpoint: Path = typer.Option(..., "--checkpoint", "-c", help="Checkpoint directory written by `gr-neo4j train`."),
    split: str = typer.Option("test", "--split", help="train | val | test"),
    samples: Path | None = typer.Option(None, "--samples", help="Answer this samples file (from `gr-neo4j retrieve --out`) instead of a split."),
    batch_size: int = typer.Option(T.eval_batch_size, "--batch-size"),
    limit: int | None = typer.Option(None, "--limit", help="Answer only the first samples of the split."),
    decoding: Decoding = DECODING,
    as_json: bool = JSON,
) -> None:
    """Answer a split with a trained checkpoint (and score its node head, if any); write predictions (JSON lines) and metrics."""
    from ..model.evaluation import evaluate

    r = evaluate(checkpoint, split, samples=samples, settings=settings_from(), batch_size=batch_size, limit=limit,
                 progress=RichProgress(err_console), decoding=decoding)
    if as_json:
        print_json(r.to_json())
        return
    kgqa = r.f1 is not None
    if r.answered_by != "node head":  # the LLM's answers, or the label classifier's
        _llm_tables(r, kgqa)
    if r.head:
        head = Table("hops", "Hit@1", "answer precision", "answer recall", "answer F1", "samples",
                     title=f"Node head ({r.dataset} {r.split}; answers: nodes above 0.5, else the best)", title_justify="left")
        for group, h in [("all", r.head), *((g, v["head"]) for g, v in (r.by_hop or {}).items())]:
            head.add_row(group, f"{h['hit@1']:.4f}", f"{h['precision']:.4f}", f"{h['recall']:.4f}", f"{h['f1']:.4f}", str(h["total"]))
        console.print(head)
    console.print(f"predictions {r.predictions}, metrics {r.metrics}", highlight=False)


def _llm_tables(r, kgqa: bool) -> None:
    table = Table("dataset", "split", r.metric, "correct", *(("answer F1", "outside the subgraph", "hallucination rate") if kgqa else ()), "samples/s")
    table.add_row(r.dataset, r.split, f"{r.value:.4f}", f"{r.correct}/{r.total}",
                  *((f"{r.f1:.4f}", f"{r.outside_rate:.4f}", f"{r.hallucination_rate:.4f}") if kgqa else ()), f"{r.samples_per_s:.2f}")
    console.print(table)
    if r.by_hop:
        hops = Table("hops", r.metric, "answer precision", "answer recall", "answer F1", "outside the subgraph", "samples", title="Per hop count", title_justify="left")
        for group, g in r.by_hop.items():
            hops.add_row(group, f"{g['value']:.4f}", f"{g['precision']:.4f}", f"{g['recall']:.4f}", f"{g['f1']:.4f}", f"{g['outside_rate']:.4f}", str(g["total"]))
        console.print(hops)
