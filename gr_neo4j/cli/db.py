"""`gr-neo4j db ...`: the managed local Neo4j and the schema."""

from __future__ import annotations

import typer
from rich.table import Table

from ..examples import Example, create_example
from ..server import process
from ..server.install import install as install_server
from .common import JSON, console, err_console, human_bytes, print_json, settings_from
from .errors import handles_errors
from .progress import RichProgress

app = typer.Typer(help="Run the managed local Neo4j (install, start, stop, status, logs), create the schema and the example graph.", no_args_is_help=True)

BoltPort = typer.Option(None, "--bolt-port", help="Bolt port (env GR_NEO4J_BOLT_PORT; default 7687).")
HttpPort = typer.Option(None, "--http-port", help="HTTP/Browser port (env GR_NEO4J_HTTP_PORT; default 7474).")


@app.command()
@handles_errors
def install() -> None:
    """Fetch Neo4j Community 5.26 (the patch the lock pins) from Maven Central, verified; a no-op when already installed."""
    settings = settings_from()
    inst = install_server(settings, RichProgress(err_console))
    verb = "Installed" if inst.installed_now else "Already installed:"
    console.print(f"{verb} Neo4j Community {inst.version} in {inst.lib_dir.parent}")


@app.command()
@handles_errors
def start(
    bolt_port: int = BoltPort,
    http_port: int = HttpPort,
    heap: str = typer.Option(None, help="JVM heap, e.g. 2g (env GR_NEO4J_HEAP; default 2g)."),
    pagecache: str = typer.Option(None, help="Page cache, e.g. 2g (env GR_NEO4J_PAGECACHE; default 2g)."),
) -> None:
    """Start the managed Neo4j in the background (installing it first if needed) and wait for Bolt."""
    settings = settings_from(bolt_port=bolt_port, http_port=http_port, heap=heap, pagecache=pagecache)
    info = process.start(settings, RichProgress(err_console))
    if info.already_running:
        console.print(f"Neo4j is already running (pid {info.pid}); nothing changed.")
    else:
        console.print(f"Neo4j {info.version} started in {info.start_seconds:.0f} s (pid {info.pid}).")
    console.print(f"  Bolt:    {info.bolt_uri}  (user neo4j, password in {settings.home / 'password'})")
    console.print(f"  Browser: {info.browser_url}")


@app.command()
@handles_errors
def stop() -> None:
    """Stop the managed Neo4j."""
    settings = settings_from()
    if process.stop(settings):
        console.print("Neo4j stopped.")
    else:
        console.print("Neo4j is not running.")


@app.command()
@handles_errors
def status(as_json: bool = JSON) -> None:
    """Whether the managed Neo4j runs, its version, store size and counts (exit 3 when it is stopped)."""
    settings = settings_from()
    info = process.status(settings, with_counts=True)
    if as_json:
        print_json(info.to_json())
        if not info.running:
            raise typer.Exit(3)
        return
    table = Table(show_header=False, box=None)
    table.add_row("running", "yes" if info.running else "no")
    table.add_row("version", info.version or "not installed")
    table.add_row("home", str(info.home))
    if info.running:
        table.add_row("pid", str(info.pid))
        table.add_row("bolt", info.bolt_uri)
        table.add_row("browser", info.browser_url)
    table.add_row("store size", human_bytes(info.store_bytes))
    if info.nodes is not None:
        table.add_row("nodes", f"{info.nodes:,}")
        table.add_row("relationships", f"{info.relationships:,}")
    console.print(table)
    if not info.running:
        raise typer.Exit(3)


@app.command()
@handles_errors
def logs(
    lines: int = typer.Option(50, "--lines", "-n", help="How many lines from the end."),
    debug: bool = typer.Option(False, help="Show debug.log instead of neo4j.log."),
) -> None:
    """Print the end of the managed server's log."""
    path, tail = process.tail_log(settings_from(), lines, debug)
    console.print(f"[dim]{path}[/]")
    for line in tail:
        console.print(line, markup=False, highlight=False)


@app.command()
@handles_errors
def init() -> None:
    """Create the constraints and the vector and fulltext indexes (idempotent; every load does it too)."""
    from ..schema import ensure_schema

    report = ensure_schema(settings_from())
    created = ", ".join(report.created) if report.created else "nothing new"
    console.print(f"Schema ready (vector dimension {report.dimension}); created: {created}")


@app.command()
@handles_errors
def example(name: Example = typer.Argument(Example.MOVIES, help="The example graph.")) -> None:
    """Create Neo4j's Movies graph (Browser's :play movies) in the database, from the installed Browser jar; then `gr-neo4j load neo4j --name movies` adopts it."""
    created = create_example(settings_from(), name)
    console.print(f"Created the {created.example} graph: {created.nodes} nodes, {created.relationships} relationships (from {created.jar.name}).")
