"""Train a benchmark's entries (its rows, its configurations) at once, each in a process of its own.

On a 2-core machine two one-thread trainings get through more samples in an hour than one two-thread
training does, and every entry still runs under the same conditions. The script runs itself once
per entry with the same arguments, that entry alone, ``--threads`` set and ``--out`` a file of its
own, and the parent gathers what the children wrote.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# options the parent decides for each child (or keeps for itself)
PER_CHILD = ("--jobs", "--threads", "--out", "--plot")


def without(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """``argv`` less the options ``names`` with their values (``--name v ...`` or ``--name=v``)."""
    kept: list[str] = []
    skipping = False
    for arg in argv:
        if arg.startswith("--"):
            skipping = arg.split("=", 1)[0] in names and "=" not in arg
            if arg.split("=", 1)[0] in names:
                continue
        elif skipping:
            continue
        kept.append(arg)
    return kept


def fan_out(script: str, argv: list[str], option: str, values: list[str], part: str, jobs: int, workdir: Path) -> dict:
    """Run ``script`` once per value of ``option`` (``jobs`` at a time, cores/jobs threads each) and
    merge the ``part`` each child wrote to its ``--out``: entry name -> its figures. Exits with one
    line naming the entry whose child failed."""
    threads = max(1, (os.cpu_count() or 1) // jobs)
    common = [sys.executable, script, *without(argv, (*PER_CHILD, option)), "--threads", str(threads)]
    running: list[tuple[str, subprocess.Popen, Path]] = []
    gathered: dict = {}

    def collect(value: str, proc: subprocess.Popen, out: Path) -> None:
        if proc.wait() != 0:
            sys.exit(f"error: {option} {value}: its process failed (exit {proc.returncode})")
        gathered.update(json.loads(out.read_text(encoding="utf-8"))[part])

    for i, value in enumerate(values):
        if len(running) == jobs:
            collect(*running.pop(0))
        out = workdir / f"{part}-{i}.json"
        running.append((value, subprocess.Popen([*common, option, value, "--out", str(out)], stdout=subprocess.DEVNULL), out))
    for entry in running:
        collect(*entry)
    return gathered
