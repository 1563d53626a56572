"""One place for each fact: what a dataset is lives on its loader's spec, every error in errors.py."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gr_neo4j import errors
from gr_neo4j.defaults import Mode
from gr_neo4j.errors import GrNeo4jError, UsageError
from gr_neo4j.ingest.facts import Answers, DatasetFacts
from gr_neo4j.ingest.source import LOADER_MODULES, facts_of, get_loader
from gr_neo4j.metrics import kind_of, metric_name
from gr_neo4j.model.label_model import labels_of
from gr_neo4j.retrieval.params import RetrievalParams, default_mode

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*(ROOT / "gr_neo4j").rglob("*.py"), *(ROOT / "loaders").rglob("*.py")]


@pytest.mark.parametrize("dataset, answers, metric, mode, topk_e", [
    ("explagraphs", Answers.STANCE, "accuracy", Mode.WHOLE, 5),
    ("scene_graphs", Answers.SCENE_GRAPH, "accuracy", Mode.REFERENCE, 3),
    ("webqsp", Answers.ENTITIES, "hit@1", Mode.REFERENCE, 5),
])
def test_the_model_metrics_and_retrieval_read_the_loaders_facts(dataset, answers, metric, mode, topk_e):
    assert facts_of(dataset) is get_loader(dataset).facts
    assert kind_of(dataset) == answers and metric_name(dataset) == metric
    assert default_mode(dataset, "per-sample") == mode
    assert RetrievalParams().resolved(dataset, "per-sample").topk_e == topk_e


def test_a_dataset_the_user_named_is_a_graph_of_entities():
    assert facts_of("movies") == DatasetFacts() and kind_of("movies") == Answers.ENTITIES
    assert default_mode("movies", "knowledge-graph") == Mode.PATHS


def test_labels_come_from_the_facts_and_their_absence_is_a_usage_error():
    assert labels_of("explagraphs") == ["counter", "support"]
    with pytest.raises(UsageError, match="only for explagraphs, not metaqa"):
        labels_of("metaqa")


def test_only_the_loaders_compare_against_their_dataset_names():
    """A literal loader name in a comparison or a collection outside the loaders and their registry
    is a second copy of a dataset fact (a CLI option's default value is not: it is no comparison).
    The loaders of graphs the user names (triples, neo4j) are left out: 'neo4j' is also a user name."""
    fixed = {name for name in LOADER_MODULES if not get_loader(name).renamable}
    assert fixed >= {"explagraphs", "scene_graphs", "metaqa", "webqsp"}
    offenders = []
    for path in SOURCES:
        if path.parent.name == "loaders" or path == ROOT / "gr_neo4j" / "ingest" / "source.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare | ast.Tuple | ast.Set | ast.List | ast.Dict):
                offenders += [f"{path.relative_to(ROOT)}:{c.lineno} {c.value!r}" for c in ast.walk(node)
                              if isinstance(c, ast.Constant) and c.value in fixed]
    assert offenders == []


def _error_bases() -> set[str]:
    return {name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, GrNeo4jError)}


def test_every_error_class_is_defined_in_errors_py():
    bases = _error_bases()
    outside = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"
        for path in SOURCES if path != ROOT / "gr_neo4j" / "errors.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b).split(".")[-1] in bases for b in node.bases)
    ]
    assert outside == []


def test_no_bare_base_error_is_raised():
    """Each raise names what the user can do (errors.py's classes), not just 'an error'."""
    bare = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in SOURCES
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and ast.unparse(node.exc.func).endswith("GrNeo4jError")
    ]
    assert bare == []
