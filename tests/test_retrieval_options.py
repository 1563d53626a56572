"""The retrieval options are declared once: the CLI's help and the API's descriptions are HELP's."""

from __future__ import annotations

import inspect

import pytest

from gr_neo4j.api.requests import RetrieveRequest
from gr_neo4j.cli import retrieval as cli
from gr_neo4j.retrieval.params import HELP, RetrievalParams


def test_every_option_of_retrieval_params_has_help():
    fields = set(RetrievalParams.__dataclass_fields__) - {"limits"}
    assert fields <= set(HELP)


@pytest.mark.parametrize("command", [cli.ask, cli.retrieve])
def test_the_cli_shows_the_same_help(command):
    options = inspect.signature(command).parameters
    # retrieve's --dataset is required and says so in its own words; the knobs are shared
    shown = {name: options[name].default.help for name in HELP if name in options and name != "dataset"}
    assert shown and shown == {name: HELP[name] for name in shown}


def test_the_api_describes_the_same_options():
    fields = RetrieveRequest.model_fields
    assert {name: fields[name].description for name in HELP} == HELP
