"""`RichProgress`: the CLI's implementation of `gr_neo4j.progress.Progress`, one rich bar per phase."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

from ..progress import Advance


class RichProgress:
    """A bar per phase with counts, rate and elapsed time, on `console` (stderr by default)."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(stderr=True)

    @contextmanager
    def phase(self, label: str, total: int | None = None, unit: str = "rows") -> Iterator[Advance]:
        began = time.perf_counter()
        columns = [
            SpinnerColumn(),
            TextColumn(f"[bold]{escape(label):<22}"),
            BarColumn(),
            MofNCompleteColumn() if total is not None else TextColumn("{task.completed:,} " + unit),
            TaskProgressColumn() if total is not None else TextColumn(""),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
        ]
        with Progress(*columns, console=self.console, transient=False) as bar:
            task = bar.add_task(label, total=total, rate="")

            def advance(n: int) -> None:
                elapsed = max(time.perf_counter() - began, 1e-9)
                done = bar.tasks[0].completed + n
                bar.update(task, advance=n, rate=f"{done / elapsed:,.0f} {unit}/s")

            yield advance
            if total is not None:
                bar.update(task, completed=total)

    def note(self, text: str) -> None:
        self.console.print(escape(text))
