"""Choices come from gr_neo4j.defaults: --help lists them, and a bad value exits 2 everywhere
before anything runs (no Neo4j needed: the value is refused while parsing)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.defaults import Decoding, Gnn, Mode, Objective, OnError

runner = CliRunner()

# (command line up to the option, the option, its enum)
CHOICES = [
    (["ask", "who?"], "--mode", Mode),
    (["retrieve", "-d", "metaqa", "-s", "dev", "-o", "x.pt"], "--mode", Mode),
    (["train", "-d", "metaqa", "-o", "ckpt"], "--gnn", Gnn),
    (["train", "-d", "metaqa", "-o", "ckpt"], "--objective", Objective),
    (["load", "metaqa"], "--on-error", OnError),
    (["ask", "who?"], "--decoding", Decoding),
    (["eval", "-c", "ckpt"], "--decoding", Decoding),
]


@pytest.mark.parametrize("args, option, enum", CHOICES, ids=lambda v: v if isinstance(v, str) else None)
def test_a_bad_choice_exits_2_and_names_the_choices(args, option, enum, tmp_path, monkeypatch):
    monkeypatch.setenv("GR_NEO4J_HOME", str(tmp_path))  # never reached: parsing fails first
    result = runner.invoke(app, [*args, option, "sideways"])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "sideways" in text and all(e.value in text for e in enum)


@pytest.mark.parametrize("args, option, enum", CHOICES, ids=lambda v: v if isinstance(v, str) else None)
def test_help_lists_the_choices(args, option, enum):
    result = runner.invoke(app, [args[0], "--help"], env={"COLUMNS": "300"})  # rich would wrap the choices
    assert result.exit_code == 0, result.output
    # the option's own row (other rows' help may name it too)
    line = next(line for line in result.output.splitlines() if re.match(rf"\W*(\*\s+)?{option}\b", line))
    assert f"<{'|'.join(e.value for e in enum)}>" in line, result.output


def test_retrieval_option_defaults_are_the_librarys():
    # the options read them from gr_neo4j.retrieval.params, which loads no torch (see the next test)
    import inspect

    from gr_neo4j.cli import retrieval as cli_retrieval
    from gr_neo4j.retrieval import RetrievalParams

    library = RetrievalParams()
    for command in (cli_retrieval.ask, cli_retrieval.retrieve):
        options = inspect.signature(command).parameters
        for name in ("hops", "topk", "topk_e", "cost_e", "max_paths", "node_budget", "answer_cap", "path_ranker", "mode"):
            assert options[name].default.default == getattr(library, name), (command.__name__, name)


def test_train_paths_option_defaults_are_the_librarys():
    import inspect

    from gr_neo4j.cli import retrieval as cli_retrieval
    from gr_neo4j.retrieval.params import PathTraining

    options = inspect.signature(cli_retrieval.train_paths).parameters
    for name in ("skip", "limit", "epochs", "lr"):
        assert options[name].default.default == getattr(PathTraining, name), name
    assert options["hops"].default.default == ",".join(map(str, PathTraining.hops))


def test_train_option_defaults_are_the_librarys():
    import inspect

    from gr_neo4j.cli import train as cli_train
    from gr_neo4j.model import TrainConfig

    options = inspect.signature(cli_train.train.__wrapped__).parameters
    for name in ("epochs", "batch_size", "grad_accum", "lr", "min_lr", "lora", "gnn", "patience", "max_txt_len"):
        assert options[name].default.default == getattr(TrainConfig, name), name


def test_the_cli_shows_the_defaults_without_loading_torch():
    import subprocess
    import sys

    code = "import sys, gr_neo4j.cli; print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
