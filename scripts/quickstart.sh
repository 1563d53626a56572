#!/usr/bin/env bash
# One command for a fresh machine: installs gr-neo4j into ./.venv, installs and starts the managed
# Neo4j, loads a graph and asks it a question. The graph is the MetaQA knowledge graph (the whole KB
# and 200 questions per hop) where its files are at hand (../shared/datasets/metaqa or
# $GR_NEO4J_DATASETS/metaqa), else Neo4j's own Movies graph, created from the Browser jar that the
# install fetched and adopted as it stands. Neo4j keeps running afterwards; open the Browser URL it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
GR=.venv/bin/gr-neo4j
echo "==> starting Neo4j (the first start fetches it from Maven Central: a few minutes)"
$GR db start
$GR models
if .venv/bin/python -c 'import sys; from gr_neo4j.ingest import get_loader; sys.exit(get_loader("metaqa").default_path() is None)'; then
  echo "==> loading MetaQA (43k entities, 129k triples, with embeddings)"
  $GR load metaqa --limit 200
  $GR stats
  echo "==> asking"
  # As typed: the linker finds Tom Hanks and Robert Zemeckis; their walks meet at the films they share.
  $GR ask "which films did Tom Hanks act in that were directed by Robert Zemeckis" --dataset metaqa
else
  echo "==> no MetaQA files here: Neo4j's Movies graph (:play movies) instead, adopted as it stands"
  # A second run finds the graph there (db example refuses to create it twice) and adopts it again.
  $GR db example movies || echo "(adopting the Movie and Person nodes already in the database)"
  $GR load neo4j --name movies
  $GR stats
  echo "==> asking"
  $GR ask "who directed The Matrix" --dataset movies
fi
