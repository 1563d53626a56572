#!/usr/bin/env bash
# MetaQA end to end with the default models: load the KB and 1-hop dev questions into Neo4j,
# retrieve each question's subgraph (`gr-neo4j retrieve`, expansion depth 1), then train and
# evaluate G-Retriever on those samples (split 60/20/20, seed 42) next to the zero-shot LLM.
# Prints bench_train.py's JSON. QUESTIONS, MINUTES, EPOCHS and OUT can be set in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
QUESTIONS=${QUESTIONS:-1000}
MINUTES=${MINUTES:-20}
EPOCHS=${EPOCHS:-3}
OUT=${OUT:-$(mktemp -d -t metaqa-train-XXXXXX)}
GR=.venv/bin/gr-neo4j
$GR db start >&2
$GR load metaqa --limit "$QUESTIONS" >&2   # idempotent: a second run only checks what is there
$GR retrieve --dataset metaqa --split dev --limit "$QUESTIONS" --hops 1 --out "$OUT/samples.pt" >&2
.venv/bin/python scripts/bench_train.py --dataset metaqa --retrieved "$OUT/samples.pt" \
  --minutes "$MINUTES" --epochs "$EPOCHS" --out "$OUT/checkpoint"
