"""What a user sees for each class of bad input: run every case through the real CLI.

Starts its own managed Neo4j in a temporary home on free ports (jars shared through GR_NEO4J_DIST),
writes each case's input files into a temporary folder, runs `gr-neo4j ...` as a subprocess, and
prints a Markdown table: the case, the command, its exit status and the line the user reads (the
first stderr line, or the summary line and the stored result for a load that succeeds). Faults
(kill -9 of the client or the server, disk full, a drop racing a load) are run by chaos_load.py.

    python scripts/bad_input_table.py [--embedder PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gr_neo4j.connection import connect
from gr_neo4j.server import process
from gr_neo4j.server.process import free_port
from gr_neo4j.settings import Settings, load_settings

CLI = [sys.executable, "-c", "from gr_neo4j.cli import app; app()"]
EXPLAGRAPHS_ROW = "Cannabis should be legal.\tIt's not a bad thing to make marijuana more available.\tsupport\t(cannabis; synonym of; marijuana)(marijuana; capable of; good thing)\n"


@dataclass
class Case:
    name: str
    args: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    before: list[list[str]] = field(default_factory=list)  # commands run first (their output unused)
    check: str | None = None  # Cypher whose single value is shown as what was stored
    prepare: Callable[[Path, Settings], None] | None = None
    cypher: list[str] = field(default_factory=list)  # run after `before`: the user's own graph as the case needs it




def cases(work: Path) -> list[Case]:
    movies = ["db", "example", "movies"]  # Neo4j's Movies graph, the user's own graph to adopt
    entities = "MATCH (n:Entity) RETURN count(n)"
    tsv = "x.tsv"
    rel_text = "MATCH ()-[r:REL {dataset: 'triples'}]->() RETURN collect(r.text + ' / ' + startNode(r).text)"
    big_key = "k" * 8001
    return [
        Case("`\\|` in keys (two triples that joined to the same uid)", ["load", "triples", "--path", tsv],
             {tsv: b"a|b\tc\td\na\tb|c\td\n"}, check="MATCH ()-[r:REL {dataset: 'triples'}]->() RETURN count(r)"),
        Case("a TSV field starting with `\"`", ["load", "triples", "--path", tsv],
             {tsv: b'"Crocodile" Dundee\tdirected by\tPeter Faiman\n"unclosed\tr\tt\nx\ty\tz\n'},
             check="MATCH (n:Entity {dataset: 'triples'}) RETURN collect(n.text)"),
        Case("a re-load of an edited ExplaGraphs file (stance and graph of row 1 changed)",
             ["load", "explagraphs", "--path", "eg.tsv"],
             {"eg.tsv": EXPLAGRAPHS_ROW.replace("support", "counter").replace("good thing", "bad thing").encode()},
             before=[["load", "explagraphs", "--path", "eg0.tsv"]],
             prepare=lambda w, s: (w / "eg0.tsv").write_text(EXPLAGRAPHS_ROW),
             check="MATCH (g:Graph {dataset: 'explagraphs'}) "
                   "RETURN [g.label] + [(a:Entity {graph: g.graph, dataset: g.dataset})-[r:REL]->(b) | a.text + ' ' + r.text + ' ' + b.text]"),
        Case("a key over 8,000 bytes (Neo4j cannot index it)", ["load", "triples", "--path", tsv],
             {tsv: f"a\tr\tb\n{big_key}\tr\tc\n".encode()}, check=rel_text),
        Case("the same, `--on-error skip`", ["load", "triples", "--path", tsv, "--on-error", "skip"],
             {tsv: f"a\tr\tb\n{big_key}\tr\tc\n".encode()}, check=rel_text),
        Case("a 10 MB field", ["load", "triples", "--path", tsv],
             {tsv: b"a\tr\tb\n" + b"t" * 10_000_000 + b"\tr\tc\n"}, check=rel_text),
        Case("a line that is not UTF-8", ["load", "triples", "--path", tsv], {tsv: b"a\tr\tb\nc\xff\tr\td\n"}),
        Case("a binary file", ["load", "triples", "--path", "x.jsonl"], {"x.jsonl": bytes(range(256)) * 4}),
        Case("a CSV field over 128 KB", ["load", "triples", "--path", "x.csv"],
             {"x.csv": b"head,relation,tail\na,r,b\n" + b"c,r," + b"d" * 140_000 + b"\n"}),
        Case("a directory named `*.tsv` in a triples directory", ["load", "triples", "--path", "dir"],
             prepare=lambda w, s: ((w / "dir" / "sub.tsv").mkdir(parents=True), (w / "dir" / "t.tsv").write_text("a\tr\tb\n")),
             check=rel_text),
        Case("a row with two fields", ["load", "triples", "--path", tsv], {tsv: b"a\tr\tb\nc\td\n"}),
        Case("a bad dataset name", ["load", "triples", "--path", tsv, "--name", "a/b\x01"], {tsv: b"a\tr\tb\n"}),
        Case("two unrelated triple files", ["load", "triples", "--path", "y.tsv", "--name", "films"],
             {tsv: b"a\tr\tb\n", "y.tsv": b"c\tr\td\n"}, before=[["load", "triples", "--path", tsv]],
             check="MATCH (d:Dataset) RETURN collect(d.name)"),
        Case("`load neo4j`: a label the database lacks", ["load", "neo4j", "--name", "movies", "--labels", "Film"],
             before=[movies], check=entities),
        Case("`load neo4j`: `--text` names a property the label lacks", ["load", "neo4j", "--name", "movies", "--text", "Person=nick"],
             before=[movies], check=entities),
        Case("`load neo4j`: a label with no text property", ["load", "neo4j", "--name", "movies"],
             before=[movies], cypher=["CREATE (:Gadget {weight: 3})"], check=entities),
        Case("`load neo4j`: a 1 MB property value", ["load", "neo4j", "--name", "movies"],
             before=[movies], cypher=["MATCH (m:Movie {title: 'The Matrix'}) SET m.notes = $big"], check=entities),
        Case("`load neo4j`: a relationship type with no letter", ["load", "neo4j", "--name", "movies"], before=[movies],
             cypher=["MATCH (a:Person {name: 'Keanu Reeves'}), (b:Person {name: 'Hugo Weaving'}) CREATE (a)-[:`!!`]->(b)"], check=entities),
        Case("a missing file", ["load", "triples", "--path", "nope.tsv"]),
        Case("an unknown dataset to drop", ["drop", "nope"]),
        Case("`retrieve --out` an existing directory", ["retrieve", "-d", "triples", "-s", "train", "--out", "dir2"],
             {tsv: b"a\tr\tb\n"}, before=[["load", "triples", "--path", tsv]], prepare=lambda w, s: (w / "dir2").mkdir()),
        Case("a non-UTF-8 argument", ["ask", os.fsdecode(b"caf\xe9")]),
        Case("a 100 KB argument", ["drop", "x" * 100_000]),
        Case("`NEO4J_URI` is an HTTP address", ["stats"], env={"NEO4J_URI": "http://127.0.0.1:7474", "NEO4J_PASSWORD": "x"}),
        Case("an unknown `NEO4J_DATABASE`", ["stats"], env={"NEO4J_DATABASE": "nosuchdb"}),
        Case("a wrong password", ["stats"], env={"NEO4J_PASSWORD": "wrong"}, prepare=lambda w, s: None),
        Case("nothing listens at `NEO4J_URI`", ["stats"], env={"NEO4J_URI": f"bolt://127.0.0.1:{free_port()}", "NEO4J_PASSWORD": "x"}),
    ]


def run(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    # A wide terminal for rich, so the report table is not cut.
    return subprocess.run([*CLI, *args], env={**env, "COLUMNS": "200"}, cwd=cwd, capture_output=True, timeout=600, check=False)


def seen(done: subprocess.CompletedProcess) -> str:
    """The line a user reads: the error line of a failed command (progress bars aside); for a load
    that succeeds, its report table in one line."""
    err = [line.strip() for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
    out = done.stdout.decode(errors="replace")
    if done.returncode:
        errors = [line for line in err if line.startswith("error")]
        return errors[0] if errors else (err[-1] if err else "")
    # Table rows are "│ label │ in │ written │ changed │ in the database │"; empty cells stay in place.
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.count("│") >= 6]
    parts = []
    for label, given, written, changed, *_ in cells:
        if label in ("nodes", "relationships", "graphs", "questions", "skipped records") and given not in ("", "0"):
            parts.append(f"{label} {given} in, {written or 0} written" + (f", {changed} changed" if changed not in ("", "0") else ""))
    return "loaded: " + "; ".join(parts) if parts else (" ".join(out.split()[-12:]) if out else "")


def short(text: str, limit: int = 300) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default=None, help="embedder path (default: the configured one)")
    parser.add_argument("--json", action="store_true", help="JSON lines instead of a Markdown table")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="gr-neo4j-badinput-"))
    home = root / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env.update(GR_NEO4J_HOME=str(home), GR_NEO4J_BOLT_PORT=str(free_port()), GR_NEO4J_HTTP_PORT=str(free_port()),
               GR_NEO4J_HEAP="1g", GR_NEO4J_PAGECACHE="512m")
    if args.embedder:
        env["GR_NEO4J_EMBEDDER"] = args.embedder
    for var in ("NEO4J_URI", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE"):
        os.environ.pop(var, None)
    settings: Settings = load_settings(
        home=home, bolt_port=int(env["GR_NEO4J_BOLT_PORT"]), http_port=int(env["GR_NEO4J_HTTP_PORT"]),
        heap="1g", pagecache="512m",
    )
    rows = []
    process.start(settings)
    try:
        for number, case in enumerate(cases(root), 1):
            work = root / f"case{number:02d}"
            work.mkdir()
            for name, data in case.files.items():
                (work / name).write_bytes(data)
            if case.prepare:
                case.prepare(work, settings)
            with connect(settings) as conn:  # every case starts from an empty database
                conn.run_autocommit("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS")
            case_env = {**env, **case.env}
            for before in case.before:
                run(before, env, work)
            with connect(settings) as conn:
                for statement in case.cypher:
                    conn.query(statement, {"big": "x" * (1 << 20)})
            done = run(case.args, case_env, work)
            stored = None
            if case.check:
                with connect(settings) as conn:
                    stored = conn.query(case.check)[0][0]
            shown = [a if len(a) <= 40 else a[:20] + f"…({len(a):,} chars)" for a in case.args]
            row = {"case": case.name, "command": "gr-neo4j " + " ".join(shown), "exit": done.returncode,
                   "user_sees": seen(done), "stored": stored}
            rows.append(row)
            print(f"{number:2d}. {case.name}: exit {done.returncode}", file=sys.stderr)
    finally:
        process.stop(settings)
        shutil.rmtree(root, ignore_errors=True)

    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        return 0
    print("| bad input | command | exit | what the user sees | stored |")
    print("|---|---|---|---|---|")
    for row in rows:
        stored = "" if row["stored"] is None else short(json.dumps(row["stored"], ensure_ascii=False), 120)
        print(f"| {short(row['case'])} | `{short(row['command'], 80)}` | {row['exit']} | {short(row['user_sees'])} | {stored} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
