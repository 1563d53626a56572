"""Where a reported figure comes from: the command, when, on which machine, at which revision.

Every benchmark JSON and every `eval-retrieval --json-out` report carries this record under
``"provenance"``, so a figure quoted in the docs can be traced to the run that produced it and
re-made with the same command (`scripts/render_docs.py` prints it beside each table).
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

# Taken when this module is first imported, which a benchmark or the CLI does at its start: the
# load a run began under matters as much as the load it ended under.
_LOAD_AT_START = os.getloadavg()


def provenance(argv: list[str] | None = None) -> dict:
    """``{command, date, machine: {cpus, cpu_model, load_average_start, load_average_end, python},
    git_revision, version}`` for the running process (``argv`` defaults to ``sys.argv``)."""
    return {
        "command": command_line(sys.argv if argv is None else argv),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "cpus": os.cpu_count(),
            "cpu_model": _cpu_model(),
            "load_average_start": [round(x, 2) for x in _LOAD_AT_START],
            "load_average_end": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
        },
        "git_revision": git_revision(),
        "version": _version(),
    }


def command_line(argv: list[str]) -> str:
    """The command as a user would type it: ``gr-neo4j ...`` for the CLI, ``python scripts/x.py ...``
    for a script (relative to the checkout), arguments shell-quoted."""
    program = Path(argv[0])
    if program.name in ("gr-neo4j", "__main__.py"):
        head = ["gr-neo4j"]
    elif program.suffix == ".py":
        # Relative to the checkout when the script is one of its own, as the docs write it.
        try:
            shown = program.resolve().relative_to(Path(__file__).resolve().parents[1])
        except ValueError:
            shown = program
        head = ["python", shown.as_posix()]
    else:
        head = [program.name]
    return shlex.join(head + list(argv[1:]))


def git_revision() -> str | None:
    """The checkout's commit (``+dirty`` when tracked files differ from it), or None outside git."""
    here = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{rev}+dirty" if changed else rev


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _version() -> str | None:
    try:
        return metadata.version("gr-neo4j")
    except metadata.PackageNotFoundError:
        return None
