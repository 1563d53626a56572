"""Progress reporting as a callback protocol: the library reports phases, the caller draws them.

The library never draws bars itself (no `rich` outside `cli/` and `scripts/`): long work takes a
`progress: Progress` argument (default `NO_PROGRESS`) and reports through it; the CLI passes a
`gr_neo4j.cli.progress.RichProgress`. `Phases` times every phase as well, for reports.

    with progress.phase("embed", total=len(texts), unit="texts") as advance:
        for batch in batches:
            ...
            advance(len(batch))
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

Advance = Callable[[int], None]


class Progress(Protocol):
    """What long work reports: phases with an optional total, and one-line notes."""

    def phase(self, label: str, total: int | None = None, unit: str = "rows") -> AbstractContextManager[Advance]:
        """A phase named `label` of `total` steps (None: unknown); the context yields `advance(n)`."""
        ...

    def note(self, text: str) -> None:
        """One line of information (e.g. "Neo4j artifacts resolved in 40 s")."""
        ...


class NoProgress:
    """Reports nothing: the default for library calls."""

    @contextmanager
    def phase(self, label: str, total: int | None = None, unit: str = "rows") -> Iterator[Advance]:
        yield _ignore

    def note(self, text: str) -> None:
        pass


def _ignore(n: int) -> None:
    pass


NO_PROGRESS: Progress = NoProgress()


class Phases:
    """Forwards phases to a `Progress` and adds up the seconds each one took (`seconds[label]`)."""

    def __init__(self, progress: Progress | None = None):
        self.progress = progress or NO_PROGRESS
        self.seconds: dict[str, float] = {}

    @contextmanager
    def phase(self, label: str, total: int | None = None, unit: str = "rows") -> Iterator[Advance]:
        began = time.perf_counter()
        try:
            with self.progress.phase(label, total, unit) as advance:
                yield advance
        finally:
            self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - began

    def note(self, text: str) -> None:
        self.progress.note(text)
