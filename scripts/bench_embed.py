"""Benchmark: the embedding backends on MetaQA's texts, torch (the baseline) vs ONNX, in one run.

1. Speed: every distinct entity and relation text of MetaQA's KB (what `load metaqa` embeds)
   through the load's own path (`embed_distinct`, the load's batch size), torch and onnx taking
   turns for --rounds rounds: texts/s of each round and their median, and the speed-up.
2. Agreement: min / mean / 1st percentile of the cosine between each text's ONNX and torch vectors.
3. Retrieval: a sample of MetaQA dev questions embedded by each backend; for each question the
   top-k entities (k = 3, retrieval's default topk, and 10) and the ranking of the 9 relation
   texts by cosine, each backend against its own KB vectors: the share of top-k sets equal to
   torch's, the mean overlap, and the share of questions whose best relation is the same.
4. With --int8: the same for the onnx-int8 backend (the export's weights quantised to int8 per
   channel, see gr_neo4j.embedder.quantize), against torch and against the float32 export.

The ONNX export (and with --int8 its quantisation) is made first if the cache
(GR_NEO4J_HOME/cache/embedder) lacks it; its time is reported apart. Prints one JSON document (and writes it to --out). Note the load average in the
JSON: on a shared 2-core machine, other jobs change both rates.

    python scripts/bench_embed.py [--metaqa DIR] [--limit N] [--questions 2000] [--rounds 2] [--int8] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np
from benchlib.report import emit
from gr_neo4j.loaders.metaqa import relation_text

from gr_neo4j.embedder import Embedder, embedder_source
from gr_neo4j.embedder.export import ensure_exported
from gr_neo4j.embedder.quantize import ensure_quantized
from gr_neo4j.ingest.embed import embed_distinct
from gr_neo4j.ingest.pipeline import EMBED_BATCH_SIZE
from gr_neo4j.ingest.source import shared_path
from gr_neo4j.settings import load_settings


def kb_texts(root: Path, limit: int | None) -> tuple[list[str], list[str]]:
    """(entity names, relation texts) of kb.txt, each distinct, in file order."""
    entities: dict[str, None] = {}
    relations: dict[str, None] = {}
    for line in (root / "kb.txt").read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and all(parts):
            entities[parts[0]] = entities[parts[2]] = None
            relations[relation_text(parts[1])] = None
    names = list(entities)
    return (names[:limit] if limit else names), list(relations)


def dev_questions(root: Path, n: int, seed: int = 0) -> list[str]:
    questions = []
    for hops in (1, 2, 3):
        for line in (root / f"{hops}-hop" / "qa_dev.txt").read_text(encoding="utf-8").splitlines():
            questions.append(line.split("\t")[0].replace("[", "").replace("]", "").strip())
    return random.Random(seed).sample(questions, min(n, len(questions)))


def timed_embed(embedder: Embedder, texts: list[str]) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    vectors = embed_distinct(embedder, texts, EMBED_BATCH_SIZE)
    seconds = time.perf_counter() - start
    return vectors.matrix[vectors.rows_of(texts)], len(texts) / seconds


def cosine_stats(a: np.ndarray, b: np.ndarray) -> dict:
    cos = (a * b).sum(axis=1)
    return {"min": round(float(cos.min()), 6), "mean": round(float(cos.mean()), 7), "p1": round(float(np.percentile(cos, 1)), 6)}


def top_k(questions: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
    """[Q, k] indices of the k keys most similar to each question (sets; order within ignored)."""
    out = np.empty((len(questions), k), dtype=np.int64)
    for start in range(0, len(questions), 512):
        scores = questions[start : start + 512] @ keys.T
        out[start : start + 512] = np.argpartition(-scores, k, axis=1)[:, :k]
    return out


def retrieval_agreement(ref: dict, ours: dict) -> dict:
    report = {}
    for k in (3, 10):
        a, b = top_k(ref["q"], ref["ent"], k), top_k(ours["q"], ours["ent"], k)
        overlap = np.array([len(set(x) & set(y)) / k for x, y in zip(a, b)])
        report[f"entity_top{k}_same_set"] = round(float((overlap == 1).mean()), 4)
        report[f"entity_top{k}_mean_overlap"] = round(float(overlap.mean()), 5)
        # A different set is a tie when torch scores our picks as high as its own k-th best (many
        # MetaQA names differ only in case, which the uncased tokenizer erases: equal vectors).
        torch_scores = np.take_along_axis(ref["q"] @ ref["ent"].T, np.concatenate([a, b], axis=1), axis=1)
        gap = torch_scores[:, :k].min(axis=1) - torch_scores[:, k:].min(axis=1)
        report[f"entity_top{k}_same_up_to_ties_1e-4"] = round(float((gap < 1e-4).mean()), 4)
    best_ref = (ref["q"] @ ref["rel"].T).argmax(axis=1)
    best_ours = (ours["q"] @ ours["rel"].T).argmax(axis=1)
    report["best_relation_same"] = round(float((best_ref == best_ours).mean()), 5)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metaqa", type=Path, default=None, help="MetaQA directory (default: ../shared/datasets/metaqa)")
    parser.add_argument("--limit", type=int, default=None, help="embed only the first N entity names (default: all)")
    parser.add_argument("--questions", type=int, default=2000, help="dev questions for the retrieval comparison")
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds per backend, taking turns")
    parser.add_argument("--int8", action="store_true", help="also measure the onnx-int8 backend")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    root = args.metaqa or shared_path("metaqa")
    settings = load_settings()
    source = embedder_source(settings)
    entities, relations = kb_texts(root, args.limit)
    texts = entities + relations
    questions = dev_questions(root, args.questions)

    cache = settings.cache_dir / "embedder"
    start = time.perf_counter()
    export_dir = ensure_exported(source.name, source.location, cache)
    export_s = time.perf_counter() - start
    start = time.perf_counter()
    quantized_dir = ensure_quantized(source.name, source.location, cache) if args.int8 else None
    quantize_s = time.perf_counter() - start
    start = time.perf_counter()
    names = ["torch", "onnx"] + (["onnx-int8"] if args.int8 else [])
    backends = {name: Embedder(source, backend=name, device="cpu", cache_dir=cache) for name in names}
    load_s = time.perf_counter() - start
    rates: dict[str, list[float]] = {name: [] for name in backends}
    vectors: dict[str, np.ndarray] = {}
    load_before = os.getloadavg()
    for _ in range(args.rounds):
        for name, embedder in backends.items():
            vectors[name], rate = timed_embed(embedder, texts)
            rates[name].append(round(rate, 1))
    load_after = os.getloadavg()
    sides = {
        name: {"q": embedder.encode(questions), "ent": vectors[name][: len(entities)], "rel": vectors[name][len(entities) :]}
        for name, embedder in backends.items()
    }
    median = {name: statistics.median(r) for name, r in rates.items()}
    report = {
        "model": source.name,
        "texts": {"entities": len(entities), "relations": len(relations), "questions": len(questions)},
        "batch_size": EMBED_BATCH_SIZE,
        "cpus": os.cpu_count(),
        "load_average_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "onnx_export_s": round(export_s, 1),
        "onnx_export_dir": str(export_dir),
        **({"int8_quantize_s": round(quantize_s, 1), "int8_dir": str(quantized_dir)} if args.int8 else {}),
        "model_load_s_all": round(load_s, 1),
        "baseline": {"backend": "torch", "texts_per_s": rates["torch"], "median_texts_per_s": median["torch"]},
    }
    for name in backends:
        if name == "torch":
            continue
        report[name] = {
            "texts_per_s": rates[name],
            "median_texts_per_s": median[name],
            "speedup_vs_torch": round(median[name] / median["torch"], 2),
            "cosine_to_torch_kb": cosine_stats(vectors[name], vectors["torch"]),
            "cosine_to_torch_questions": cosine_stats(sides[name]["q"], sides["torch"]["q"]),
            "retrieval_vs_torch": retrieval_agreement(sides["torch"], sides[name]),
        }
    if args.int8:  # how far int8 strays from the float32 export it was made from
        report["onnx-int8"]["cosine_to_onnx_kb"] = cosine_stats(vectors["onnx-int8"], vectors["onnx"])
        report["onnx-int8"]["speedup_vs_onnx"] = round(median["onnx-int8"] / median["onnx"], 2)
    emit(report, args.out)


if __name__ == "__main__":
    main()
