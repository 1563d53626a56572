"""`load_dataset`: schema → parse → validate → embed → write, for every loader.

Order matters for the guarantees:
- the schema is checked first, so a dimension mismatch stops the load before anything is written;
- the whole input is parsed and validated before the first write, so with `on_error='fail'` a bad
  record anywhere leaves the database exactly as it was;
- rows already in the database (with an embedding, for nodes and relationships) are neither
  embedded nor written again: a repeated load is cheap and changes nothing, and a killed load
  resumes where its last committed batch ended;
- a graph or question of the file whose content changed since it was stored is rewritten to the
  file's content (`plan.py`), so that a re-load of an edited file leaves nothing stale;
- graphs, then entities, then relationships, then questions (which link to entities and graphs).
"""

from __future__ import annotations

import time
from pathlib import Path

from ..connection import Connection, connect
from ..embedder import Embedder, embedder_source, load_embedder
from ..errors import MissingInput, NotReady, SchemaError, UsageError
from ..progress import Phases, Progress
from ..schema import init_schema
from ..settings import Settings
from .collect import Collected
from .embed import TextVectors, embed_distinct
from .lease import DatasetLease, expected_uids
from .plan import Existing, WritePlan, plan_writes
from .records import KNOWLEDGE_GRAPH, PER_SAMPLE, bad_input
from .report import LoadReport
from .source import DatabaseSource, LoaderSpec, get_loader, named, parse_splits
from .stats import read_quietly, stats_of
from .writer import Written, write_rows

ENTITY_BATCH = 1000
ENTITY_WRITERS = 4

ON_ERROR = ("fail", "skip")
DEFAULT_BATCH_SIZE = 5000
EMBED_BATCH_SIZE = 256


def load_dataset(
    settings: Settings,
    name: str,
    path: str | Path | DatabaseSource | None = None,
    split: str | None = None,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_error: str = "fail",
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    as_name: str | None = None,
) -> LoadReport:
    """Load dataset `name` (see `gr_neo4j.ingest.source.LOADER_MODULES`) into the configured Neo4j.

    path: file or directory in the dataset's format (default: the shared datasets dir, or the hub
    for WebQSP); for `neo4j`, the :class:`~.source.DatabaseSource` to adopt; split: comma-separated
    split names to keep; limit: at most this many samples per source file; on_error: 'fail' (write
    nothing if any record is bad) or 'skip' (write the rest); as_name: the name to store a triples
    or adopted dataset under (default: the loader's name).
    """
    spec, source, splits = _prepare(name, path, split, limit, batch_size, on_error, as_name)
    embedder = embedder or LazyEmbedder(settings)
    with connect(settings) as conn:
        return load_into(conn, spec, source, embedder, splits, limit, batch_size, on_error, progress)


class LazyEmbedder:
    """The configured embedder, loaded only when something needs encoding (a re-load usually does not)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.name = embedder_source(settings).name
        self._loaded: Embedder | None = None

    @property
    def model(self) -> Embedder:
        if self._loaded is None:
            self._loaded = load_embedder(self.settings)
        return self._loaded

    @property
    def dimension(self) -> int:
        return self.model.dimension

    def encode(self, texts, batch_size: int = 256, show_progress: bool = False):
        return self.model.encode(texts, batch_size=batch_size, show_progress=show_progress)


def _prepare(name, path, split, limit, batch_size, on_error, as_name=None) -> tuple[LoaderSpec, Path, set[str] | None]:
    if on_error not in ON_ERROR:
        raise UsageError(f"--on-error must be one of {', '.join(ON_ERROR)}, got {on_error!r}")
    if batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1, got {batch_size}")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, got {limit}")
    spec = named(get_loader(name), as_name)
    splits = parse_splits(split, spec)
    if spec.from_database:
        if limit is not None:
            raise MissingInput(f"--limit does not apply to {name}: the graph in the database is adopted whole")
        if not isinstance(path, DatabaseSource):
            raise MissingInput(f"{name} reads the database itself, not --path {path}" if path is not None else f"{name} needs a DatabaseSource")
        return spec, path, splits
    if isinstance(path, DatabaseSource):
        raise MissingInput(f"{name} reads files, not the database: pass --path")
    source = Path(path).expanduser() if path is not None else spec.default_path()
    if source is None:
        raise MissingInput(f"no default location for {name}: pass --path ({spec.path_help})")
    if not source.exists():
        raise MissingInput(f"{source} does not exist ({name} expects {spec.path_help})")
    return spec, source, splits


def load_into(
    conn: Connection,
    spec: LoaderSpec,
    source: Path,
    embedder: Embedder,
    splits: set[str] | None = None,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_error: str = "fail",
    progress: Progress | None = None,
) -> LoadReport:
    """The load itself, on an open connection (what `load_dataset` and the benchmark call)."""
    began = time.perf_counter()
    phases = Phases(progress)
    ds = spec.name
    existing = _check_dataset(conn, ds, embedder)
    # Same model as the dataset's: its recorded dimension spares loading the model on a re-load.
    dimension = existing.get("dimension") if existing.get("embedder") == embedder.name else None
    if dimension is None:
        with phases.phase("load embedding model", total=1, unit="models") as advance:
            dimension = embedder.dimension
            advance(1)
    init_schema(conn, dimension)

    collected = Collected(ds)
    with phases.phase("parse", unit="records") as advance:
        for item in spec.read(source, splits, limit):
            collected.add(item)
            advance(1)
    if collected.bad and on_error == "fail":
        raise bad_input(collected.bad)
    if not collected.entities and not collected.questions:
        raise MissingInput(f"{source}: no {ds} records found" + (f" for split {','.join(sorted(splits))}" if splits else ""))

    kind = spec.kind or (PER_SAMPLE if collected.graphs else KNOWLEDGE_GRAPH)
    # The claim comes before looking for existing rows: a drop between that look and the writes
    # would otherwise leave the rows it deleted counted as present.
    lease = DatasetLease(conn, ds)
    lease.acquire(kind, embedder.name, dimension)
    with lease.kept_alive():
        return _load_claimed(conn, spec, source, embedder, collected, kind, lease, batch_size, phases, began)


def _load_claimed(conn, spec, source, embedder, collected, kind, lease, batch_size, phases, began) -> LoadReport:
    """Find existing rows, embed, write and verify, while this load holds the dataset's claim."""
    ds = spec.name
    with phases.phase("find existing", total=4, unit="kinds") as advance:
        found = _existing(conn, ds, collected, advance, every_kind=spec.from_database)
    plan = plan_writes(collected, found)

    vectors, texts_embedded = _vectors_for(conn, ds, plan, bool(found.entities or found.rels), embedder, phases)

    # Entities carry one distinct vector each, and inserting them into the HNSW vector index is the
    # slowest write: it costs less per row in transactions of ~1,000 rows, several at once (measured
    # on 20k vectors: 1,306 rows/s as 2 x 5,000, 2,984 rows/s as 4 x 1,000). Entity batches never
    # touch the same node (distinct uids), so running them concurrently is safe; relationships and
    # questions link shared (hub) nodes and stay sequential to avoid lock waits and deadlocks.
    # A changed graph's batch also deletes its old nodes and relationships: graph batches are capped
    # like entity batches to keep those transactions small.
    steps = [
        ("write graphs", "load_graphs", plan.graphs, None, min(batch_size, ENTITY_BATCH), 1),
        ("write entities", "load_entities", plan.entities, vectors, min(batch_size, ENTITY_BATCH), ENTITY_WRITERS),
        ("write relationships", "load_rels", plan.rels, vectors, batch_size, 1),
        ("write questions", "load_questions", plan.questions, None, batch_size, 1),
    ]
    written = {}
    for label, statement_name, rows, vecs, size, workers in steps:
        written[statement_name] = Written()
        if rows:
            with phases.phase(label, total=len(rows)) as advance:
                written[statement_name] = write_rows(conn, statement_name, rows, ds, size, vecs, advance, workers)
    if spec.from_database:
        with phases.phase("remove what the source no longer holds", total=1, unit="sweeps") as advance:
            _sweep(conn, ds, found.entities - collected.entities.keys(), found.rels - collected.rels.keys())
            advance(1)
    with phases.phase("verify", total=1, unit="checks") as advance:
        lease.finish(str(source), expected_uids(collected))
        advance(1)

    totals = next((s for s in stats_of(conn) if s.name == ds), None)
    return LoadReport(
        dataset=ds,
        kind=kind,
        source=str(source),
        records=collected.records,
        input_entities=len(collected.entities),
        input_relationships=len(collected.rels),
        input_graphs=len(collected.graphs),
        input_questions=len(collected.questions),
        written_entities=written["load_entities"].created,
        written_relationships=written["load_rels"].created,
        written_graphs=written["load_graphs"].created,
        written_questions=written["load_questions"].created,
        texts_embedded=texts_embedded,
        skipped=len(collected.bad),
        skipped_reasons=dict(collected.bad_reasons()),
        skipped_examples=[str(b) for b in collected.bad[:5]],
        seconds=time.perf_counter() - began,
        phase_seconds=dict(phases.seconds),
        totals=totals,
        replaced_graphs=written["load_graphs"].rows - written["load_graphs"].created,
        updated_questions=written["load_questions"].rows - written["load_questions"].created,
    )


def _vectors_for(conn, ds, plan: WritePlan, stored: bool, embedder, phases) -> tuple[TextVectors | None, int]:
    """Vectors for every text of the rows to write: read back from the database when a resumed,
    extended or changed load finds the text already embedded there (`stored`: the dataset has
    nodes or relationships), else encoded (each distinct text once)."""
    texts = list(dict.fromkeys([r["text"] for r in plan.entities] + [r["text"] for r in plan.rels]))
    if not texts:
        return None, 0
    known: dict[str, list[float]] = {}
    if stored:
        for name in ("load_known_entity_vectors", "load_known_rel_vectors"):
            wanted = [t for t in texts if t not in known]
            if wanted:
                known.update({r["text"]: r["embedding"] for r in conn.read(name, dataset=ds, texts=wanted)})
    to_encode = [t for t in texts if t not in known]
    vectors = None
    if to_encode:
        with phases.phase("embed", total=len(to_encode), unit="texts") as advance:
            vectors = embed_distinct(embedder, to_encode, EMBED_BATCH_SIZE, advance)
    if known:
        dimension = len(next(iter(known.values())))
        reused = TextVectors.from_known(known, dimension)
        vectors = reused if vectors is None else vectors.merged(reused)
    return vectors, len(to_encode)


def _check_dataset(conn: Connection, ds: str, embedder: Embedder) -> dict:
    """A dataset is embedded by one model: mixing two would make its vectors incomparable."""
    records = read_quietly(conn, "load_dataset_get", dataset=ds)  # runs before init_schema on a fresh database
    if not records:
        return {}
    existing = records[0]["dataset"]
    if existing.get("embedder") and existing["embedder"] != embedder.name:
        raise SchemaError(
            f"dataset {ds!r} was loaded with the embedding model {existing['embedder']}, not {embedder.name}: "
            f"use that model (GR_NEO4J_EMBEDDER) or `gr-neo4j drop {ds}` first"
        )
    if existing.get("status") == "dropping":
        raise NotReady(f"dataset {ds!r} is half dropped: run `gr-neo4j drop {ds}` again to finish, then load")
    return existing


SWEEP_BATCH = 10_000


def _sweep(conn: Connection, ds: str, entities: set[str], rels: set[str]) -> None:
    """Delete the rows of ``ds`` a mirrored source no longer yields: relationships first, in batches."""
    stale_rels, stale_entities = sorted(rels), sorted(entities)
    for i in range(0, len(stale_rels), SWEEP_BATCH):
        conn.write("load_sweep", dataset=ds, rel_uids=stale_rels[i : i + SWEEP_BATCH], entity_uids=[])
    for i in range(0, len(stale_entities), SWEEP_BATCH):
        conn.write("load_sweep", dataset=ds, rel_uids=[], entity_uids=stale_entities[i : i + SWEEP_BATCH])


def _existing(conn: Connection, ds: str, collected: Collected, advance, every_kind: bool = False) -> Existing:
    """What the database holds of the dataset, for the kinds of rows this load has (``every_kind``:
    all kinds, for a mirrored source, whose rows of a kind it no longer yields are swept)."""

    def read(statement_name: str, rows: dict) -> dict[str, str | None]:
        advance(1)
        return {r["uid"]: r.get("fingerprint") for r in conn.read(statement_name, dataset=ds)} if rows or every_kind else {}

    return Existing(
        entities=set(read("load_existing_entities", collected.entities)),
        rels=set(read("load_existing_rels", collected.rels)),
        graphs=read("load_existing_graphs", collected.graphs),
        questions=read("load_existing_questions", collected.questions),
    )
