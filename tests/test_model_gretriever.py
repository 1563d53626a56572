"""The GNN + LLM model on a tiny random Llama: graph token, prompt layout, trainable parameters,
learning, generation."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from test_model_support import EMBED_DIM, tiny_llm, tiny_samples

from gr_neo4j.model.checkpoint import answer
from gr_neo4j.model.gretriever import IGNORE_INDEX, GRetrieverModel, ModelConfig


def make_model(**overrides) -> GRetrieverModel:
    llm, tok = tiny_llm(chat=overrides.pop("chat", True))
    torch.manual_seed(0)
    cfg = dict(llm="tiny", embed_dim=EMBED_DIM, gnn_hidden=32, gnn_layers=2, gnn_heads=4, max_new_tokens=4)
    return GRetrieverModel(llm, tok, ModelConfig(**(cfg | overrides)))


def count(params) -> int:
    return sum(p.numel() for p in params)


def test_graph_tokens_are_placed_after_the_chat_prefix_and_before_the_graph_text():
    model = make_model(graph_tokens=2)
    samples = tiny_samples(3)
    graph = model.graph_tokens(samples)
    assert graph.shape == (3, 2, 64)
    embeds, mask, labels = model.embed(samples, with_labels=True)
    encoded = model.encode_prompts(samples, with_labels=True)
    lengths = [len(e.before) + 2 + len(e.after) + len(e.label) for e in encoded]
    assert embeds.shape == (3, max(lengths), 64) and mask.shape == labels.shape == (3, max(lengths))
    words = model.llm.get_input_embeddings()
    tok = model.tokenizer
    for i, (enc, n) in enumerate(zip(encoded, lengths)):
        pad = max(lengths) - n
        assert mask[i].tolist() == [0] * pad + [1] * n
        row = embeds[i, pad:]
        b = len(enc.before)
        assert tok.decode(enc.before).endswith("<|im_start|>user\n")  # the user turn opens with the graph token
        torch.testing.assert_close(row[:b], words(torch.tensor(enc.before)))
        torch.testing.assert_close(row[b:b + 2], graph[i])
        torch.testing.assert_close(row[b + 2:], words(torch.tensor(enc.after + enc.label)))
        assert tok.decode(enc.after).startswith(samples[i].desc[:20])
        assert tok.decode(enc.after).endswith("<|im_start|>assistant\n")
        # only the answer tokens (+ EOS) are learnt
        learnt = labels[i][labels[i] != IGNORE_INDEX].tolist()
        assert learnt == enc.label and tok.decode(learnt) == samples[i].label + "<|im_end|>"
        assert (labels[i, : pad + n - len(enc.label)] == IGNORE_INDEX).all()


def test_answer_loss_equals_the_llms_own_loss_over_the_whole_sequence():
    model = make_model().eval()
    samples = tiny_samples(3)
    with torch.no_grad():
        embeds, mask, labels = model.embed(samples, with_labels=True)
        position_ids = (mask.cumsum(-1) - 1).clamp(min=0)
        full = model.llm(inputs_embeds=embeds, attention_mask=mask, position_ids=position_ids, labels=labels).loss
        torch.testing.assert_close(model(samples), full)


def test_graph_text_is_truncated_to_max_txt_len_tokens():
    sample = tiny_samples(1)[0]
    short, full = make_model(max_txt_len=5), make_model()
    desc_tokens = len(full.tokenizer(sample.desc, add_special_tokens=False)["input_ids"])
    assert desc_tokens > 5
    cut = short.encode_prompts([sample], with_labels=False)[0].after
    whole = full.encode_prompts([sample], with_labels=False)[0].after
    assert len(whole) - len(cut) == desc_tokens - 5 and cut[5:] == whole[desc_tokens:]


def test_without_a_chat_template_the_graph_token_follows_bos():
    model = make_model(chat=False)
    enc = model.encode_prompts(tiny_samples(1), with_labels=False)[0]
    assert enc.before == [model.tokenizer.bos_token_id]


@pytest.mark.parametrize("gnn", ["gt", "gat", "gcn"])
def test_every_gnn_type_gets_gradients_from_the_answer_loss(gnn):
    model = make_model(gnn=gnn)
    loss = model(tiny_samples(4))
    assert loss.ndim == 0 and torch.isfinite(loss)
    loss.backward()
    weights = {n: p for n, p in model.encoder.named_parameters() if p.dim() > 1}
    assert weights and all(p.grad is not None and p.grad.abs().sum() > 0 for p in weights.values()), [
        n for n, p in weights.items() if p.grad is None or not p.grad.abs().sum()]


def test_frozen_mode_trains_only_encoder_and_projector():
    model = make_model()
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert count(trainable) == count(model.encoder.parameters()) + count(model.projector.parameters())
    assert not any(p.requires_grad for p in model.llm.parameters())
    assert set(model.trainable_state_dict()) >= {n for n, p in model.named_parameters() if p.requires_grad}


def test_lora_mode_trains_encoder_projector_and_the_adapters_only():
    model = make_model(lora=True)
    lora = [(n, p) for n, p in model.llm.named_parameters() if p.requires_grad]
    assert lora and all("lora_" in n for n, _ in lora)
    # r * (in + out) per adapted projection: q_proj 64->64, v_proj 64->32 (2 KV heads of 16), 2 layers
    assert count(p for _, p in lora) == 2 * (8 * (64 + 64) + 8 * (64 + 32))
    trainable = count(p for p in model.parameters() if p.requires_grad)
    assert trainable == count(model.encoder.parameters()) + count(model.projector.parameters()) + 3584


def overfit(model, samples, steps: int) -> list[float]:
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    model.train()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = model(samples)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_loss_falls_when_overfitting_one_batch_with_a_frozen_llm():
    losses = overfit(make_model(), tiny_samples(4), steps=25)
    assert losses[-1] < 0.75 * losses[0]


def test_lora_overfits_one_batch_and_generation_then_gives_the_labels():
    model, samples = make_model(lora=True), tiny_samples(4)
    losses = overfit(model, samples, steps=30)
    assert losses[-1] < 0.1 * losses[0]
    assert model.eval().generate(samples) == [s.label for s in samples]


def test_generation_from_inputs_embeds_does_not_depend_on_batch_padding():
    model = make_model().eval()
    samples = tiny_samples(5)  # graphs and prompts of different lengths -> left padding
    together = model.generate(samples, max_new_tokens=6)
    alone = [model.generate([s], max_new_tokens=6)[0] for s in samples]
    assert len(together) == 5 and all(isinstance(t, str) for t in together)
    assert together == alone


def test_llm_only_mode_has_no_graph_token_and_nothing_to_train():
    model = make_model(gnn="none")
    assert model.graph_tokens(tiny_samples(2)) is None
    assert not any(p.requires_grad for p in model.parameters())
    assert len(model.generate(tiny_samples(2), max_new_tokens=3)) == 2


def test_zero_shot_ask_uses_the_models_prompt_and_cuts_long_graph_text():
    model = GRetrieverModel.llm_only(*tiny_llm(), "tiny", max_new_tokens=3)
    assert model.encoder is None and model.prompts.max_txt_len == 512
    sample = tiny_samples(1)[0]
    long = replace(sample, desc=sample.desc * 400)
    enc = model.prompts.encode(long.dataset, long.question, long.desc)
    assert len(enc.after) <= 512 + len(model.prompts.encode(long.dataset, long.question, "").after)
    assert isinstance(answer(model, [long])[0], str)


def test_the_chat_prefix_drops_a_default_system_prompt():
    from test_model_support import tiny_tokenizer

    from gr_neo4j.llm import SMOLLM2_CHAT_TEMPLATE
    from gr_neo4j.model.prompts import PromptBuilder

    tok = tiny_tokenizer()
    tok.chat_template = SMOLLM2_CHAT_TEMPLATE
    prefix = tok.decode(PromptBuilder(tok).prefix)
    assert "SmolLM" not in prefix and prefix.endswith("<|im_start|>user\n")


def test_a_template_without_a_system_role_renders_the_user_turn_alone():
    from test_model_support import tiny_tokenizer

    from gr_neo4j.model.prompts import PromptBuilder

    tok = tiny_tokenizer()
    tok.chat_template = ("{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('no system role') }}{% endif %}"
                         "{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}"
                         "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
    builder = PromptBuilder(tok)
    assert tok.decode(builder.prefix) == "<|im_start|>user\n"
    assert tok.decode(builder.suffix) == "<|im_end|>\n<|im_start|>assistant\n"
