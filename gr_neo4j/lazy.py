"""Names of a package imported on first use (PEP 562), so a light import stays light.

    __getattr__ = lazy_attributes(__name__, {"Retriever": "retriever", ...})

`gr_neo4j.model` and `gr_neo4j.retrieval` use it: the CLI imports their parameter dataclasses to
show defaults without loading numpy-heavy stages, torch or transformers.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, modules: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `package.<modules[name]>` when `name` is first read."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f".{module}", package), name)

    return __getattr__
