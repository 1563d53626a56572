#!/usr/bin/env python
"""G-Retriever training on one GPU (bf16) for a machine without Neo4j and without network.

Two steps:

1. Here (with Neo4j, the models and the data), build a bundle:

       .venv/bin/python scripts/gpu_train.py prepare --out BUNDLE [--samples FILE]

   BUNDLE/samples.pt   subgraph samples: FILE from `gr-neo4j retrieve --out`, or by default the
                       ExplaGraphs whole-graph samples of the shared train.tsv
   BUNDLE/llm/         the default LLM's converted weights (safetensors + tokenizer), or --llm DIR
   BUNDLE/wheels/      a wheel of gr-neo4j itself and the pure-Python packages its model code needs
                       beyond torch, torch_geometric and transformers (platformdirs, rich and rich's
                       own), at the versions installed here (PyPI must be reachable for this step)

2. On the GPU machine, from a checkout of this repository (torch, torch_geometric, transformers,
   peft and sentence-transformers installed there):

       python scripts/gpu_train.py run --bundle BUNDLE [--minutes 8] [--lora]

   installs what is missing from BUNDLE/wheels (no index, no dependencies pulled: Neo4j's driver is
   not needed there), trains within the budget, answers the test split and prints JSON: samples/s of
   training and generation, the test metric, peak GPU memory.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# import name -> distribution: what the model code imports beyond the GPU machine's packages
NEEDED = {"platformdirs": "platformdirs", "rich": "rich", "markdown_it": "markdown-it-py", "mdurl": "mdurl",
          "pygments": "pygments"}


def build_wheels(wheels: Path) -> None:
    """A wheel of this checkout plus the NEEDED packages at the versions installed here."""
    from importlib.metadata import version

    wheels.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.check_call([*pip, "wheel", "--no-deps", "-w", str(wheels), str(REPO)])
    pins = [f"{dist}=={version(dist)}" for dist in NEEDED.values()]
    subprocess.check_call([*pip, "download", "--no-deps", "--only-binary=:all:", "-d", str(wheels), *pins])


def ensure_packages(wheels: Path) -> None:
    missing = [dist for mod, dist in NEEDED.items() if importlib.util.find_spec(mod) is None]
    if importlib.util.find_spec("gr_neo4j") is None:
        missing.append("gr-neo4j")
    if missing:
        if not wheels.is_dir():
            sys.exit(f"missing packages {missing} and no wheels in {wheels}")
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                               "--find-links", str(wheels), *missing])


def prepare(args) -> None:
    from gr_neo4j.llm import ensure_converted, llm_source
    from gr_neo4j.model.datasets import cached_explagraphs
    from gr_neo4j.samples import load_samples, save_samples
    from gr_neo4j.settings import load_settings

    settings = load_settings()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    samples = load_samples(args.samples) if args.samples else cached_explagraphs(args.tsv, settings)
    save_samples(out / "samples.pt", samples)
    if args.llm:
        llm_dir, name = args.llm, str(args.llm)
    else:
        source = llm_source(settings)
        llm_dir = Path(source.location) if Path(source.location).is_dir() else ensure_converted(settings)
        name = source.name
    shutil.copytree(llm_dir, out / "llm", dirs_exist_ok=True)
    if not args.no_wheels:
        build_wheels(out / "wheels")
    print(json.dumps({"bundle": str(out), "samples": len(samples), "dataset": samples[0].dataset, "llm": name}))


def run(args) -> None:
    ensure_packages(args.bundle / "wheels")
    import torch

    from gr_neo4j.model import TrainConfig, evaluate, train
    from gr_neo4j.llm import load_llm_from
    from gr_neo4j.samples import load_samples

    samples_file = args.bundle / "samples.pt"
    dataset = load_samples(samples_file)[0].dataset
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    llm_dir = str(args.bundle / "llm")
    out = args.out or Path(tempfile.mkdtemp(prefix="gpu-train-"))
    t0 = time.perf_counter()
    llm = load_llm_from(llm_dir, device=device, dtype=dtype)
    load_s = time.perf_counter() - t0
    config = TrainConfig(dataset=dataset, out=out, retrieved=samples_file, llm=llm_dir, epochs=args.epochs,
                         batch_size=args.batch_size, eval_batch_size=32, lr=args.lr, lora=args.lora, gnn=args.gnn,
                         max_minutes=args.minutes, limit=args.limit, resume=False, show_progress=False)
    result = train(config, llm=llm)
    ev = evaluate(out, "test", llm=load_llm_from(llm_dir, device=device, dtype=dtype), batch_size=32,
                  limit=args.eval_limit, show_progress=False)
    print(json.dumps({
        "dataset": dataset, "device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "dtype": str(dtype),
        "gnn": args.gnn, "lora": args.lora, "llm_load_s": round(load_s, 1),
        "epochs_run": result.epochs_run, "stopped": result.stopped, "best_val_loss": round(result.best_val_loss, 4),
        "train_samples_per_s": round(result.train_samples_per_s, 2), "train_seconds": round(result.seconds, 1),
        "generation_samples_per_s": round(ev.samples_per_s, 2), ev.metric: round(ev.value, 4), "answered": ev.total,
        "hallucination_rate": ev.hallucination_rate,
        "peak_gpu_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1) if device == "cuda" else None,
        "checkpoint": str(out),
    }, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="build a bundle (here, with the models and data)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--samples", type=Path, help="samples file from `gr-neo4j retrieve --out` (default: ExplaGraphs)")
    p.add_argument("--tsv", type=Path, default=REPO.parent / "shared" / "datasets" / "explagraphs" / "train.tsv")
    p.add_argument("--llm", type=Path, help="a model directory to ship instead of the default LLM")
    p.add_argument("--no-wheels", action="store_true", help="skip the wheels (the GPU machine has gr-neo4j's needs)")
    r = sub.add_parser("run", help="train and evaluate from a bundle (on the GPU machine)")
    r.add_argument("--bundle", type=Path, required=True)
    r.add_argument("--out", type=Path)
    r.add_argument("--minutes", type=float, default=7.0, help="training budget (evaluation comes on top)")
    r.add_argument("--epochs", type=int, default=10)
    r.add_argument("--batch-size", type=int, default=4)
    r.add_argument("--lr", type=float, default=1e-5)
    r.add_argument("--gnn", default="gt")
    r.add_argument("--lora", action="store_true")
    r.add_argument("--limit", type=int, default=None)
    r.add_argument("--eval-limit", type=int, default=None)
    args = ap.parse_args()
    if args.cmd == "prepare":
        prepare(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
