"""The contract between a dataset module in `loaders/` and the ingestion core, and where data lives.

A loader is a `LoaderSpec`: its name, its kind (per-sample graphs or one knowledge graph), the
split names it knows, a default location, and `read(path, splits, limit)`, a generator of
`Fragment`s and `BadRecord`s in source order. Loaders only parse; the core deduplicates, embeds,
writes and reports.
"""

from __future__ import annotations

import csv
import functools
import importlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..errors import MissingInput
from .facts import DatasetFacts
from .records import BadRecord, Fragment

if TYPE_CHECKING:
    from ..settings import Settings

T = TypeVar("T")
R = TypeVar("R")

# A NUL byte in the first block marks a binary file (as git and grep decide); text formats never hold one.
BINARY_PROBE = 8192


def binary_file(path: Path) -> BadRecord | None:
    """A bad record for the whole file when it is binary (an image, an archive), else None."""
    with path.open("rb") as f:
        head = f.read(BINARY_PROBE)
    at = head.find(b"\0")
    return None if at < 0 else BadRecord(str(path), f"binary file, not text (NUL byte at offset {at})")


def decode_line(where: str, raw: bytes) -> str | BadRecord:
    """One line as text, or a bad record naming the first byte that is not UTF-8 and its column."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return BadRecord(where, f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})")


def text_lines(path: Path) -> Iterator[tuple[str, int, str | BadRecord]]:
    """(where, line number, line or BadRecord) of every line, its ending stripped. Decoded line by
    line, so one line that is not UTF-8 is one bad record (skippable) instead of a failed load;
    a binary file is one bad record. A UTF-8 byte order mark is dropped."""
    bad = binary_file(path)
    if bad:
        yield str(path), 0, bad
        return
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            where = f"{path}:{lineno}"
            yield where, lineno, decode_line(where, raw.rstrip(b"\r\n"))


def limited(items: Iterable[T | BadRecord], limit: int | None, convert: Callable[[T], R | BadRecord] = lambda x: x) -> Iterator[R | BadRecord]:
    """``convert`` of each item, until ``limit`` of them have come out good (None: no limit).

    What every loader's ``limit`` means: that many good records. Bad ones (an item that is a
    `BadRecord`, or one ``convert`` turns into one) pass through uncounted, so a load with
    ``--on-error skip`` still gets ``limit`` records; reading stops at the limit.
    """
    taken = 0
    for item in items:
        if limit is not None and taken >= limit:
            return
        out = item if isinstance(item, BadRecord) else convert(item)
        if not isinstance(out, BadRecord):
            taken += 1
        yield out


def data_lines(path: Path) -> Iterator[tuple[str, int, str] | BadRecord]:
    """(where, line number, line) of every non-blank line of a UTF-8 text file, the line ending
    stripped; ``where`` is ``"path:lineno"``, the position every loader's errors name. A line that
    is not UTF-8 (or a binary file) comes as a `BadRecord` in its place."""
    for where, lineno, line in text_lines(path):
        if isinstance(line, BadRecord):
            yield line
        elif line.strip():
            yield where, lineno, line


def csv_rows(path: Path) -> Iterator[tuple[str, list[str]] | BadRecord]:
    """(where, fields) of every non-blank CSV row (quoted fields may span lines; ``where`` names the
    row's first line). Lines that are not UTF-8, and rows the csv module rejects (a field over its
    128 KB limit), are bad records; reading goes on with the next row."""
    lines = text_lines(path)
    pending: list[BadRecord] = []
    first: list[int] = []  # line number of the first line the current row read

    def feed() -> Iterator[str]:
        for _, lineno, line in lines:
            if isinstance(line, BadRecord):
                pending.append(line)
                continue
            if not first:
                first.append(lineno)
            yield line + "\n"

    reader = csv.reader(feed())
    while True:
        first.clear()
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            yield from _flush(pending)
            yield BadRecord(f"{path}:{first[0] if first else reader.line_num}", f"bad CSV: {exc}")
            continue
        yield from _flush(pending)
        if any(c.strip() for c in row):
            yield f"{path}:{first[0]}", row
    yield from _flush(pending)


def _flush(pending: list[BadRecord]) -> Iterator[BadRecord]:
    yield from pending
    pending.clear()


@dataclass(frozen=True)
class DatabaseSource:
    """A graph read from the database ``settings`` connect to, not from a file (`load neo4j`):
    its ``labels`` and relationship ``types`` (empty: all but gr-neo4j's own), ``text`` naming
    the text property of a label where the default does not fit."""

    settings: Settings
    labels: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    text: Mapping[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"database {self.settings.database!r} of {self.settings.uri or 'the managed Neo4j'}"


Reader = Callable[["Path | DatabaseSource", "set[str] | None", "int | None"], Iterator["Fragment | BadRecord"]]

# Dataset name -> module in gr_neo4j.loaders (imported on first use).
LOADER_MODULES = {
    "explagraphs": "explagraphs",
    "scene_graphs": "scene_graphs",
    "webqsp": "webqsp",
    "metaqa": "metaqa",
    "triples": "triples",
    "neo4j": "neo4j_graph",
}


@dataclass(frozen=True)
class LoaderSpec:
    name: str
    kind: str | None  # records.PER_SAMPLE or records.KNOWLEDGE_GRAPH; None: decided by the data
    splits: tuple[str, ...]
    read: Reader
    default_path: Callable[[], Path | None]
    path_help: str  # what --path must point to, for error messages
    renamable: bool = False  # the user names the dataset (--name): a triples file is anyone's graph
    # The source is the database (a DatabaseSource, not a path), and a re-load mirrors it: what the
    # source no longer holds is removed from the dataset.
    from_database: bool = False
    facts: DatasetFacts = field(default_factory=DatasetFacts)


MAX_NAME_CHARS = 64


def named(spec: LoaderSpec, name: str | None) -> LoaderSpec:
    """The loader storing its dataset under `name` (`--name`), checked: only a renamable loader takes
    one, and it must not be another loader's (a triples file named 'metaqa' would merge into MetaQA)."""
    if name is None or name == spec.name:
        return spec
    shown = repr(name[:60]) + ("…" if len(name) > 60 else "")
    if not spec.renamable:
        raise MissingInput(f"--name is only for triples and neo4j: {spec.name} is always stored as {spec.name!r}")
    if not name.strip() or name != name.strip() or not name.isprintable():
        raise MissingInput(f"--name must be printable text without leading or trailing spaces, got {shown}")
    if len(name) > MAX_NAME_CHARS:
        raise MissingInput(f"--name must be at most {MAX_NAME_CHARS} characters, got {len(name)}: {shown}")
    if name in LOADER_MODULES:
        raise MissingInput(f"--name {name!r} is the name of the {name} loader's dataset: choose another")
    return replace(spec, name=name)


def get_loader(name: str) -> LoaderSpec:
    if name not in LOADER_MODULES:
        raise MissingInput(f"unknown dataset {name!r}; choose one of: {', '.join(LOADER_MODULES)}")
    module = importlib.import_module(f"gr_neo4j.loaders.{LOADER_MODULES[name]}")
    return module.LOADER


@functools.cache
def facts_of(dataset: str) -> DatasetFacts:
    """The facts of the dataset stored as ``dataset``: its loader's, or the defaults of a graph the
    user named (a triples file or an adopted graph answers with its entities)."""
    return get_loader(dataset).facts if dataset in LOADER_MODULES else DatasetFacts()


def datasets_dir() -> Path | None:
    """The shared datasets directory: $GR_NEO4J_DATASETS, else ../shared/datasets from the repository root."""
    env = os.environ.get("GR_NEO4J_DATASETS")
    if env:
        return Path(env).expanduser()
    repo_root = Path(__file__).resolve().parents[2]
    for candidate in (repo_root.parent / "shared" / "datasets", Path.cwd().parent / "shared" / "datasets"):
        if candidate.is_dir():
            return candidate
    return None


def shared_path(*parts: str) -> Path | None:
    base = datasets_dir()
    if base is None:
        return None
    path = base.joinpath(*parts)
    return path if path.exists() else None


def parse_splits(split: str | None, spec: LoaderSpec) -> set[str] | None:
    """'train,dev' -> {'train', 'dev'}; None keeps every split. Unknown names are an error."""
    if not split:
        return None
    wanted = {s.strip() for s in split.split(",") if s.strip()}
    unknown = wanted - set(spec.splits)
    if unknown:
        raise MissingInput(f"{spec.name} has no split {', '.join(sorted(unknown))} (splits: {', '.join(spec.splits)})")
    return wanted
