#!/usr/bin/env bash
# One command for a fresh machine: installs gr-neo4j into ./.venv, installs and starts the managed
# Neo4j, loads the MetaQA knowledge graph (the whole KB and 200 questions per hop) and asks a
# question with the default LLM. Neo4j keeps running afterwards; open the Browser URL it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
GR=.venv/bin/gr-neo4j
echo "==> starting Neo4j (the first start fetches it from Maven Central: a few minutes)"
$GR db start
$GR models
echo "==> loading MetaQA (43k entities, 129k triples, with embeddings)"
$GR load metaqa --limit 200
$GR stats
echo "==> asking"
# As typed: the linker finds Tom Hanks and Robert Zemeckis; their walks meet at the films they share.
$GR ask "which films did Tom Hanks act in that were directed by Robert Zemeckis" --dataset metaqa
