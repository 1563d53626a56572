"""How every benchmark hands over its result: the JSON on stdout, and in a file when asked."""

from __future__ import annotations

import json
from pathlib import Path


def emit(report: dict, out: str | Path | None = None) -> None:
    """Print ``report`` as indented JSON and write the same text to ``out`` (parents made) if given."""
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
