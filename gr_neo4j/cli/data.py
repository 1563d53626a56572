"""`gr-neo4j load`, `gr-neo4j stats`, `gr-neo4j drop`: getting datasets in and out of Neo4j."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich import box
from rich.table import Table

from ..defaults import OnError
from ..ingest import (
    DEFAULT_BATCH_SIZE,
    LOADER_MODULES,
    DatabaseSource,
    DatasetStats,
    LoadReport,
    dataset_stats,
    drop_dataset,
    load_dataset,
)
from .common import JSON, console, err_console, print_json, settings_from
from .errors import fail, handles_errors
from .progress import RichProgress

DATASETS = ", ".join(LOADER_MODULES)


def register(app: typer.Typer) -> None:
    app.command("load")(load)
    app.command("stats")(stats)
    app.command("drop")(drop)


@handles_errors
def load(
    dataset: str = typer.Argument(..., help=f"One of: {DATASETS}."),
    path: Path = typer.Option(None, "--path", help="File or directory in the dataset's format (default: the shared datasets dir, env GR_NEO4J_DATASETS; WebQSP: the Hugging Face hub when online)."),
    split: str = typer.Option(None, "--split", help="Comma-separated splits to load (explagraphs/scene_graphs: train,val,test = G-Retriever's 60/20/20 split, seed 42; metaqa: train,dev,test; webqsp: train,validation,test)."),
    limit: int = typer.Option(None, "--limit", help="At most N samples per source file (questions, or rows/graphs; the MetaQA KB is always loaded whole)."),
    batch_size: int = typer.Option(DEFAULT_BATCH_SIZE, "--batch-size", help="Rows per write transaction (entity batches, which carry one vector each, are capped at 1,000)."),
    on_error: OnError = typer.Option(OnError.FAIL, "--on-error", help="fail: write nothing if any record is malformed; skip: write the rest and report the skipped ones."),
    name: str = typer.Option(None, "--name", help="triples and neo4j only: the dataset name to store it under (default: the loader's; at most 64 printable characters), so unrelated graphs stay apart."),
    labels: str = typer.Option(None, "--labels", help="neo4j only: comma-separated labels whose nodes to adopt (default: every label but gr-neo4j's own)."),
    relationship_types: str = typer.Option(None, "--relationship-types", help="neo4j only: comma-separated relationship types to adopt (default: all between the adopted nodes)."),
    text: str = typer.Option(None, "--text", help="neo4j only: Label=property[,Label=property...]: the property that names a label's nodes (default: the first of name, title, text, label, caption, ... they hold)."),
) -> None:
    """Load a dataset into Neo4j with text embeddings (idempotent and resumable: run it again to finish or refresh).

    `load neo4j` adopts the graph already in the database (your labels, types and properties), never modifying it:
    gr-neo4j keeps its own copy, which a re-run brings up to date and `drop` removes."""
    settings = settings_from()
    source = path
    if dataset == "neo4j":
        if path is not None:
            fail(f"neo4j reads the graph from the database, not --path {path}")
        source = DatabaseSource(settings, _names(labels), _names(relationship_types), _text_properties(text))
    elif labels or relationship_types or text:
        fail("--labels, --relationship-types and --text are for `load neo4j` only")
    report = load_dataset(settings, dataset, source, split, limit, batch_size, on_error, progress=RichProgress(err_console), as_name=name)
    console.print(report_table(report))
    if report.skipped:
        reasons = "; ".join(f"{n} × {reason}" for reason, n in sorted(report.skipped_reasons.items()))
        err_console.print(f"[yellow]skipped {report.skipped} malformed record(s):[/] {reasons}", highlight=False)
        for example in report.skipped_examples:
            err_console.print(f"  {example}", highlight=False, markup=False)


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in value.split(",") if x.strip()) if value else ()


def _text_properties(value: str | None) -> dict[str, str]:
    """'Person=name,Movie=title' -> {'Person': 'name', 'Movie': 'title'}."""
    out = {}
    for item in _names(value):
        label, sep, prop = item.partition("=")
        if not sep or not label.strip() or not prop.strip():
            fail(f"--text takes Label=property pairs, got {item!r}")
        out[label.strip()] = prop.strip()
    return out


def report_table(report: LoadReport) -> Table:
    table = Table(title=f"{report.dataset} ({report.kind}) from {report.source}", title_justify="left")
    table.add_column("")
    table.add_column("in the input", justify="right")
    table.add_column("newly written", justify="right")
    table.add_column("changed, rewritten", justify="right")  # stored before with other content (a re-load of an edited file)
    table.add_column("in the database", justify="right")
    totals = report.totals
    rows = [
        ("nodes", report.input_entities, report.written_entities, None, totals.entities if totals else None),
        ("relationships", report.input_relationships, report.written_relationships, None, totals.relationships if totals else None),
        ("graphs", report.input_graphs, report.written_graphs, report.replaced_graphs, totals.graphs if totals else None),
        ("questions", report.input_questions, report.written_questions, report.updated_questions, totals.questions if totals else None),
    ]
    for label, given, written, changed, total in rows:
        table.add_row(label, f"{given:,}", f"{written:,}", "" if changed is None else f"{changed:,}", "" if total is None else f"{total:,}")
    table.add_row("skipped records", f"{report.skipped:,}", "", "", "")
    table.add_row("texts embedded", "", f"{report.texts_embedded:,}", "", "")
    table.add_row("time", "", f"{report.seconds:.1f} s", "", "")
    table.add_row("triples/s", "", f"{report.triples_per_s:,.0f} (write phase {report.write_triples_per_s:,.0f})", "", "")
    return table


@handles_errors
def stats(as_json: bool = JSON) -> None:
    """What each dataset has in the database: nodes, relationships, graphs, questions per split."""
    found = dataset_stats(settings_from())
    if as_json:
        print_json({"datasets": [s.to_json() for s in found]})
        return
    if not found:
        console.print("No dataset loaded yet (gr-neo4j load DATASET).")
        return
    table = Table(box=box.SIMPLE_HEAD)
    for column in ("dataset", "kind", "status", "nodes", "relationships", "graphs", "questions"):
        table.add_column(column, justify="left" if column in ("dataset", "kind", "status") else "right", no_wrap=column == "dataset")
    for s in found:
        complete = s.entities_embedded == s.entities and s.relationships_embedded == s.relationships
        status = (s.status or "") + ("" if complete else " (not all embedded)")
        kind = "KG" if s.kind == "knowledge-graph" else (s.kind or "")
        table.add_row(s.name, kind, status, f"{s.entities:,}", f"{s.relationships:,}", f"{s.graphs:,}", f"{s.questions:,}")
    console.print(table)
    for s in found:
        splits = ", ".join(f"{k} {v:,}" for k, v in s.questions_by_split.items()) or "none"
        when = (s.loaded_at or "never completed")[:16].replace("T", " ")
        console.print(f"  {s.name}: questions {splits}; embedder {s.embedder} ({s.dimension}); loaded {when}", highlight=False)


@handles_errors
def drop(
    dataset: str = typer.Argument(..., help="The dataset to remove (see `gr-neo4j stats`)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Drop without asking (required when stdin is not a terminal)."),
) -> None:
    """Remove one dataset (its nodes, relationships, graphs and questions) and nothing else.

    Asks first on a terminal; elsewhere (a script, a pipe) it refuses unless --yes."""
    before = drop_dataset(settings_from(), dataset, confirm=None if yes else _confirm)
    if before is None:
        err_console.print("Nothing dropped.")
        raise typer.Exit(1)
    console.print(f"Dropped {dataset}: {_holds(before)}.")


def _holds(s: DatasetStats) -> str:
    return f"{s.entities:,} nodes, {s.relationships:,} relationships, {s.graphs:,} graphs, {s.questions:,} questions"


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def _confirm(found: DatasetStats) -> bool:
    """Ask on the terminal (the prompt on stderr, default no) whether to drop ``found``; without a
    terminal, refuse. Ctrl-C at the prompt is an interrupt like anywhere else (exit 130)."""
    if not stdin_is_terminal():
        fail(f"not dropping {found.name} ({_holds(found)}) without confirmation: stdin is not a terminal; add --yes", code=2)
    try:
        answer = err_console.input(f"Drop {found.name} ({_holds(found)})? [y/N] ", markup=False)
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")
