#!/usr/bin/env bash
# The test command: installs what is missing, then runs the whole suite against real Neo4j servers
# that the tests start (and stop) themselves on free ports in temporary homes, never the user's.
# Extra arguments go to pytest, e.g. `scripts/test.sh -k schema`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh

# The Browser tests drive a headless Chromium (Debian's package), through Playwright in one of them.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing chromium with apt-get (for the Neo4j Browser test)"
    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
  else
    echo "warning: chromium is not installed; the Browser test will fail" >&2
  fi
fi

# The Neo4j jars are shared between test runs; each run still gets its own server home.
export GR_NEO4J_DIST="${GR_NEO4J_DIST:-$HOME/.cache/gr-neo4j/dist}"
echo "==> ruff check"
.venv/bin/ruff check .
echo "==> the docs and integrations extras; docs: mkdocs build --strict"
.venv/bin/uv pip install -q --python .venv/bin/python -e ".[docs,pyg,graphrag,langchain]"
site="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$site"
rm -rf "$site"
exec .venv/bin/python -m pytest -ra "$@"
