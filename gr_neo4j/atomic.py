"""Write a file so that readers see the old one or the whole new one, never half of it.

    with atomic_path(out / "model.safetensors") as tmp:
        save_file(state, str(tmp))          # any writer that takes a path

The temporary file sits next to the target (same filesystem, so `os.replace` is atomic); it is
removed if the writer fails, and replaces the target only when the writer returns.
`build_directory` does the same for a cache directory built once across processes.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
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


def build_directory(target: Path, is_built: Callable[[], bool], build: Callable[[Path], None]) -> None:
    """Build the cache directory ``target`` once, even with several processes asking for it.

    Under a file lock next to it, and unless ``is_built()`` says another process finished while
    this one waited, ``build(tmp)`` fills a temporary sibling directory, which is then renamed into
    place. An outdated ``target`` is removed just before, under the lock, so readers find either
    no directory (and wait for the lock) or a complete one. Leftovers of killed runs are removed;
    the directory gets its parent's mode (mkdtemp's 0700: a cache is not secret)."""
    from filelock import FileLock

    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if is_built():
            return
        for leftover in target.parent.glob(f".{target.name}.*.tmp"):
            shutil.rmtree(leftover, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        try:
            build(tmp)
            tmp.chmod(stat.S_IMODE(target.parent.stat().st_mode))
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
