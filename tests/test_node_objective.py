"""`train --objective node|joint`: the question-conditioned node head trained alone (no LLM) or
beside the GNN + LLM, kept in checkpoints, scored by `eval`, and ranking the prompt's candidates."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from test_answer_head import graphs
from test_model_support import EMBED_DIM, tiny_llm, tiny_samples
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.metrics import NOT_IN_GRAPH
from gr_neo4j.model import TrainConfig, evaluate, load_checkpoint, train
from gr_neo4j.model.answer_head import NodeModel, fill_question_vectors
from gr_neo4j.model.checkpoint import CONFIG, WEIGHTS, load_node_model
from gr_neo4j.model.evaluation import head_answers, head_figures
from gr_neo4j.samples import save_samples

NODE = dict(dataset="metaqa", objective="node", batch_size=16, eval_batch_size=32, head_hidden=32, head_layers=2,
            gnn_heads=4, head_lr=3e-3, patience=100)


def star_samples(n: int, seed: int):
    """graphs() of test_answer_head with their question vectors and MetaQA-like ids of two hop counts."""
    samples, q = graphs(n, seed)
    return [replace(s, id=f"metaqa|{1 + i % 2}-hop/dev/{s.id}", q=v) for i, (s, v) in enumerate(zip(samples, q))]


def no_llm(*args, **kwargs):
    raise AssertionError("objective node must not load an LLM")


def test_node_objective_trains_the_head_alone_and_eval_scores_it_per_hop(tmp_path, monkeypatch):
    monkeypatch.setattr("gr_neo4j.model.objectives.load_llm_named", no_llm)
    monkeypatch.setattr("gr_neo4j.model.checkpoint.load_llm_named", no_llm)
    splits = {"train": star_samples(120, 0), "val": star_samples(20, 2), "test": star_samples(20, 3)}
    config = TrainConfig(out=tmp_path / "ckpt", epochs=12, **NODE)
    result = train(config, splits=splits)
    assert result.epochs_run == 12 and result.history[-1]["train_loss"] < result.history[0]["train_loss"]
    saved = json.loads((config.out / CONFIG).read_text())
    assert saved["model"]["objective"] == "node" and saved["train"]["objective"] == "node"
    weights = load_file(str(config.out / WEIGHTS))
    assert weights and all(k.startswith("head.") for k in weights)

    test = star_samples(60, 1)
    untrained = head_figures(*head_answers(NodeModel(load_node_model(config.out).config).eval(), test, 32), [s.label for s in test])
    test_file = tmp_path / "test.pt"
    save_samples(test_file, test)
    r = evaluate(config.out, samples=test_file)
    assert r.answered_by == "node head" and r.head["total"] == 60
    assert r.head["hit@1"] >= 0.9 > untrained["hit@1"] and r.head["f1"] >= 0.6
    assert r.value == r.head["hit@1"] and r.outside_rate == 0.0  # the head's answers are node texts
    assert set(r.by_hop) == {"1-hop", "2-hop"} and all(g["head"]["total"] == 30 for g in r.by_hop.values())
    rows = [json.loads(line) for line in r.predictions.read_text().splitlines()]
    assert rows[0]["head_best"] in test[0].node_texts and rows[0]["prediction"] == rows[0]["head_answer"]


def test_a_node_checkpoint_round_trips_the_head(tmp_path):
    splits = {"train": star_samples(16, 0), "val": star_samples(8, 2), "test": star_samples(8, 3)}
    config = TrainConfig(out=tmp_path / "ckpt", epochs=1, **NODE)
    train(config, splits=splits)
    a, b = load_node_model(config.out), load_node_model(config.out)
    fresh = NodeModel(a.config)
    weights = load_file(str(config.out / WEIGHTS))
    assert all(torch.equal(a.state_dict()[k], v) for k, v in weights.items())
    test = star_samples(6, 1)
    assert all(torch.equal(x, y) for x, y in zip(a.score(test), b.score(test)))
    assert not all(torch.allclose(x, y) for x, y in zip(a.score(test), fresh.score(test)))
    with pytest.raises(GrNeo4jError, match="objective node"):
        load_checkpoint(config.out, llm=tiny_llm())


def kg_samples(n: int) -> list:
    """tiny_samples on MetaQA (the answer is node 1) with random question vectors."""
    g = torch.Generator().manual_seed(5)
    return [replace(s, id=f"metaqa|{1 + i % 2}-hop/dev/{i}", q=torch.randn(EMBED_DIM, generator=g))
            for i, s in enumerate(tiny_samples(n, dataset="metaqa"))]


def test_joint_objective_keeps_the_head_beside_the_llm_and_lists_its_candidates(tmp_path):
    samples_file = tmp_path / "kg.pt"
    save_samples(samples_file, kg_samples(20))
    config = TrainConfig(out=tmp_path / "ckpt", retrieved=samples_file, dataset="metaqa", objective="joint", llm="tiny", epochs=1,
                         batch_size=4, eval_batch_size=8, lr=1e-2, gnn_hidden=32, gnn_layers=2, head_hidden=32,
                         max_txt_len=48, max_new_tokens=4, candidates=2)
    train(config, llm=tiny_llm())
    weights = load_file(str(config.out / WEIGHTS))
    assert {k.split(".")[0] for k in weights} == {"encoder", "projector", "head"}
    model = load_checkpoint(config.out, llm=tiny_llm())
    assert model.head is not None and model.config.objective == "joint"
    assert all(torch.equal(model.state_dict()[k], v) for k, v in weights.items() if k.startswith("head."))

    samples = kg_samples(4)
    with torch.no_grad():
        logits, sizes = model.node_logits(samples)
    ranked = model.candidates(samples)
    for s, probs, names in zip(samples, torch.sigmoid(logits).split(sizes), ranked):
        assert names == [s.node_texts[i] for i in probs.argsort(descending=True)[:2].tolist()]
    prompts = model.encode_prompts(samples, with_labels=False, candidates=ranked)
    text = model.tokenizer.decode(prompts[0].after)
    assert f"Likely answers, most likely first: {ranked[0][0]} | {ranked[0][1]}." in text
    assert text.index("Likely answers") < text.index("Question:")
    # embed() lists them by itself: the same inputs as with the candidates given
    assert torch.equal(model.embed(samples, False)[0], model.embed(samples, False, candidates=ranked)[0])
    assert model.embed(samples, False)[1].sum() > model.embed(samples, False, candidates=[[]] * 4)[1].sum()  # the line's tokens

    r = evaluate(config.out, samples=samples_file, llm=tiny_llm(), limit=6)
    assert r.answered_by == "llm" and r.head["total"] == 6 and 0 <= r.head["f1"] <= 1
    assert set(r.by_hop) == {"1-hop", "2-hop"} and all("head" in g for g in r.by_hop.values())


def test_lm_checkpoints_have_no_head_and_no_candidates_line(tmp_path):
    samples_file = tmp_path / "kg.pt"
    save_samples(samples_file, kg_samples(10))
    config = TrainConfig(out=tmp_path / "ckpt", retrieved=samples_file, dataset="metaqa", llm="tiny", epochs=1, batch_size=4,
                         gnn_hidden=32, gnn_layers=2, max_txt_len=48, max_new_tokens=4)
    train(config, llm=tiny_llm())
    model = load_checkpoint(config.out, llm=tiny_llm())
    assert model.head is None and model.candidates(kg_samples(2)) is None
    assert "Likely answers" not in model.tokenizer.decode(model.encode_prompts(kg_samples(2), False)[0].after)
    assert evaluate(config.out, samples=samples_file, llm=tiny_llm(), limit=4).head is None


class FakeEmbedder:
    def __init__(self, dim: int):
        self.dim, self.calls = dim, 0

    def encode(self, texts, batch_size: int = 256):
        self.calls += 1
        return np.stack([np.full(self.dim, len(t), dtype=np.float32) for t in texts])


def test_question_vectors_are_embedded_only_where_missing_and_must_fit_the_nodes():
    samples = kg_samples(3)
    kept = samples[0].q
    samples[1].q = samples[2].q = None
    emb = FakeEmbedder(EMBED_DIM)
    fill_question_vectors(samples, embedder=emb)
    assert emb.calls == 1 and samples[0].q is kept and samples[1].q[0] == len(samples[1].question)
    fill_question_vectors(samples, embedder=emb)
    assert emb.calls == 1
    other = kg_samples(1)
    other[0].q = None
    with pytest.raises(GrNeo4jError, match="another model"):
        fill_question_vectors(other, embedder=FakeEmbedder(EMBED_DIM + 1))


def test_node_objective_is_only_for_answers_that_are_nodes(tmp_path):
    splits = {"train": star_samples(6, 0), "val": star_samples(2, 2), "test": []}
    with pytest.raises(GrNeo4jError, match="knowledge-graph QA"):
        train(TrainConfig(out=tmp_path / "x", epochs=1, **(NODE | {"dataset": "explagraphs"})), splits=splits)


def test_train_help_lists_the_objectives_and_a_node_run_needs_no_llm(tmp_path, monkeypatch):
    monkeypatch.setenv("GR_NEO4J_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    help_text = runner.invoke(app, ["train", "--help"], env={"COLUMNS": "200"}).output
    assert "--objective" in help_text and "lm|node|joint" in help_text.replace(" ", "")
    samples = tmp_path / "s.pt"
    save_samples(samples, star_samples(20, 0))
    out = tmp_path / "ckpt"
    monkeypatch.setattr("gr_neo4j.model.objectives.load_llm_named", no_llm)
    result = runner.invoke(app, ["train", "--dataset", "metaqa", "--retrieved", str(samples), "--out", str(out),
                                 "--objective", "node", "--epochs", "1"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["eval", "--checkpoint", str(out), "--split", "test"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Node head" in result.output and "hallucination" not in result.output
    result = runner.invoke(app, ["train", "--dataset", "metaqa", "--out", str(out), "--objective", "nodes"])
    assert result.exit_code == 2 and "nodes" in result.output


def retrieved(sample):
    """What `ask` retrieves, as far as answering reads it (no Neo4j)."""
    nodes = [SimpleNamespace(text=t, topic=f) for t, f in zip(sample.node_texts, sample.topic or [False] * len(sample.node_texts))]
    return SimpleNamespace(question=sample.question, desc=sample.desc, data=sample.data, dataset=sample.dataset, nodes=nodes)


def test_ask_answers_with_the_head_of_a_node_checkpoint_and_lists_candidates_with_a_joint_one(tmp_path, monkeypatch):
    from gr_neo4j.answer import load_answerer
    from gr_neo4j.settings import load_settings

    splits = {"train": star_samples(120, 0), "val": star_samples(20, 2), "test": star_samples(20, 3)}
    node = TrainConfig(out=tmp_path / "node", epochs=12, **NODE)
    train(node, splits=splits)
    test = star_samples(20, 1)
    vectors = {s.question: s.q.numpy() for s in test}

    class ByQuestion:  # the embedder `ask` would use: the question's vector
        def encode(self, texts, batch_size: int = 256):
            return np.stack([vectors[t] for t in texts])

    monkeypatch.setenv("GR_NEO4J_HOME", str(tmp_path / "home"))
    settings = load_settings()
    answerer = load_answerer(settings, node.out, embedder=ByQuestion())
    assert "node head" in answerer.by
    answers = [answerer.answer(retrieved(s)) for s in test]
    assert sum(a.split("|")[0] == s.label for a, s in zip(answers, test)) >= 18

    samples_file = tmp_path / "kg.pt"
    save_samples(samples_file, kg_samples(10))
    joint = TrainConfig(out=tmp_path / "joint", retrieved=samples_file, dataset="metaqa", objective="joint", llm="tiny",
                        epochs=1, batch_size=4, gnn_hidden=32, gnn_layers=2, head_hidden=32, max_txt_len=48, max_new_tokens=4)
    train(joint, llm=tiny_llm())
    sample = kg_samples(1)[0]
    vectors[sample.question] = sample.q.numpy()
    answerer = load_answerer(settings, joint.out, llm=tiny_llm(), embedder=ByQuestion())
    assert "candidates" in answerer.by and all(i in [*sample.node_texts, NOT_IN_GRAPH] for i in answerer.answer(retrieved(sample)).split("|") if i)
