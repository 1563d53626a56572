"""Training, checkpoints, resuming and evaluation of the GNN + LLM model on a tiny random Llama."""

from __future__ import annotations

import itertools
import json
import math
import shutil
from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file, save_file
from test_model_support import tiny_llm, tiny_samples

from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.model import PROMPT_VERSION, TrainConfig, evaluate, load_checkpoint, train
from gr_neo4j.model.checkpoint import ADAPTER, CONFIG, LEGACY_CONFIG, WEIGHTS
from gr_neo4j.model.datasets import split_indices, split_samples
from gr_neo4j.model.training import lr_schedule
from gr_neo4j.samples import load_samples, save_samples

SMALL = dict(dataset="explagraphs", llm="tiny", batch_size=4, eval_batch_size=8, lr=1e-2, gnn_hidden=32, gnn_layers=2,
             max_txt_len=48, max_new_tokens=4)


@pytest.fixture(scope="module")
def samples_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("samples") / "tiny.pt"
    save_samples(path, tiny_samples(20))
    return path


def test_samples_file_round_trips(samples_file):
    original, loaded = tiny_samples(20), load_samples(samples_file)
    assert [(s.id, s.question, s.label, s.desc, s.dataset, s.node_texts) for s in loaded] == \
        [(s.id, s.question, s.label, s.desc, s.dataset, s.node_texts) for s in original]
    for a, b in zip(original, loaded):
        assert torch.equal(a.data.x, b.data.x) and torch.equal(a.data.edge_index, b.data.edge_index)
        assert torch.equal(a.data.edge_attr, b.data.edge_attr)


def schedule(epochs=5, steps_per_epoch=10, **overrides) -> list[float]:
    """The learning rate before each optimiser step, and after the last one."""
    config = TrainConfig(dataset="x", out=".", epochs=epochs, **overrides)
    opt = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=config.lr)
    sched = lr_schedule(opt, steps_per_epoch, config)
    rates = []
    for _ in range(epochs * steps_per_epoch + 1):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return rates


def test_schedule_warms_up_for_one_epoch_then_follows_a_half_cosine_to_g_retrievers_floor():
    f = schedule()  # lr 1e-5, min_lr 5e-6: G-Retriever's lr_schedule
    assert f[0] == 0 and f[5] == pytest.approx(0.5e-5) and f[10] == pytest.approx(1e-5)
    assert f[30] == pytest.approx((1e-5 + 5e-6) / 2)  # halfway through the 4 cosine epochs
    assert f[50] == pytest.approx(5e-6)  # the floor, not 0
    assert all(a >= b for a, b in itertools.pairwise(f[10:]))
    # G-Retriever's adjust_learning_rate at an epoch fraction e past the warm-up
    e = 2.5
    assert f[25] == pytest.approx(5e-6 + (1e-5 - 5e-6) * 0.5 * (1 + math.cos(math.pi * (e - 1) / 4)))


def test_schedule_floor_never_exceeds_the_peak():
    f = schedule(lr=1e-6)  # below the paper's floor: constant after the warm-up, never rising
    assert f[10] == pytest.approx(1e-6) and f[50] == pytest.approx(1e-6)


def test_split_is_g_retrievers_60_20_20_with_seed_42():
    idx = split_indices(2368)
    assert [len(idx[k]) for k in ("train", "val", "test")] == [1420, 474, 474]
    assert sorted(set().union(*map(set, idx.values()))) == list(range(2368))
    assert all((split_indices(2368)[k] == idx[k]).all() for k in idx)


def trained(tmp_path, samples_file, **overrides):
    config = TrainConfig(out=tmp_path / "ckpt", retrieved=samples_file, **(SMALL | overrides))
    return config, train(config, llm=tiny_llm())


def test_training_writes_a_checkpoint_with_only_the_trainable_weights(tmp_path, samples_file):
    config, result = trained(tmp_path, samples_file, epochs=2, lora=True)
    assert result.epochs_run == 2 and result.stopped == "epochs" and len(result.history) == 2
    assert all(math.isfinite(h["train_loss"]) and math.isfinite(h["val_loss"]) for h in result.history)
    assert result.history[1]["train_loss"] < result.history[0]["train_loss"]
    saved = json.loads((config.out / CONFIG).read_text())
    assert saved["model"]["gnn"] == "gt" and saved["model"]["lora"] and saved["model"]["prompt_version"] == PROMPT_VERSION
    assert saved["sizes"] == {"train": 12, "val": 4, "test": 4}
    weights = load_file(str(config.out / WEIGHTS))
    assert weights and all(k.startswith(("encoder.", "projector.")) for k in weights)  # LoRA: in adapter/
    assert not (config.out / LEGACY_CONFIG).exists()  # Hugging Face tools would read that name
    assert {"adapter_config.json", "adapter_model.safetensors"} <= {p.name for p in (config.out / ADAPTER).iterdir()}
    assert (config.out / "curves.png").stat().st_size > 1000


def test_lora_adapters_load_with_peft(tmp_path, samples_file):
    from peft import PeftModel

    config, _ = trained(tmp_path, samples_file, epochs=1, lora=True)
    ours = load_checkpoint(config.out, llm=tiny_llm())
    theirs = PeftModel.from_pretrained(tiny_llm()[0], str(config.out / ADAPTER))
    lora = {n: p for n, p in ours.llm.named_parameters() if "lora_" in n}
    loaded = dict(theirs.named_parameters())
    assert lora and all(torch.equal(p, loaded[n]) for n, p in lora.items())
    assert any(p.abs().sum() > 0 for n, p in lora.items() if "lora_B" in n)  # trained, not the zero init


def test_a_checkpoint_of_the_old_layout_still_loads(tmp_path, samples_file):
    # before: config.json, and the LoRA weights inside weights.safetensors
    config, _ = trained(tmp_path, samples_file, epochs=1, lora=True)
    model = load_checkpoint(config.out, llm=tiny_llm())
    (config.out / CONFIG).rename(config.out / LEGACY_CONFIG)
    shutil.rmtree(config.out / ADAPTER)
    save_file(model.trainable_state_dict(), str(config.out / WEIGHTS))
    old = load_checkpoint(config.out, llm=tiny_llm())
    samples = tiny_samples(20)[:4]
    assert old.generate(samples) == model.generate(samples)
    assert all(torch.equal(a, b) for a, b in zip(old.trainable_state_dict().values(), model.trainable_state_dict().values()))


def test_saved_and_loaded_checkpoint_gives_the_same_predictions(tmp_path, samples_file):
    config, _ = trained(tmp_path, samples_file, epochs=1, lora=True)
    first = load_checkpoint(config.out, llm=tiny_llm())
    second = load_checkpoint(config.out, llm=tiny_llm())
    fresh = load_checkpoint(config.out, llm=tiny_llm())
    for name, p in fresh.named_parameters():  # a model that did not load the weights differs
        if "lora_B" in name:
            p.data.zero_()
    samples = tiny_samples(20)[:6]
    emb_a, _, _ = first.embed(samples, with_labels=False)
    emb_b, _, _ = second.embed(samples, with_labels=False)
    assert torch.equal(emb_a, emb_b)
    assert first.generate(samples) == second.generate(samples)
    with torch.no_grad():
        assert not torch.allclose(first(samples), fresh(samples))


def test_resumed_training_equals_uninterrupted_training(tmp_path, samples_file):
    whole, _ = trained(tmp_path / "a", samples_file, epochs=2, patience=5)
    part, _ = trained(tmp_path / "b", samples_file, epochs=1, patience=5)
    part.epochs = 2
    resumed = train(part, llm=tiny_llm())
    assert resumed.epochs_run == 2
    a = json.loads((whole.out / "history.json").read_text())
    b = json.loads((part.out / "history.json").read_text())
    assert [x for h in a for x in h["step_losses"]] == pytest.approx([x for h in b for x in h["step_losses"]])
    wa, wb = load_file(str(whole.out / WEIGHTS)), load_file(str(part.out / WEIGHTS))
    assert all(torch.allclose(wa[k], wb[k]) for k in wa)


def test_two_accumulated_half_batches_step_like_one_whole_batch(tmp_path, samples_file):
    # one GNN layer: no batch norm, whose statistics would differ between half and whole batches
    one = dict(epochs=1, gnn_layers=1)
    whole, _ = trained(tmp_path / "whole", samples_file, batch_size=4, **one)
    halves, _ = trained(tmp_path / "halves", samples_file, batch_size=2, grad_accum=2, **one)
    state = torch.load(halves.out / "last.pt", weights_only=True)
    assert state["scheduler"]["last_epoch"] == 3  # 12 training samples: 6 half batches, 3 optimiser steps
    assert all(s["step"] == 3 for s in state["optimizer"]["state"].values())
    wa, wb = load_file(str(whole.out / WEIGHTS)), load_file(str(halves.out / WEIGHTS))
    assert all(torch.allclose(wa[k], wb[k], atol=1e-5) for k in wa)
    plain, _ = trained(tmp_path / "plain", samples_file, batch_size=2, **one)
    wc = load_file(str(plain.out / WEIGHTS))
    assert not all(torch.allclose(wa[k], wc[k], atol=1e-5) for k in wa)  # without accumulation: 6 steps, other weights


def test_graph_lr_gives_the_gnn_and_projector_their_own_peak_rate(tmp_path, samples_file):
    config, _ = trained(tmp_path, samples_file, epochs=1, lora=True, lr=1e-3, graph_lr=2e-2, warmup_epochs=0.0)
    groups = torch.load(config.out / "last.pt", weights_only=True)["scheduler"]["base_lrs"]
    assert groups == [1e-3, 2e-2]  # LoRA adapters at --lr, GNN + projector at --graph-lr
    same, _ = trained(tmp_path / "same", samples_file, epochs=1, lora=True, lr=1e-3, warmup_epochs=0.0)
    assert torch.load(same.out / "last.pt", weights_only=True)["scheduler"]["base_lrs"] == [1e-3, 1e-3]
    with pytest.raises(GrNeo4jError, match="--graph-lr must be positive"):
        trained(tmp_path / "bad", samples_file, epochs=1, graph_lr=-1.0)


def test_resume_refuses_another_configuration(tmp_path, samples_file):
    config, _ = trained(tmp_path, samples_file, epochs=1)
    config.gnn = "gat"
    with pytest.raises(GrNeo4jError, match="another model configuration"):
        train(config, llm=tiny_llm())


def test_time_budget_stops_training_after_one_step(tmp_path, samples_file):
    _, result = trained(tmp_path, samples_file, epochs=3, max_minutes=0.0)
    assert result.stopped == "time budget" and result.epochs_run == 1
    assert result.history[0]["samples"] == 4


def test_evaluate_writes_predictions_and_metrics(tmp_path, samples_file):
    config, _ = trained(tmp_path, samples_file, epochs=1, lora=True)
    result = evaluate(config.out, "test", llm=tiny_llm())
    test_ids = [s.id for s in split_samples(tiny_samples(20))["test"]]
    rows = [json.loads(line) for line in result.predictions.read_text().splitlines()]
    assert [r["id"] for r in rows] == test_ids and result.total == 4
    assert result.metric == "accuracy" and result.hallucination_rate is None
    assert result.correct == sum(r["correct"] for r in rows) and result.value == result.correct / 4
    assert json.loads(result.metrics.read_text())["total"] == 4


def test_evaluate_any_samples_file_with_answer_sets_per_hop(tmp_path, samples_file):
    config, _ = trained(tmp_path, samples_file, epochs=1)
    result = evaluate(config.out, samples=samples_file, llm=tiny_llm(), limit=6)
    assert result.split == "tiny" and result.total == 6 and result.predictions.name == "predictions-tiny.jsonl"
    assert result.f1 is None and result.by_hop is None  # stances: no answer sets
    # Knowledge-graph samples of two hop counts: answer sets and the exact outside share, per hop.
    kg = [replace(s, id=f"metaqa|{1 + i % 2}-hop/dev/{i}", dataset="explagraphs") for i, s in enumerate(tiny_samples(6, dataset="metaqa"))]
    kg_file = tmp_path / "kg.pt"
    save_samples(kg_file, kg)
    cfg = json.loads((config.out / "checkpoint.json").read_text())
    cfg["train"]["dataset"] = "metaqa"
    (config.out / "checkpoint.json").write_text(json.dumps(cfg))
    with pytest.raises(GrNeo4jError, match="trained on metaqa"):
        evaluate(config.out, samples=kg_file, llm=tiny_llm())
    save_samples(kg_file, [replace(s, dataset="metaqa") for s in kg])
    result = evaluate(config.out, samples=kg_file, llm=tiny_llm())
    rows = [json.loads(line) for line in result.predictions.read_text().splitlines()]
    assert set(result.by_hop) == {"1-hop", "2-hop"} and sum(g["total"] for g in result.by_hop.values()) == 6
    assert result.outside_rate == sum(r["outside"] for r in rows) / 6 and 0 <= result.f1 <= 1
    with pytest.raises(GrNeo4jError, match="no such samples file"):
        evaluate(config.out, samples=tmp_path / "nope.pt", llm=tiny_llm())


def test_missing_training_data_is_a_clear_error(tmp_path):
    with pytest.raises(GrNeo4jError, match="--retrieved"):
        train(TrainConfig(out=tmp_path, **SMALL), llm=tiny_llm())
