"""The package's import graph: no cycles, and no import hidden in a function to dodge one.

Pure Python (no Neo4j): the modules are parsed with `ast`, not imported.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Installed names of the source directories (pyproject's package-dir).
PACKAGES = {"gr_neo4j": ROOT / "gr_neo4j", "gr_neo4j.loaders": ROOT / "loaders", "gr_neo4j.cypher": ROOT / "cypher"}
# Modules that talk to or manage the server: their gr_neo4j imports are all at the top, so the
# layering (settings, errors -> home.layout, home.pid -> connection -> server.process) is visible.
NO_HIDDEN_IMPORTS = ("gr_neo4j.connection", "gr_neo4j.server.", "gr_neo4j.home.")


def _modules() -> dict[str, Path]:
    found = {}
    for package, directory in PACKAGES.items():
        for path in directory.rglob("*.py"):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _resolve(module: str, path: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The gr_neo4j modules an import statement loads (a `from X import name` loads X.name if it is a module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    if node.level:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    targets = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
    if base in MODULES and len(targets) < len(node.names):
        targets.append(base)
    return targets


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(module: str, path: Path) -> tuple[set[str], list[tuple[int, str]]]:
    """(modules imported when `module` is imported, [(line, module)] imported inside functions)."""
    top: set[str] = set()
    hidden: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                for target in _resolve(module, path, child):
                    (hidden.append((child.lineno, target)) if in_function else top.add(target))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    top.discard(module)
    return top, hidden


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as a list of modules, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def walk(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return [*stack[stack.index(n) :], n]
            if n not in state and (found := walk(n)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := walk(m)):
            return found
    return None


def _ancestors(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def test_no_import_cycles():
    # A package imported by its own submodule is the normal parent-first order, not a cycle.
    graph = {m: {t for t in top if t not in _ancestors(m)} for m, (top, _) in GRAPH.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_no_import_cycles_through_imports_inside_functions():
    """An import moved into a function still runs: a cycle through one is a cycle, only later."""
    graph = {m: {t for t in top | {h for _, h in hidden} if t not in _ancestors(m)} for m, (top, hidden) in GRAPH.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def _package(module: str) -> str:
    """gr_neo4j.server.process -> gr_neo4j.server; a module at the top (gr_neo4j.connection) is its own."""
    return ".".join(module.split(".")[:2])


def test_no_cycles_between_packages():
    """The subpackages and the top-level modules layer too: connection may use home, server may
    use connection, but then home never imports connection or server."""
    graph: dict[str, set[str]] = {}
    for m, (top, hidden) in GRAPH.items():
        for t in top | {h for _, h in hidden}:
            a, b = _package(m), _package(t)
            if a != b and "gr_neo4j" not in (a, b):
                graph.setdefault(a, set()).add(b)
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(NO_HIDDEN_IMPORTS)))
def test_no_hidden_package_imports(module):
    _, hidden = GRAPH[module]
    assert not hidden, f"{module} imports inside functions: {hidden}"


def test_the_checker_sees_a_cycle_and_a_hidden_import():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    # The state of process.py before the cycle with connection.py was broken.
    source = "from ..connection import Target\ndef f():\n    from ..connection import connect\n"
    path = ROOT / "gr_neo4j" / "server" / "process.py"
    tree = ast.parse(source)
    assert _resolve("gr_neo4j.server.process", path, tree.body[0]) == ["gr_neo4j.connection"]
    assert _resolve("gr_neo4j.server.process", path, tree.body[1].body[0]) == ["gr_neo4j.connection"]


def test_every_package_the_library_imports_is_declared():
    """A package imported only because another dependency happens to install it breaks when that
    one stops doing so: every third-party import of the library is a declared dependency."""
    import importlib.metadata
    import re
    import sys

    imported = set()
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module.split(".")[0])
    imported -= set(sys.stdlib_module_names) | {"gr_neo4j"}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    declared = {re.split(r"[<>=\[ ;!~]", r)[0].lower().replace("_", "-") for r in requirements}
    distributions = importlib.metadata.packages_distributions()
    undeclared = sorted(m for m in imported if not {d.lower().replace("_", "-") for d in distributions.get(m, [])} & declared)
    assert undeclared == []


# Only scripts/ and tests use these; they are in the `test` extra, not the runtime dependencies.
SCRIPT_AND_TEST_ONLY = ("psutil", "sklearn")


def test_library_does_not_import_script_and_test_only_packages():
    offenders = [
        f"{module}:{node.lineno}"
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
        if name.split(".")[0] in SCRIPT_AND_TEST_ONLY
    ]
    assert offenders == []
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = " ".join(project["dependencies"])
    assert "psutil" not in runtime and "scikit-learn" not in runtime
    assert {"psutil", "scikit-learn"} <= {d.split(">")[0].split("=")[0] for d in project["optional-dependencies"]["test"]}
