"""The label classifier (objective label): a tiny random BERT fine-tuned on graphs whose stance a
single relation decides, saved, reloaded and evaluated without any LLM."""

from __future__ import annotations

import json

import pytest
import torch
from gr_neo4j.loaders.explagraphs import question_text as explagraphs_question
from test_model_support import EMBED_DIM

from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.model import TrainConfig, evaluate, train
from gr_neo4j.model.checkpoint import CONFIG, load_checkpoint, load_label_model
from gr_neo4j.model.label_model import ENCODER, triples_text
from gr_neo4j.samples import SubgraphSample
from gr_neo4j.settings import load_settings
from gr_neo4j.textualize import textualize, to_data


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    """A 2-layer BERT of width 32 with the default embedder's tokenizer, as a local model directory."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from gr_neo4j.embedder import embedder_source

    path = tmp_path_factory.mktemp("encoder")
    tokenizer = AutoTokenizer.from_pretrained(embedder_source(load_settings()).location)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return path


def stance_samples(n: int) -> list[SubgraphSample]:
    """Graphs whose one relation says the stance: ``desires`` supports, ``not desires`` counters."""
    out = []
    for i in range(n):
        support = i % 2 == 0
        nodes, edges = [f"thing {i}", "goal"], [(0, "desires" if support else "not desires", 1)]
        x, edge_attr = torch.randn(2, EMBED_DIM), torch.randn(1, EMBED_DIM)
        out.append(SubgraphSample(str(i), explagraphs_question(f"claim {i}", f"reason {i}"), "support" if support else "counter",
                                  textualize(nodes, edges), to_data(x, torch.tensor([[0], [1]]), edge_attr), "explagraphs", nodes))
    return out


def test_triples_text_writes_the_graph_as_sentences_without_node_numbers():
    desc = textualize(["cannabis", "marijuana, the plant", "legal"], [(0, "synonym of", 1), (1, "not desires", 2)])
    assert triples_text(desc) == "cannabis synonym of marijuana, the plant. marijuana, the plant not desires legal."
    assert triples_text(textualize(["a", "b"], [])) == "a. b"


def test_label_objective_learns_the_stance_and_reloads_without_an_llm(tmp_path, tiny_encoder):
    settings = load_settings(home=tmp_path / "home", embedder=str(tiny_encoder))
    samples = stance_samples(48)
    splits = {"train": samples[:32], "val": samples[32:40], "test": samples[40:]}
    config = TrainConfig(dataset="explagraphs", out=tmp_path / "ckpt", objective="label", epochs=8, batch_size=8,
                         encoder_lr=3e-3, min_lr=0.0, patience=8, max_txt_len=64)
    result = train(config, settings=settings, splits=splits)
    assert result.history[-1]["val_loss"] < result.history[0]["val_loss"]
    accuracies = [h["val_accuracy"] for h in result.history]
    assert result.best_epoch == 1 + accuracies.index(max(accuracies))  # kept by validation accuracy
    saved = json.loads((config.out / CONFIG).read_text())
    assert saved["best"]["val_accuracy"] == max(accuracies)
    assert saved["model"]["objective"] == "label" and saved["model"]["labels"] == ["counter", "support"]
    assert (config.out / ENCODER / "config.json").is_file()

    model = load_label_model(config.out)
    test = splits["test"]
    assert model.predict(test) == [s.label for s in test]  # one relation decides: a tiny BERT learns it
    probabilities = model.probabilities(test)
    assert probabilities.shape == (8, 2) and torch.allclose(probabilities.sum(-1), torch.ones(8))

    r = evaluate(config.out, "test", samples=_saved(tmp_path, test), settings=settings)
    assert r.answered_by == "label classifier" and r.metric == "accuracy" and r.value == 1.0
    rows = [json.loads(line) for line in r.predictions.read_text().splitlines()]
    assert {row["prediction"] for row in rows} <= {"support", "counter"}
    with pytest.raises(GrNeo4jError, match="objective label"):
        load_checkpoint(config.out)


def test_final_fits_train_and_val_together_and_keeps_the_last_epoch(tmp_path, tiny_encoder):
    settings = load_settings(home=tmp_path / "home", embedder=str(tiny_encoder))
    samples = stance_samples(48)
    splits = {"train": samples[:32], "val": samples[32:40], "test": samples[40:]}
    config = TrainConfig(dataset="explagraphs", out=tmp_path / "ckpt", objective="label", epochs=3, batch_size=8,
                         encoder_lr=3e-3, min_lr=0.0, patience=1, max_txt_len=64, final=True)
    result = train(config, settings=settings, splits=splits)
    assert result.epochs_run == 3 and result.best_epoch == 3 and result.best_val_loss is None  # no early stopping
    assert all(h["samples"] == 40 and "val_loss" not in h for h in result.history)  # the val samples were trained on
    saved = json.loads((config.out / CONFIG).read_text())
    assert saved["sizes"] == {"train": 40, "val": 0, "test": 8} and saved["train"]["final"] is True
    assert saved["best"] == {"epoch": 3} and result.curves.is_file()
    r = evaluate(config.out, "test", samples=_saved(tmp_path, splits["test"]), settings=settings)
    assert r.total == 8
    config.final = False  # resuming it as a run with a held-out split would mix the two
    with pytest.raises(GrNeo4jError, match="another model configuration"):
        train(config, settings=settings, splits=splits)


def test_encoder_option_fine_tunes_another_encoder_than_the_embedder(tmp_path, tiny_encoder):
    settings = load_settings(home=tmp_path / "home")  # the embedder stays the default MiniLM
    samples = stance_samples(24)
    splits = {"train": samples[:16], "val": samples[16:]}
    config = TrainConfig(dataset="explagraphs", out=tmp_path / "ckpt", objective="label", epochs=1, batch_size=8,
                         max_txt_len=64, encoder=str(tiny_encoder))
    train(config, settings=settings, splits=splits)
    saved = json.loads((config.out / CONFIG).read_text())
    assert saved["model"]["embedder"] == str(tiny_encoder) and saved["train"]["encoder"] == str(tiny_encoder)
    assert json.loads((config.out / ENCODER / "config.json").read_text())["hidden_size"] == 32
    assert load_label_model(config.out).encoder.config.hidden_size == 32

    missing = TrainConfig(dataset="explagraphs", out=tmp_path / "other", objective="label", encoder=str(tmp_path / "nowhere"))
    with pytest.raises(GrNeo4jError, match="cannot load the encoder for objective label from .*nowhere"):
        train(missing, settings=settings, splits=splits)
    for objective in ("lm", "node"):
        wrong = TrainConfig(dataset="explagraphs", out=tmp_path / "other", objective=objective, encoder=str(tiny_encoder))
        with pytest.raises(GrNeo4jError, match="--encoder names the encoder of --objective label"):
            train(wrong, settings=settings, splits=splits)
    assert not (tmp_path / "other").exists()


def test_label_objective_refuses_datasets_without_fixed_labels(tmp_path, tiny_encoder):
    settings = load_settings(home=tmp_path / "home", embedder=str(tiny_encoder))
    samples = [SubgraphSample(s.id, s.question, "goal", s.desc, s.data, "metaqa", s.node_texts) for s in stance_samples(8)]
    config = TrainConfig(dataset="metaqa", out=tmp_path / "ckpt", objective="label", epochs=1)
    with pytest.raises(GrNeo4jError, match="only for explagraphs, not metaqa"):
        train(config, settings=settings, splits={"train": samples[:6], "val": samples[6:]})
    assert not (tmp_path / "ckpt").exists()
    bad = TrainConfig(dataset="explagraphs", out=tmp_path / "ckpt", objective="label", encoder_lr=-1.0)
    with pytest.raises(GrNeo4jError, match="--encoder-lr must be positive, got -1.0"):
        train(bad, settings=settings, splits={"train": stance_samples(4), "val": stance_samples(2)})
    assert not (tmp_path / "ckpt").exists()


def _saved(tmp_path, samples):
    from gr_neo4j.samples import save_samples

    path = tmp_path / "test-samples.pt"
    save_samples(path, samples)
    return path
