"""How every benchmark hands over its result: the JSON on stdout, and in a file when asked, each
with the run's provenance (command, date, machine, git revision) inside."""

from __future__ import annotations

import json
import sys
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


def earlier_part(out: str | Path | None, report: dict, setup: tuple[str, ...], part: str) -> dict:
    """``part`` of the report an earlier run wrote to ``out`` (its rows, its configurations) when
    that run had the same ``setup`` keys as ``report``, so a table can be made one entry at a time;
    nothing without ``out``. Exits with one line when ``out`` is not JSON or holds another setup."""
    if out is None or not Path(out).is_file():
        return {}
    try:
        earlier = json.loads(Path(out).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        sys.exit(f"error: {out}: line {e.lineno}: not JSON ({e.msg}); pass another --out")
    changed = [k for k in setup if earlier.get(k) != report[k]]
    if changed:
        sys.exit(f"error: {out} holds {part} of another setup ({', '.join(changed)} differ); pass another --out")
    return earlier.get(part, {})
