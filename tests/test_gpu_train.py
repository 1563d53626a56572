"""scripts/gpu_train.py on the CPU: the bundle (GGUF parts, carry groups), then training and
evaluation from the bundle alone (no Neo4j, no settings home, no network)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys

import pytest
from conftest import REPO
from test_model_support import tiny_llm, tiny_samples

from gr_neo4j.samples import save_samples

SCRIPT = REPO / "scripts" / "gpu_train.py"


def script_module():
    spec = importlib.util.spec_from_file_location("gpu_train", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpu_train(tmp_path, *args: str, timeout: int = 600) -> dict:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_a_file_cut_into_parts_joins_back_and_groups_stay_under_the_limit(tmp_path):
    gt = script_module()
    data = bytes(range(256)) * 1000  # 256,000 bytes
    (tmp_path / "model.gguf").write_bytes(data)
    bundle = tmp_path / "bundle"
    parts = gt.split_file(tmp_path / "model.gguf", bundle / "gguf", 100_000)
    assert [p.name for p in parts] == ["model.gguf.part00", "model.gguf.part01", "model.gguf.part02"]
    (bundle / "samples.pt").write_bytes(b"x" * 50_000)
    groups = gt.carry_groups(bundle, 160_000)
    sizes = [sum((bundle / f).stat().st_size for f in g) for g in groups]
    assert sorted(f for g in groups for f in g) == ["gguf/model.gguf.part00", "gguf/model.gguf.part01",
                                                    "gguf/model.gguf.part02", "samples.pt"]
    assert max(sizes) <= 160_000 and len(groups) == 2
    (tmp_path / "joined").mkdir()
    assert gt.join_parts(bundle / "gguf", tmp_path / "joined").read_bytes() == data


def test_bundle_then_train_and_evaluate_from_it(tmp_path):
    samples, llm_dir = tmp_path / "samples.pt", tmp_path / "tiny-llm"
    save_samples(samples, tiny_samples(20, dataset="metaqa"))
    model, tokenizer = tiny_llm()
    model.save_pretrained(llm_dir)
    tokenizer.save_pretrained(llm_dir)
    bundle = tmp_path / "bundle"
    made = gpu_train(tmp_path, "prepare", "--out", str(bundle), "--samples", str(samples), "--llm", str(llm_dir), "--no-wheels")
    assert made["samples"] == 20 and (bundle / "llm" / "config.json").is_file() and not made["default_llm"]
    report = gpu_train(tmp_path, "run", "--bundle", str(bundle), "--out", str(tmp_path / "ckpt"), "--epochs", "1")
    assert report["dataset"] == "metaqa" and report["device"] == "cpu" and report["epochs_run"] == 1
    assert report["answered"] == 4 and 0 <= report["hit@1"] <= 1 and report["train_samples_per_s"] > 0
    assert (tmp_path / "ckpt" / "weights.safetensors").is_file()


def test_options_left_out_take_the_library_defaults_and_a_bad_gnn_exits_2(tmp_path):
    from gr_neo4j.model import TrainConfig

    gt = script_module()
    parser = argparse.ArgumentParser()
    args = gt.with_defaults(argparse.Namespace(epochs=None, batch_size=2, lr=None, gnn="gat"), parser)
    assert (args.epochs, args.batch_size, args.lr, args.gnn) == (TrainConfig.epochs, 2, TrainConfig.lr, "gat")
    done = subprocess.run([sys.executable, str(SCRIPT), "run", "--bundle", str(tmp_path), "--gnn", "sage"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2 and "sage" in done.stderr


@pytest.mark.integration
def test_default_llm_travels_as_gguf_parts_and_is_converted_there(tmp_path):
    samples = tmp_path / "samples.pt"
    save_samples(samples, tiny_samples(20))
    bundle = tmp_path / "bundle"
    made = gpu_train(tmp_path, "prepare", "--out", str(bundle), "--samples", str(samples), "--no-wheels")
    assert made["default_llm"] and not (bundle / "llm").exists()
    assert len(list((bundle / "gguf").glob("*.part*"))) >= 2  # the 98 MB GGUF in 48 MiB parts
    report = gpu_train(tmp_path, "run", "--bundle", str(bundle), "--epochs", "1", "--limit", "4", "--eval-limit", "2")
    assert report["llm"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and report["epochs_run"] == 1
    assert report["answered"] == 2 and report["llm_convert_s"] > 0


def test_the_model_code_imports_without_what_the_gpu_machine_lacks():
    # that machine has torch, PyG, transformers, peft (and the packages the bundle ships) but not the
    # Neo4j driver, tenacity, pcst_fast or rich (progress is a protocol): training and evaluation must not need them
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in {'neo4j', 'tenacity', 'pcst_fast', 'rich'}:\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import gr_neo4j.model, gr_neo4j.model.training, gr_neo4j.model.evaluation, gr_neo4j.model.checkpoint\n"
        "import gr_neo4j.llm, gr_neo4j.samples\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
