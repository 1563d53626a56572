"""scripts/gpu_train.py end to end on the CPU with a tiny random LLM: bundle, then train and
evaluate from the bundle alone (no Neo4j, no settings home, no network)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO
from gr_neo4j.samples import save_samples
from test_model_support import tiny_llm, tiny_samples


def test_bundle_then_train_and_evaluate_from_it(tmp_path):
    samples, llm_dir = tmp_path / "samples.pt", tmp_path / "tiny-llm"
    save_samples(samples, tiny_samples(20, dataset="metaqa"))
    model, tokenizer = tiny_llm()
    model.save_pretrained(llm_dir)
    tokenizer.save_pretrained(llm_dir)
    script, bundle = str(REPO / "scripts" / "gpu_train.py"), tmp_path / "bundle"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, script, "prepare", "--out", str(bundle), "--samples", str(samples),
                           "--llm", str(llm_dir), "--no-wheels"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["samples"] == 20 and (bundle / "llm" / "config.json").is_file()
    done = subprocess.run([sys.executable, script, "run", "--bundle", str(bundle), "--out", str(tmp_path / "ckpt"),
                           "--epochs", "1", "--minutes", "1"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["dataset"] == "metaqa" and report["device"] == "cpu" and report["epochs_run"] == 1
    assert report["answered"] == 4 and 0 <= report["hit@1"] <= 1 and report["train_samples_per_s"] > 0
    assert (tmp_path / "ckpt" / "weights.safetensors").is_file()
