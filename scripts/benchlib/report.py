"""How every benchmark hands over its result: the JSON on stdout, and in a file when asked, each
with the run's provenance (command, date, machine, git revision) inside."""

from __future__ import annotations

import json
from pathlib import Path

from gr_neo4j.provenance import provenance


def emit(report: dict, out: str | Path | None = None) -> None:
    """Print ``report`` with its ``provenance`` as indented JSON and write the same text to ``out``
    (parents made) if given."""
    text = json.dumps({**report, "provenance": provenance()}, indent=2, ensure_ascii=False)
    print(text)
    if out:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
