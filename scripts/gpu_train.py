#!/usr/bin/env python
"""G-Retriever training on one GPU (bf16) for a machine without Neo4j and without network.

Two steps:

1. Here (with Neo4j, the models and the data), build a bundle:

       .venv/bin/python scripts/gpu_train.py prepare --out BUNDLE [--samples FILE] [--llm DIR]

   BUNDLE/samples.pt   subgraph samples: FILE from `gr-neo4j retrieve --out`, or by default the
                       ExplaGraphs whole-graph samples of the shared train.tsv
   BUNDLE/gguf/        the default LLM as its GGUF file cut into parts of at most --part-mib MiB
                       (joined and converted to safetensors there); with --llm DIR, BUNDLE/llm/ instead
   BUNDLE/wheels/      a wheel of gr-neo4j itself and the pure-Python packages its model code needs
                       beyond torch, torch_geometric and transformers (platformdirs, gguf), at the
                       versions installed here (PyPI must be reachable here)
   BUNDLE/manifest.json  the files grouped so that no group exceeds --part-mib: when only so much
                       can travel at a time, send one group after the other

2. On the GPU machine, from a checkout of this repository (torch, torch_geometric, transformers,
   peft and sentence-transformers installed there):

       python scripts/gpu_train.py run --bundle BUNDLE [--minutes 7] [--lora]

   installs what is missing from BUNDLE/wheels into BUNDLE/site (no index, no dependencies pulled:
   Neo4j's driver is not needed there), joins and converts the GGUF, trains within the budget,
   answers the test split and prints JSON: samples/s of training and generation, the test metric,
   peak GPU memory. Options left out take gr-neo4j's defaults (``TrainConfig``), read once the
   bundle's gr-neo4j is importable; an unknown --gnn exits 2 like a bad argument.
"""

from __future__ import annotations

import argparse
import importlib
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
# (progress goes through gr_neo4j.progress, so rich is not among them)
NEEDED = {"platformdirs": "platformdirs", "gguf": "gguf"}
MIB = 2**20
EVAL_BATCH_SIZE = 32  # a GPU answers larger batches than TrainConfig.eval_batch_size (a CPU's)
# options whose default is TrainConfig's (None on the command line: gr_neo4j may not be importable yet)
TRAIN_DEFAULTS = ("epochs", "batch_size", "lr", "graph_lr", "min_lr", "warmup_epochs", "gnn", "lora_r", "lora_alpha", "lora_targets", "max_txt_len")


def build_wheels(wheels: Path) -> None:
    """A wheel of this checkout plus the NEEDED packages at the versions installed here."""
    from importlib.metadata import version

    wheels.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.check_call([*pip, "wheel", "--no-deps", "-w", str(wheels), str(REPO)])
    pins = [f"{dist}=={version(dist)}" for dist in NEEDED.values()]
    subprocess.check_call([*pip, "download", "--no-deps", "--only-binary=:all:", "-d", str(wheels), *pins])


def ensure_packages(bundle: Path) -> None:
    """Install what this Python lacks from BUNDLE/wheels into BUNDLE/site and put that on sys.path."""
    site = bundle / "site"
    if site.is_dir():
        sys.path.insert(0, str(site))
        importlib.invalidate_caches()
    missing = [dist for mod, dist in NEEDED.items() if importlib.util.find_spec(mod) is None]
    if importlib.util.find_spec("gr_neo4j") is None:
        missing.append("gr-neo4j")
    if not missing:
        return
    wheels = bundle / "wheels"
    if not wheels.is_dir():
        sys.exit(f"missing packages {missing} and no wheels in {wheels}")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                           "--upgrade", "--target", str(site), "--find-links", str(wheels), *missing])
    if str(site) not in sys.path:
        sys.path.insert(0, str(site))
    importlib.invalidate_caches()


def split_file(path: Path, folder: Path, part_bytes: int) -> list[Path]:
    """``path`` cut into ``folder/<name>.partNN`` files of at most ``part_bytes``."""
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    with path.open("rb") as f:
        while chunk := f.read(part_bytes):
            part = folder / f"{path.name}.part{len(parts):02d}"
            part.write_bytes(chunk)
            parts.append(part)
    return parts


def join_parts(folder: Path, out: Path) -> Path:
    """The inverse of :func:`split_file` for the one file whose parts ``folder`` holds."""
    parts = sorted(folder.glob("*.part[0-9][0-9]"))
    names = {p.name.rsplit(".part", 1)[0] for p in parts}
    if len(names) != 1:
        sys.exit(f"{folder}: expected the parts of one file, found {sorted(names) or 'none'}")
    target = out / names.pop()
    with target.open("wb") as f:
        for part in parts:
            f.write(part.read_bytes())
    return target


def carry_groups(bundle: Path, limit: int) -> list[list[str]]:
    """The bundle's files (relative paths) in groups of at most ``limit`` bytes, biggest first."""
    files = sorted((p for p in bundle.rglob("*") if p.is_file() and p.name != "manifest.json"),
                   key=lambda p: -p.stat().st_size)
    groups: list[tuple[int, list[str]]] = []
    for p in files:
        size = p.stat().st_size
        for i, (used, names) in enumerate(groups):
            if used + size <= limit:
                groups[i] = (used + size, names + [str(p.relative_to(bundle))])
                break
        else:
            groups.append((size, [str(p.relative_to(bundle))]))
    return [names for _, names in groups]


def prepare(args) -> None:
    from gr_neo4j.llm import DEFAULT_LLM, ensure_converted, is_gguf, llm_source
    from gr_neo4j.model.datasets import cached_file_samples
    from gr_neo4j.samples import load_samples, save_samples
    from gr_neo4j.settings import load_settings

    settings = load_settings()
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    samples = load_samples(args.samples) if args.samples else cached_file_samples("explagraphs", args.tsv, settings)
    save_samples(out / "samples.pt", samples)
    part_bytes = int(args.part_mib * MIB)
    if args.llm:
        name = str(args.llm)
        shutil.copytree(args.llm, out / "llm")
    else:
        source = llm_source(settings)
        name = source.name
        if is_gguf(source):
            split_file(Path(source.location), out / "gguf", part_bytes)
        else:
            llm_dir = Path(source.location) if Path(source.location).is_dir() else ensure_converted(settings)
            shutil.copytree(llm_dir, out / "llm")
    if not args.no_wheels:
        build_wheels(out / "wheels")
    groups = carry_groups(out, part_bytes)
    manifest = {"dataset": samples[0].dataset, "samples": len(samples), "llm": name,
                "default_llm": name == DEFAULT_LLM, "groups": groups}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps({"bundle": str(out), **manifest}))


def llm_directory(bundle: Path, work: Path) -> tuple[str, Path]:
    """(name, safetensors directory) of the bundle's LLM, joining and converting a GGUF first."""
    manifest = json.loads((bundle / "manifest.json").read_text())
    if (bundle / "llm").is_dir():
        return manifest["llm"], bundle / "llm"
    from gr_neo4j.llm import SMOLLM2_CHAT_TEMPLATE, convert_gguf

    gguf = join_parts(bundle / "gguf", work)
    template = SMOLLM2_CHAT_TEMPLATE if manifest["default_llm"] else None
    converted = convert_gguf(gguf, work / "llm", chat_template=template)
    gguf.unlink()
    return manifest["llm"], converted


def with_defaults(args, parser):
    """``args`` with each option left out set to gr-neo4j's default; an unknown --gnn exits 2."""
    from gr_neo4j.defaults import Gnn
    from gr_neo4j.model.config import TrainConfig

    for name in TRAIN_DEFAULTS:
        if getattr(args, name, None) is None:
            setattr(args, name, getattr(TrainConfig, name))
    if isinstance(args.lora_targets, str):
        args.lora_targets = tuple(t.strip() for t in args.lora_targets.split(",") if t.strip())
    try:
        args.gnn = Gnn(args.gnn)
    except ValueError:
        parser.error(f"argument --gnn: invalid choice: {args.gnn!r} (choose from {', '.join(Gnn)})")
    return args


def run(args) -> None:
    import torch

    from gr_neo4j.llm import load_llm_from
    from gr_neo4j.model import TrainConfig, evaluate, train
    from gr_neo4j.samples import load_samples

    samples_file = args.bundle / "samples.pt"
    dataset = load_samples(samples_file)[0].dataset
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    out = args.out or Path(tempfile.mkdtemp(prefix="gpu-train-"))
    t0 = time.perf_counter()
    name, llm_dir = llm_directory(args.bundle, Path(tempfile.mkdtemp(prefix="gpu-llm-")))
    convert_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    llm = load_llm_from(llm_dir, device=device, dtype=dtype)
    load_s = time.perf_counter() - t0
    config = TrainConfig(dataset=dataset, out=out, retrieved=samples_file, llm=str(llm_dir), epochs=args.epochs,
                         batch_size=args.batch_size, eval_batch_size=EVAL_BATCH_SIZE, lr=args.lr, graph_lr=args.graph_lr,
                         min_lr=args.min_lr, warmup_epochs=args.warmup_epochs, lora=args.lora, lora_r=args.lora_r,
                         lora_alpha=args.lora_alpha, lora_targets=args.lora_targets, max_txt_len=args.max_txt_len,
                         gnn=args.gnn, max_minutes=args.minutes, limit=args.limit, resume=False)
    result = train(config, llm=llm)
    ev = evaluate(out, "test", llm=load_llm_from(llm_dir, device=device, dtype=dtype), batch_size=EVAL_BATCH_SIZE,
                  limit=args.eval_limit)
    print(json.dumps({
        "dataset": dataset, "llm": name, "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "dtype": str(dtype), "gnn": args.gnn, "lora": args.lora,
        "config": {k: v for k, v in config.to_dict().items() if k in ("lr", "graph_lr", "min_lr", "warmup_epochs", "batch_size", "lora_r",
                                                                      "lora_alpha", "lora_targets", "max_txt_len")},
        "llm_convert_s": round(convert_s, 1),
        "llm_load_s": round(load_s, 1), "epochs_planned": args.epochs, "epochs_run": result.epochs_run,
        "stopped": result.stopped, "best_epoch": result.best_epoch, "best_val_loss": round(result.best_val_loss, 4),
        "train_samples_per_s": round(result.train_samples_per_s, 2), "train_seconds": round(result.seconds, 1),
        "generation_samples_per_s": round(ev.samples_per_s, 2), ev.metric: round(ev.value, 4), "answered": ev.total,
        "hallucination_rate": ev.hallucination_rate,
        "peak_gpu_mb": round(torch.cuda.max_memory_allocated() / MIB, 1) if device == "cuda" else None,
        "checkpoint": str(out),
    }, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="build a bundle (here, with the models and data)")
    p.add_argument("--out", type=Path, required=True, help="bundle directory (replaced)")
    p.add_argument("--samples", type=Path, help="samples file from `gr-neo4j retrieve --out` (default: ExplaGraphs)")
    p.add_argument("--tsv", type=Path, default=REPO.parent / "shared" / "datasets" / "explagraphs" / "train.tsv")
    p.add_argument("--llm", type=Path, help="a model directory to ship instead of the default LLM")
    p.add_argument("--part-mib", type=float, default=48.0, help="largest GGUF part and carry group")
    p.add_argument("--no-wheels", action="store_true", help="skip the wheels (the GPU machine has gr-neo4j's needs)")
    r = sub.add_parser("run", help="train and evaluate from a bundle (on the GPU machine)")
    r.add_argument("--bundle", type=Path, required=True)
    r.add_argument("--out", type=Path)
    r.add_argument("--minutes", type=float, default=7.0, help="training budget (evaluation comes on top)")
    r.add_argument("--epochs", type=int, help="default: gr-neo4j's TrainConfig.epochs")
    r.add_argument("--batch-size", type=int, help="default: TrainConfig.batch_size")
    r.add_argument("--lr", type=float, help="default: TrainConfig.lr")
    r.add_argument("--gnn", help="graph encoder, a gr_neo4j.defaults.Gnn value (default: TrainConfig.gnn)")
    r.add_argument("--graph-lr", type=float, help="default: TrainConfig.graph_lr (--lr)")
    r.add_argument("--min-lr", type=float, help="default: TrainConfig.min_lr")
    r.add_argument("--warmup-epochs", type=float, help="default: TrainConfig.warmup_epochs")
    r.add_argument("--lora", action="store_true")
    r.add_argument("--lora-r", type=int, help="default: TrainConfig.lora_r")
    r.add_argument("--lora-alpha", type=int, help="default: TrainConfig.lora_alpha")
    r.add_argument("--lora-targets", help="comma-separated modules (default: TrainConfig.lora_targets)")
    r.add_argument("--max-txt-len", type=int, help="default: TrainConfig.max_txt_len (0: no textualized graph)")
    r.add_argument("--limit", type=int, default=None)
    r.add_argument("--eval-limit", type=int, default=None)
    args = ap.parse_args()
    if args.cmd == "prepare":
        prepare(args)
    else:
        ensure_packages(args.bundle)
        run(with_defaults(args, r))


if __name__ == "__main__":
    main()
