"""Getting textual graphs into Neo4j: the ingestion core shared by every loader in `loaders/`.

Public API (the CLI's `load`, `stats` and `drop` call exactly these):

- `load_dataset(settings, name, path=None, split=None, limit=None, batch_size=5000, on_error='fail') -> LoadReport`
  (`name` 'neo4j' with `path=DatabaseSource(settings, labels, types, text)` adopts the database's own graph)
- `dataset_stats(settings) -> list[DatasetStats]`
- `drop_dataset(settings, name) -> DatasetStats`
"""

import importlib

from .records import BadRecord
from .split import paper_split

# The rest loads on first use (PEP 562): the loaders' record types and the split must stay
# importable without the Neo4j driver, e.g. by the training code on a GPU machine.
_LAZY = {
    "DEFAULT_BATCH_SIZE": ".pipeline", "load_dataset": ".pipeline", "load_into": ".pipeline",
    "LoadReport": ".report", "LOADER_MODULES": ".source", "datasets_dir": ".source", "get_loader": ".source",
    "DatabaseSource": ".source",
    "DatasetStats": ".stats", "dataset_stats": ".stats", "drop_dataset": ".stats", "drop_from": ".stats",
    "stats_of": ".stats",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_BATCH_SIZE",
    "LOADER_MODULES",
    "BadRecord",
    "DatabaseSource",
    "DatasetStats",
    "LoadReport",
    "dataset_stats",
    "datasets_dir",
    "drop_dataset",
    "drop_from",
    "get_loader",
    "load_dataset",
    "load_into",
    "paper_split",
    "stats_of",
]
