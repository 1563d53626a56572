"""The integrations' extras install into a fresh virtual environment beside the base package, from
a built wheel (not this checkout), and their modules import there."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UV = Path(sys.executable).parent / "uv"


def test_the_integration_extras_install_cleanly_into_a_fresh_venv(tmp_path):
    uv = str(UV) if UV.exists() else shutil.which("uv")
    assert uv, "uv is installed by scripts/install.sh"
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([uv, "pip", "install", "-q", "--python", str(python), f"{REPO}[pyg,graphrag,langchain]"],
                             check=False, capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    probe = ("import gr_neo4j.integrations.graphrag, gr_neo4j.integrations.langchain, gr_neo4j.integrations.pyg, gr_neo4j; "
             "import torch_geometric.llm; print(gr_neo4j.__file__)")
    out = subprocess.run([str(python), "-c", probe], check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert str(venv) in out.stdout  # the installed wheel, not this checkout
