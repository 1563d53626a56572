"""`gr-neo4j train` and `gr-neo4j eval` end to end, with a tiny LLM saved as a local model directory."""

from __future__ import annotations

import json

from test_model_support import tiny_llm, tiny_samples
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.samples import save_samples


def test_train_then_eval_from_the_command_line(tmp_path, monkeypatch):
    monkeypatch.setenv("GR_NEO4J_HOME", str(tmp_path / "home"))
    llm_dir = tmp_path / "tiny-llm"
    model, tokenizer = tiny_llm()
    model.save_pretrained(llm_dir)
    tokenizer.save_pretrained(llm_dir)
    samples = tmp_path / "samples.pt"
    save_samples(samples, tiny_samples(10))
    out = tmp_path / "ckpt"
    runner = CliRunner()
    result = runner.invoke(app, ["train", "--dataset", "explagraphs", "--retrieved", str(samples), "--llm", str(llm_dir),
                                 "--out", str(out), "--epochs", "1", "--lr", "1e-3", "--gnn", "gat", "--lora",
                                 "--max-txt-len", "32", "--grad-accum", "2"])
    assert result.exit_code == 0, result.output
    assert "trained 1 epochs" in result.output
    config = json.loads((out / "checkpoint.json").read_text())
    assert config["model"]["llm"] == str(llm_dir) and config["model"]["gnn"] == "gat" and config["model"]["lora"]
    assert config["train"]["grad_accum"] == 2 and config["model"]["max_txt_len"] == 32

    result = runner.invoke(app, ["eval", "--checkpoint", str(out), "--split", "test"])
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics-test.json").read_text())
    assert metrics["total"] == 2 and metrics["metric"] == "accuracy"
    assert len((out / "predictions-test.jsonl").read_text().splitlines()) == 2
    result = runner.invoke(app, ["eval", "--checkpoint", str(out), "--split", "test", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads((out / "metrics-test.json").read_text())  # nothing else on stdout


def test_cli_errors_are_one_line(tmp_path):
    result = CliRunner().invoke(app, ["eval", "--checkpoint", str(tmp_path)])
    assert result.exit_code == 1 and "not a checkpoint directory" in result.output
    result = CliRunner().invoke(app, ["train", "--dataset", "metaqa", "--out", str(tmp_path / "x"), "--gnn", "sage"])
    assert result.exit_code == 2 and "sage" in result.output
