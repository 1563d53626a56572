"""The contract between a dataset module in `loaders/` and the ingestion core, and where data lives.

A loader is a `LoaderSpec`: its name, its kind (per-sample graphs or one knowledge graph), the
split names it knows, a default location, and `read(path, splits, limit)`, a generator of
`Fragment`s and `BadRecord`s in source order. Loaders only parse; the core deduplicates, embeds,
writes and reports.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from .records import BadRecord, Fragment, MissingInput

def data_lines(path: Path) -> Iterator[tuple[str, int, str]]:
    """(where, line number, line) of every non-blank line of a UTF-8 text file, the line ending
    stripped; ``where`` is ``"path:lineno"``, the position every loader's errors name."""
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if line.strip():
                yield f"{path}:{lineno}", lineno, line


Reader = Callable[[Path, "set[str] | None", "int | None"], Iterator["Fragment | BadRecord"]]

# Dataset name -> module in gr_neo4j.loaders (imported on first use).
LOADER_MODULES = {
    "explagraphs": "explagraphs",
    "scene_graphs": "scene_graphs",
    "webqsp": "webqsp",
    "metaqa": "metaqa",
    "triples": "triples",
}


@dataclass(frozen=True)
class LoaderSpec:
    name: str
    kind: str | None  # records.PER_SAMPLE or records.KNOWLEDGE_GRAPH; None: decided by the data
    splits: tuple[str, ...]
    read: Reader
    default_path: Callable[[], Path | None]
    path_help: str  # what --path must point to, for error messages


def get_loader(name: str) -> LoaderSpec:
    if name not in LOADER_MODULES:
        raise MissingInput(f"unknown dataset {name!r}; choose one of: {', '.join(LOADER_MODULES)}")
    module = importlib.import_module(f"gr_neo4j.loaders.{LOADER_MODULES[name]}")
    return module.LOADER


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
