"""`gr-neo4j ask`, `show`, `retrieve` and `eval-retrieval`: thin shells over gr_neo4j.retrieval."""

from __future__ import annotations

import json
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import typer
from rich.table import Table

from ..defaults import AnswerBy, Decoding, Mode, PathFit
from ..retrieval.params import HELP, CandidateLimits, PathTraining, RetrievalParams
from .common import DECODING, JSON, console, err_console, print_json, settings_from
from .errors import handles_errors
from .progress import RichProgress

DEFAULTS = RetrievalParams  # the dataclass's field defaults are the options' defaults, HELP their help
HOPS = typer.Option(DEFAULTS.hops, "--hops", show_default=False, help=HELP["hops"])
TOPK = typer.Option(DEFAULTS.topk, "--topk", help=HELP["topk"])
TOPK_E = typer.Option(None, "--topk-e", help=HELP["topk_e"])
COST_E = typer.Option(DEFAULTS.cost_e, "--cost-e", help=HELP["cost_e"])
MODE = typer.Option(None, "--mode", help=HELP["mode"])
DATASET = typer.Option(None, "--dataset", "-d", help=HELP["dataset"])
MAX_PATHS = typer.Option(DEFAULTS.max_paths, "--max-paths", help=HELP["max_paths"])
NODE_BUDGET = typer.Option(DEFAULTS.node_budget, "--node-budget", help=HELP["node_budget"])
ANSWER_CAP = typer.Option(DEFAULTS.answer_cap, "--answer-cap", help=HELP["answer_cap"])
LINK = typer.Option(DEFAULTS.link, "--link/--no-link", help=HELP["link"])
PATH_RANKER = typer.Option(DEFAULTS.path_ranker, "--path-ranker/--no-path-ranker", help=HELP["path_ranker"])


def _params(
    mode, hops, topk, topk_e, cost_e, max_paths=DEFAULTS.max_paths, node_budget=DEFAULTS.node_budget, max_nodes=None, max_edges=None,
    link=DEFAULTS.link, answer_cap=DEFAULTS.answer_cap, path_ranker=DEFAULTS.path_ranker,
):
    changed = {k: v for k, v in {"max_nodes": max_nodes, "max_edges": max_edges}.items() if v is not None}
    limits = replace(CandidateLimits(), **changed)
    return RetrievalParams(
        mode=mode, hops=hops, topk=topk, topk_e=topk_e, cost_e=cost_e, max_paths=max_paths, node_budget=node_budget, answer_cap=answer_cap, link=link,
        path_ranker=path_ranker, limits=limits,
    )


def subgraph_table(result) -> Table:
    table = Table(title=f"Retrieved subgraph: {len(result.nodes)} nodes, {len(result.edges)} edges "
                  f"(from {result.candidates[0]} candidates, mode {result.mode})", title_justify="left")
    table.add_column("head")
    table.add_column("relation", style="cyan")
    table.add_column("tail")
    table.add_column("score", justify="right")
    for e in result.edges:
        table.add_row(result.nodes[e.src].text, e.text, result.nodes[e.dst].text, f"{e.score:.3f}")
    linked = {e.src for e in result.edges} | {e.dst for e in result.edges}
    for i, n in enumerate(result.nodes):
        if i not in linked:
            table.add_row(n.text, "", "", f"{n.score:.3f}")
    return table


def ask(
    question: str = typer.Argument("", help="The question, in quotes; with --graph it may be left out, and the question "
                                    "stored with that graph is asked (ExplaGraphs: its two arguments).", show_default=False),
    dataset: str | None = DATASET,
    graph: str | None = typer.Option(None, "--graph", "-g", help=HELP["graph"]),
    entity: list[str] = typer.Option([], "--entity", "-e", help=HELP["entity"]),
    hops: int | None = HOPS,
    topk: int = TOPK,
    topk_e: int | None = TOPK_E,
    cost_e: float = COST_E,
    mode: Mode | None = MODE,
    max_paths: int = MAX_PATHS,
    node_budget: int = NODE_BUDGET,
    answer_cap: int = ANSWER_CAP,
    link: bool = LINK,
    path_ranker: bool = PATH_RANKER,
    checkpoint: Path | None = typer.Option(None, "--checkpoint", help="A trained GNN + LLM checkpoint directory (default: the LLM zero-shot)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole result as JSON."),
    no_record: bool = typer.Option(False, "--no-record", help="Do not record a Retrieval node (read-only users)."),
    no_answer: bool = typer.Option(False, "--no-answer", help="Retrieve (and record) only; do not run the LLM."),
    decoding: Decoding = DECODING,
    answer_by: AnswerBy = typer.Option(
        AnswerBy.AUTO, "--answer-by",
        help="auto: the graph's own answers (paths mode, no --checkpoint: where the named entities meet, else the ends of the best relation path), else the LLM.",
    ),
) -> None:
    """Answer a question from the subgraph retrieved for it, and show where to see that subgraph."""
    from ..answer import ask as ask_fn
    from ..answer import browser_url, show_query

    settings = settings_from()
    out = ask_fn(
        settings, question, dataset, graph, entity, _params(mode, hops, topk, topk_e, cost_e, max_paths, node_budget, link=link, answer_cap=answer_cap, path_ranker=path_ranker),
        checkpoint=checkpoint, record_it=not no_record, answer_it=not no_answer, progress=RichProgress(err_console), decoding=decoding,
        answer_by=answer_by,
    )
    if as_json:
        print(json.dumps(out.to_json(), indent=2, ensure_ascii=False))
        return
    if not no_answer and out.answer is None:
        console.print(f"[bold]Answer:[/] not in the graph: {out.retrieval.not_in_graph}", highlight=False)
    elif not no_answer:
        console.print(f"[bold]Answer:[/] {out.answer}", highlight=False)
        if any(a.path for a in out.answers):
            for a in out.answers:
                score = "" if a.score is None else f"{a.score:.2f}  "
                console.print(f"  {score}{a.line()}", highlight=False, markup=False)
        console.print(f"[dim]by {out.answered_by} in {out.answer_ms:.0f} ms[/]")
    for line in (out.retrieval.seeds_line(), out.retrieval.hops_line()):
        if line:
            console.print(line, highlight=False, markup=False)
    console.print(subgraph_table(out.retrieval))
    t = out.retrieval.timings
    console.print(f"[dim]retrieval {t.total_ms:.0f} ms (embed {t.embed_ms:.0f}, cypher {t.cypher_ms:.0f}, pcst {t.pcst_ms:.0f})[/]")
    if out.retrieval_id:
        query = show_query(out.retrieval_id)
        console.print(f"Recorded as retrieval [bold]{out.retrieval_id}[/] (`gr-neo4j show {out.retrieval_id}`); "
                      "see it in Neo4j Browser with:")
        console.print(textwrap.indent(query, "  "), highlight=False, markup=False, soft_wrap=True)
        url = browser_url(settings, query)
        if url:
            console.print(f"Browser (query pre-filled): {url}", highlight=False, markup=False, soft_wrap=True)


def show(rid: str = typer.Argument(..., help="A retrieval id printed by `ask`.")) -> None:
    """Print the Cypher query and the Browser URL that show a recorded ask's subgraph."""
    from ..answer import show as show_fn
    from ..browser import style_path

    settings = settings_from()
    s = show_fn(settings, rid)
    console.print(f"[bold]{s.question}[/]  ({s.dataset}, {s.created_at})", highlight=False)
    if s.answer is not None:
        console.print(f"answer: {s.answer}", highlight=False)
    console.print(f"{s.nodes} nodes, {s.edges} relationships. Query:")
    console.print(s.query, highlight=False, markup=False)
    if s.browser_url:
        console.print(f"Browser (query pre-filled): {s.browser_url}", highlight=False, markup=False, soft_wrap=True)
    if s.browser_url:
        console.print("[dim]In Browser the question is the pink node, its TOPIC links are orange and its ANSWER links green "
                      "(gr-neo4j's style, applied when Browser connects to the managed server).[/]")
    else:
        console.print(f"[dim]Browser style (captions; TOPIC orange, ANSWER green): drag {style_path()} onto Browser.[/]")


def retrieve(
    dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset whose questions to retrieve for."),
    split: str = typer.Option(..., "--split", "-s", help="Question split (e.g. train, val, test, dev)."),
    out: Path = typer.Option(..., "--out", "-o", help="Samples file to write (read by `gr-neo4j train`)."),
    hops: int | None = HOPS,
    topk: int = TOPK,
    topk_e: int | None = TOPK_E,
    cost_e: float = COST_E,
    mode: Mode | None = MODE,
    max_paths: int = MAX_PATHS,
    node_budget: int = NODE_BUDGET,
    answer_cap: int = ANSWER_CAP,
    path_ranker: bool = PATH_RANKER,
    limit: int | None = typer.Option(None, "--limit", help="At most this many questions."),
    as_json: bool = JSON,
) -> None:
    """Retrieve the subgraph of every question of a split and write the training samples."""
    from ..retrieval.batch import retrieve_split

    report = retrieve_split(settings_from(), dataset, split, out, _params(mode, hops, topk, topk_e, cost_e, max_paths, node_budget, answer_cap=answer_cap, path_ranker=path_ranker),
        limit=limit, progress=RichProgress(err_console))
    if as_json:
        print_json(report.to_json())
        return
    console.print(
        f"Wrote {report.samples} samples to {report.path} in {report.seconds:.1f} s "
        f"(mean {report.mean_nodes:.1f} nodes, {report.mean_edges:.1f} edges; answer in subgraph: {report.answer_recall:.3f})"
    )
    p = report.retrieval_ms or {}
    console.print(f"{report.questions_per_s:.1f} questions/s; retrieval p50 {p.get('p50')} ms, p95 {p.get('p95')} ms", highlight=False)


def eval_retrieval(
    dataset: str = typer.Option("metaqa", "--dataset", "-d", help="A knowledge-graph dataset with hop-tagged questions."),
    hops: str = typer.Option("1,2,3", "--hops", help="Question hop counts to evaluate (expansion depth = hop count, unless --predict-hops)."),
    limit: int | None = typer.Option(300, "--limit", help="Questions per hop count."),
    split: str | None = typer.Option(None, "--split", help="Only questions of this split (default: all)."),
    modes: list[Mode] = typer.Option(list(Mode), "--mode", help="Modes to compare (repeatable; default: all)."),
    oracle_topic: bool = typer.Option(
        False, "--oracle-topic", help="Give each question its stored topic entities instead of linking them in the text as typed.",
    ),
    topk: int = TOPK,
    topk_e: int | None = TOPK_E,
    cost_e: float = COST_E,
    max_paths: int = MAX_PATHS,
    node_budget: int = NODE_BUDGET,
    answer_cap: int = ANSWER_CAP,
    path_ranker: bool = PATH_RANKER,
    ceilings: bool = typer.Option(True, "--ceilings/--no-ceilings", help="Also compute the all-answers ceilings along one relation path (one more read per question)."),
    predict_hops: bool = typer.Option(
        False, "--predict-hops", help="Walk as deep as the hop model predicts for each question (as ask does) instead of its hop count.",
    ),
    untrained: bool = typer.Option(
        False, "--untrained", help="Also ask every question zero-shot (paths mode, no trained ranker or hop model, every depth competing): "
        "figures beside the trained ones.",
    ),
    spread_after: int | None = typer.Option(
        None, "--spread-after", min=0, help="Instead of the first --limit questions per hop count, --limit spread evenly over those after "
        "the first N (the files group questions by template).", show_default=False,
    ),
    json_out: Path | None = typer.Option(None, "--json-out", help="Also write the figures as JSON."),
    as_json: bool = JSON,
) -> None:
    """Linking, answer recall, size and latency of every mode (paths, reference, triples, k-hop, KAPING) side by side.

    Questions are asked as typed (brackets removed, topic entities linked in the text) unless --oracle-topic."""
    from ..provenance import provenance  # imported first: it notes the load average the run starts under
    from ..retrieval.evaluate import (
        CEILING_COLUMNS,
        LINKING_COLUMNS,
        REPORT_COLUMNS,
        ceiling_rows,
        evaluate_retrieval,
        linking_rows,
        report_rows,
    )

    hop_list = _hop_list(hops)
    params = _params(None, DEFAULTS.hops, topk, topk_e, cost_e, max_paths, node_budget, answer_cap=answer_cap, path_ranker=path_ranker)
    began = time.perf_counter()
    report = evaluate_retrieval(
        settings_from(), dataset, hop_list, limit, split, oracle_topic=oracle_topic, modes=modes, params=params, progress=RichProgress(err_console),
        ceilings=ceilings, predict_hops=predict_hops, untrained=untrained, spread_after=spread_after,
    )
    # The whole run's rate (connection, warm-up and every mode of each question included); the
    # per-stage latencies are in the report itself.
    seconds = time.perf_counter() - began
    questions = sum(fig["questions"] for fig in report["hops"].values())
    report |= {"seconds": round(seconds, 2), "questions_per_s": round(questions / seconds, 2), "provenance": provenance()}
    if json_out:
        json_out.write_text(json.dumps(report, indent=2))
    if as_json:
        if json_out:
            err_console.print(f"[dim]figures written to {json_out}[/]")
        print_json(report)
        return
    asked = "topic entities given (oracle)" if oracle_topic else "questions as typed, topic entities linked"
    if predict_hops:
        asked += ", depth predicted or read from the question"
    _print_table(f"Retrieval on {report['dataset']}, {asked} (embedder {report['embedder']})", REPORT_COLUMNS, report_rows(report), left=("mode",))
    _print_table("Entity linking against the stored topic entities", LINKING_COLUMNS, linking_rows(report))
    _print_table("Ceilings: share of questions whose gold answers a retriever can reach", CEILING_COLUMNS, ceiling_rows(report))
    console.print(f"{questions} questions in {report['seconds']:.1f} s: {report['questions_per_s']:.1f} questions/s, "
                  f"each through {len(modes)} mode{'s' if len(modes) != 1 else ''}", highlight=False)
    if json_out:
        console.print(f"[dim]figures written to {json_out}[/]")


def train_paths(
    dataset: str = typer.Option("metaqa", "--dataset", "-d", help="A knowledge-graph dataset with hop-tagged questions and answers."),
    hops: str = typer.Option(",".join(map(str, PathTraining.hops)), "--hops", help="Question hop counts to train on."),
    skip: int = typer.Option(PathTraining.skip, "--skip", help="Questions per hop count passed over first (uid order): eval-retrieval's first 300 stay unseen."),
    limit: int = typer.Option(
        PathTraining.limit, "--limit", help="Questions per hop count trained on, spread over those after --skip (a fifth held out for the report).",
    ),
    split: str | None = typer.Option(None, "--split", help="Only questions of this split (default: all)."),
    epochs: int = typer.Option(PathTraining.epochs, "--epochs"),
    lr: float = typer.Option(PathTraining.lr, "--lr", help="Adam learning rate."),
    deep: int = typer.Option(PathTraining.deep, "--deep", help="Questions per smaller hop count also walked as deep as the largest (asked with more hops than they need)."),
    save: bool = typer.Option(True, "--save/--dry-run", help="Store the ranker on the dataset (or only report how it would do)."),
    fit: PathFit = typer.Option(PathFit.ALL, "--fit", help="What to fit: all from scratch, or only the hop model or the path plan into the stored ranker."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Train the dataset's relation-path ranker on its own questions and store it in Neo4j (used by the paths mode)."""
    from ..retrieval.paths.training import refit_hop_model, refit_path_plan, train_path_ranker

    config = PathTraining(tuple(_hop_list(hops)), skip, limit, epochs, lr, deep=deep)
    trainer = {PathFit.ALL: train_path_ranker, PathFit.HOP_MODEL: refit_hop_model, PathFit.PATH_PLAN: refit_path_plan}[fit]
    r = trainer(settings_from(), dataset, config, split, save=save, progress=RichProgress(err_console))
    if as_json:
        print(json.dumps(r.to_json(), indent=2))
        return
    stored = "stored on the dataset" if r.saved else "not stored (--dry-run)"
    if fit == PathFit.HOP_MODEL:
        rows = [(k, str(r.questions[k]), str(r.held_out[k]), f"{r.hop_accuracy[k]:.3f}") for k in r.held_out]
        _print_table(f"Hop model of {r.dataset}: held-out questions whose hop count it predicts", ("hops", "questions", "held out", "right"), rows)
        console.print(f"{stored}; {r.seconds:.0f} s")
        return
    cosine = getattr(r, "top1_cosine", None)
    rows = [(h, str(r.questions[h]), str(r.examples[h]), str(r.held_out[h]), *([f"{cosine[h]:.3f}"] if cosine else []),
             f"{r.top1_trained[h]:.3f}", f"{r.top1_planned.get(h, r.top1_trained[h]):.3f}") for h in r.held_out]
    columns = ("hops", "questions", "with a path to an answer", "held out", *(["top-1 cosine"] if cosine else []), "top-1 ranker", "top-1 with plan")
    _print_table(f"Relation-path ranker of {r.dataset}: held-out top-1 (the best-ranked path reaches the answers best)", columns, rows)
    console.print(f"path plan strength {r.plan_strength:g} (tuned on the held-out questions); {stored}; {r.seconds:.0f} s")


def _print_table(title: str, columns, rows, left: tuple[str, ...] = ()) -> None:
    """A titled table of ``rows`` under ``columns`` (numbers right-aligned), unless there are no rows."""
    if not rows:
        return
    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col, justify="left" if col in left else "right")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _hop_list(hops: str) -> list[int]:
    try:
        return [int(h) for h in hops.split(",") if h.strip()]
    except ValueError:
        raise typer.BadParameter(f"--hops must be comma-separated integers, got {hops!r}") from None


def register(app: typer.Typer) -> None:
    app.command()(handles_errors(ask))
    app.command()(handles_errors(show))
    app.command()(handles_errors(retrieve))
    app.command(name="eval-retrieval")(handles_errors(eval_retrieval))
    app.command(name="train-paths")(handles_errors(train_paths))
