"""Layering of answering: `gr_neo4j.answer` sits above retrieval and the model; retrieval never
reaches up, and the answering stack is imported only when something is answered."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gr_neo4j

PACKAGE = Path(gr_neo4j.__file__).parent
# What only answering needs: loaded by `answer.load_answerer`, never by retrieval or a cold CLI
# (gr_neo4j.model.config, whose dataclasses hold the CLI's defaults, is light and allowed).
ANSWERING = tuple(f"gr_neo4j.model.{m}" for m in ("checkpoint", "encoder", "evaluation", "gretriever", "training", "datasets")) + (
    "gr_neo4j.llm", "peft", "safetensors.torch", "matplotlib")


def imported_modules(path: Path, package: str) -> set[str]:
    """Every module `path` imports, at any depth (inside functions too), relative ones resolved."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_retrieval_never_imports_answering_the_model_or_the_llm():
    for path in sorted((PACKAGE / "retrieval").glob("*.py")):
        bad = {m for m in imported_modules(path, "gr_neo4j.retrieval")
               if m.startswith(("gr_neo4j.model", "gr_neo4j.llm", "gr_neo4j.answer", "gr_neo4j.cli"))}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def loaded_after(statement: str) -> set[str]:
    code = f"import sys, warnings; warnings.simplefilter('ignore'); {statement}; print(' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


# Retrieval runs on numpy and the embedder on ONNX Runtime: none of these until something needs a tensor.
TENSOR_STACK = ("torch", "torch_geometric", "transformers", "sentence_transformers", "gr_neo4j.samples")


def test_asking_without_answering_does_not_load_the_answering_stack():
    loaded = loaded_after("import gr_neo4j.answer, gr_neo4j.retrieval, gr_neo4j.cli")
    assert "gr_neo4j.answer" in loaded
    assert not {m for m in loaded if m.startswith(ANSWERING)}


def test_retrieving_and_embedding_with_onnx_load_no_torch_pyg_or_transformers():
    loaded = loaded_after("import gr_neo4j.answer, gr_neo4j.cli.retrieval, gr_neo4j.retrieval.retriever, gr_neo4j.retrieval.support, "
                          "gr_neo4j.retrieval.batch, gr_neo4j.embedder, gr_neo4j.embedder.onnx, gr_neo4j.embedder.export")
    assert not {m for m in loaded if m.split(".")[0] in TENSOR_STACK or m in TENSOR_STACK}


def test_load_answerer_is_where_the_answering_stack_comes_in():
    assert {"gr_neo4j.model", "gr_neo4j.llm"} <= imported_modules(PACKAGE / "answer.py", "gr_neo4j")
    tree = ast.parse((PACKAGE / "answer.py").read_text())
    top_level = {n.module for n in tree.body if isinstance(n, ast.ImportFrom)}
    assert not {m for m in top_level if m and m.lstrip(".").startswith(("model", "llm"))}
