#!/usr/bin/env bash
# One command for a fresh machine: installs gr-neo4j into ./.venv, installs and starts the managed
# Neo4j, creates the schema and shows the models in use.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh
GR=.venv/bin/gr-neo4j
echo "==> starting Neo4j (the first start fetches it from Maven Central: a few minutes)"
$GR db start
$GR db init
$GR models
$GR db status
