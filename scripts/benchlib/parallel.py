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
import time
from pathlib import Path

from gr_neo4j.provenance import command_line

# options the parent decides for each child (or keeps for itself)
PER_CHILD = ("--jobs", "--threads", "--out", "--plot")
POLL_S = 0.5  # how often the parent looks for a finished child


def without(argv: list[str], names: tuple[str, ...]) -> list[str]:
    """``argv`` less the options ``names`` with their values (``--name v ...`` or ``--name=v``)."""
    kept: list[str] = []
    skipping = False
    for arg in argv:
        if arg.startswith("--"):
            name, eq, _ = arg.partition("=")
            skipping = name in names and not eq  # --name=v carries its value: nothing follows to skip
            if name in names:
                continue
        elif skipping:
            continue
        kept.append(arg)
    return kept


def fan_out(script: str, argv: list[str], option: str, values: list[str], part: str, jobs: int, workdir: Path) -> dict:
    """Run ``script`` once per value of ``option`` (``jobs`` at a time, cores/jobs threads each) and
    merge the ``part`` each child wrote to its ``--out``, in the order of ``values``: entry name ->
    its figures, whose provenance names the command the user ran (``script argv``). When a child
    fails, the others are stopped and one line names its entry."""
    threads = max(1, (os.cpu_count() or 1) // jobs)
    common = [sys.executable, script, *without(argv, (*PER_CHILD, option)), "--threads", str(threads)]
    outs = [workdir / f"{part}-{i}.json" for i in range(len(values))]
    running: dict[int, subprocess.Popen] = {}
    pending = list(range(len(values)))
    while pending or running:
        while pending and len(running) < jobs:
            i = pending.pop(0)
            running[i] = subprocess.Popen([*common, option, values[i], "--out", str(outs[i])], stdout=subprocess.DEVNULL)
        done = [i for i, proc in running.items() if proc.poll() is not None]
        for i in done:
            proc = running.pop(i)
            if proc.returncode != 0:
                for other in running.values():  # an hour of training nobody will read
                    other.kill()
                    other.wait()
                sys.exit(f"error: {option} {values[i]}: its process failed (exit {proc.returncode})")
        if not done:
            time.sleep(POLL_S)
    gathered: dict = {}
    for out in outs:
        gathered.update(json.loads(out.read_text(encoding="utf-8"))[part])
    # The command to make a figure again is the one the user ran, not the child's with its temporary --out.
    ran = command_line([script, *argv])
    for entry in gathered.values():
        if "provenance" in entry:
            entry["provenance"]["command"] = ran
    return gathered
