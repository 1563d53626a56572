#!/usr/bin/env python
"""The library files one question walks through, from `gr-neo4j ask` to its answer.

Runs ``gr-neo4j ask QUESTION --no-record`` in-process under a profiler and, for every call into
the library (imports left out), reads the chain of library files on the call stack, consecutive
frames of one file counted once. It reports the longest chain (the deepest walk a reader follows
from the command to a leaf), every chain that passes through a file twice (A calls B calls back
into A: a loop between modules), and all files touched.

    python scripts/walk_question.py "which movies did Christopher Nolan direct" --dataset metaqa

Needs a running server with the dataset loaded.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = (str(REPO / "gr_neo4j"), str(REPO / "loaders"))


def walk(argv: list[str]) -> dict:
    """Run the CLI with ``argv`` under the profiler; the longest chain of library files, the chains
    through a file twice, and every file touched."""
    from gr_neo4j.cli import app

    chains: set[tuple[str, ...]] = set()

    def profile(frame, event, _arg) -> None:
        if event != "call" or not frame.f_code.co_filename.startswith(ROOTS):
            return
        files: list[str] = []
        f = frame
        while f is not None:
            name = f.f_code.co_filename
            if name.startswith(ROOTS):
                if f.f_code.co_name == "<module>":
                    return  # import time: not the question's walk
                rel = str(Path(name).relative_to(REPO))
                if not files or files[-1] != rel:
                    files.append(rel)
            f = f.f_back
        chains.add(tuple(reversed(files)))

    sys.setprofile(profile)
    try:
        app(argv, standalone_mode=False)
    finally:
        sys.setprofile(None)
    longest = max(chains, key=len, default=())  # () when the command failed before reaching the library
    loops = sorted({c for c in chains if len(set(c)) < len(c)}, key=len)
    return {
        "longest_walk": list(longest),
        "longest_walk_files": len(longest),
        "walks_through_a_file_twice": [list(c) for c in loops],
        "files_touched": sorted({f for c in chains for f in c}),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("question")
    ap.add_argument("--dataset", default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    argv = ["ask", args.question, "--no-record", *(["--dataset", args.dataset] if args.dataset else [])]
    report = {"question": args.question, **walk(argv)}
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
