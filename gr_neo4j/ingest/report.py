"""What a load did: the typed result of `load_dataset` (the CLI renders it as a table)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .stats import DatasetStats


@dataclass
class LoadReport:
    """Counts of one load. `input_*` are distinct items read; `written_*` were created by this load
    (server counters); `replaced_graphs`/`updated_questions` existed and were brought to the file's content."""

    dataset: str
    kind: str
    source: str
    records: int
    input_entities: int
    input_relationships: int
    input_graphs: int
    input_questions: int
    written_entities: int
    written_relationships: int
    written_graphs: int
    written_questions: int
    texts_embedded: int
    skipped: int
    skipped_reasons: dict[str, int]
    skipped_examples: list[str]
    seconds: float
    phase_seconds: dict[str, float] = field(default_factory=dict)
    totals: DatasetStats | None = None  # the dataset in the database after the load
    replaced_graphs: int = 0  # graphs that existed with other content: their nodes and edges were rewritten
    updated_questions: int = 0  # questions that existed with other properties or links

    @property
    def triples_per_s(self) -> float:
        """Input relationships per second of the whole load (parse + embed + write)."""
        return self.input_relationships / self.seconds if self.seconds > 0 else 0.0

    @property
    def write_triples_per_s(self) -> float:
        """Relationships written per second of the relationship write phase alone."""
        seconds = self.phase_seconds.get("write relationships", 0.0)
        return self.written_relationships / seconds if seconds > 0 else 0.0
