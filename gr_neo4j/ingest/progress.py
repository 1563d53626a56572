"""One rich progress bar per phase (parse, embed, write …) with counts and rates; silent without a console."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn


class Phases:
    """Times every phase; shows a bar for it when a console is given."""

    def __init__(self, console: Console | None = None):
        self.console = console
        self.seconds: dict[str, float] = {}

    @contextmanager
    def phase(self, label: str, total: int | None = None, unit: str = "rows") -> Iterator[Callable[[int], None]]:
        began = time.perf_counter()
        if self.console is None:
            yield lambda n: None
        else:
            columns = [
                SpinnerColumn(),
                TextColumn(f"[bold]{label:<22}"),
                BarColumn(),
                MofNCompleteColumn() if total is not None else TextColumn("{task.completed:,} " + unit),
                TaskProgressColumn() if total is not None else TextColumn(""),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
            ]
            with Progress(*columns, console=self.console, transient=False) as progress:
                task = progress.add_task(label, total=total, rate="")

                def advance(n: int) -> None:
                    elapsed = max(time.perf_counter() - began, 1e-9)
                    done = progress.tasks[0].completed + n
                    progress.update(task, advance=n, rate=f"{done / elapsed:,.0f} {unit}/s")

                yield advance
                if total is not None:
                    progress.update(task, completed=total)
        self.seconds[label] = self.seconds.get(label, 0.0) + time.perf_counter() - began
