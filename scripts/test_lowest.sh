#!/usr/bin/env bash
# The lowest versions pyproject.toml allows, tested: a separate environment, .venv-lowest, gets
# every direct dependency at the lowest version its range admits (uv's `lowest-direct`
# resolution; their own dependencies resolve as usual), then the tests that exercise those
# dependencies run in it against real Neo4j servers, as in scripts/test.sh. A range whose lower
# bound does not install or does not pass fails here. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install.sh >/dev/null  # .venv/bin/uv, the Neo4j distribution's installer
venv=.venv-lowest
PYTHON=${PYTHON:-python3}
[ -x "$venv/bin/python" ] || "$PYTHON" -m venv "$venv"
lock="$(mktemp)"
trap 'rm -f "$lock"' EXIT
echo "==> resolving the lowest allowed versions of the direct dependencies"
.venv/bin/uv pip compile -q --resolution lowest-direct --python "$venv/bin/python" pyproject.toml \
  --extra models --extra test -o "$lock"
grep -E '^(torch|torch-geometric|transformers|peft|sentence-transformers|neo4j|numpy|typer|fastapi)==' "$lock" | paste -sd' '
# sync: exactly these versions, whatever an earlier run left in the environment
.venv/bin/uv pip sync -q --python "$venv/bin/python" "$lock"
.venv/bin/uv pip install -q --python "$venv/bin/python" --no-deps -e . -r scripts/default-llm.txt
export GR_NEO4J_DIST="${GR_NEO4J_DIST:-$HOME/.cache/gr-neo4j/dist}"
# The tests of the library's own use of each dependency: the model and its training (torch, PyG,
# transformers, peft), the embedder (sentence-transformers, ONNX Runtime), PCST, loading and
# retrieval (neo4j), the CLI (typer, rich) and the HTTP API (fastapi, pydantic, starlette). The
# integration extras are not installed here (pyg's would lift torch_geometric's lower bound), so the
# check that every import is declared, which reads their packages' metadata, runs in test.sh only.
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@" \
  --deselect tests/test_imports.py::test_every_package_the_library_imports_is_declared \
  tests/test_model_gretriever.py tests/test_model_training.py tests/test_embedder.py tests/test_models.py \
  tests/test_pcst.py tests/test_pcst_parity.py tests/test_load_metaqa.py tests/test_ask.py \
  tests/test_cli_errors.py tests/test_serve.py tests/test_imports.py
