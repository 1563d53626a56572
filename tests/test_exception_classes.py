"""Every exception class of the library is in gr_neo4j/errors.py, where a user's error is named for
what they can do about it. Pure Python: the modules are parsed with `ast`, not imported."""

from __future__ import annotations

import ast
import builtins

from test_imports import MODULES

ERRORS = MODULES["gr_neo4j.errors"]
BUILTIN_EXCEPTIONS = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}


def _exception_classes(source: str, known: set[str]) -> list[tuple[int, str]]:
    """(line, name) of each class in `source` whose base is an exception: a builtin one, one of
    `known`, or a name that says so (``...Error``, ``...Exception``, e.g. ``neo4j.exceptions.X``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
            if any(b in known or b.endswith(("Error", "Exception", "Exit", "Interrupt")) for b in bases):
                found.append((node.lineno, node.name))
    return found


def test_no_exception_class_outside_errors_module():
    known = BUILTIN_EXCEPTIONS | {name for _, name in _exception_classes(ERRORS.read_text(encoding="utf-8"), BUILTIN_EXCEPTIONS)}
    outside = [
        f"{module}:{line} {name}"
        for module, path in MODULES.items()
        if path != ERRORS
        for line, name in _exception_classes(path.read_text(encoding="utf-8"), known)
    ]
    assert outside == []


def test_the_checker_sees_exception_classes():
    source = "class A(KeyError): pass\nclass B(TryAgain): pass\nclass C(neo4j.exceptions.ClientError): pass\nclass D(str): pass\n"
    assert _exception_classes(source, BUILTIN_EXCEPTIONS | {"TryAgain"}) == [(1, "A"), (2, "B"), (3, "C")]
