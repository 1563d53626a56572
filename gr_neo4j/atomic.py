"""Write a file so that readers see the old one or the whole new one, never half of it.

    with atomic_path(out / "model.safetensors") as tmp:
        save_file(state, str(tmp))          # any writer that takes a path

The temporary file sits next to the target (same filesystem, so `os.replace` is atomic); it is
removed if the writer fails, and replaces the target only when the writer returns.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path next to `path`; on success it replaces `path`, on error it is removed."""
    path = Path(path)
    # The suffix is kept last so that writers that choose a format by suffix (savefig) still do.
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
