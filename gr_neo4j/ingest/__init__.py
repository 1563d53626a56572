"""Getting textual graphs into Neo4j: the ingestion core shared by every loader in `loaders/`.

Public API (the CLI's `load`, `stats` and `drop` call exactly these):

- `load_dataset(settings, name, path=None, split=None, limit=None, batch_size=5000, on_error='fail') -> LoadReport`
- `dataset_stats(settings) -> list[DatasetStats]`
- `drop_dataset(settings, name) -> DatasetStats`
"""

from .pipeline import DEFAULT_BATCH_SIZE, load_dataset, load_into
from .records import BadInput, BadRecord, MissingInput
from .report import LoadReport
from .source import LOADER_MODULES, datasets_dir, get_loader
from .split import paper_split
from .stats import DatasetStats, dataset_stats, drop_dataset, drop_from, stats_of

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "LOADER_MODULES",
    "BadInput",
    "BadRecord",
    "DatasetStats",
    "LoadReport",
    "MissingInput",
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
