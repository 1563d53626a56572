"""A tiny randomly initialised Llama-style LLM + byte-level BPE tokenizer with a chat template, and
small subgraph samples, for the fast CPU tests of the GNN + LLM model (test_model_*.py)."""

from __future__ import annotations

import torch
from gr_neo4j.loaders.explagraphs import question_text as explagraphs_question

from gr_neo4j.model.prompts import instruction
from gr_neo4j.samples import SubgraphSample
from gr_neo4j.textualize import textualize, to_data

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
EMBED_DIM = 16
# Large enough that logits (tied embeddings x RMS-normed states) can express a confident answer; with
# the usual 0.02 a 64-wide random model is stuck near the uniform distribution whatever its input.
INIT_RANGE = 0.2


def tiny_tokenizer(chat: bool = True):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [instruction(d, "what is it? Argument 1: a b. Argument 2: c d.") for d in ("explagraphs", "metaqa", "scene_graphs")]
    corpus += ["node_id,node_attr\n0,cat\n1,dog\n\nsrc,edge_attr,dst\n0,chases,1\n", "support counter yes no"]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus * 5, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", unk_token="<|endoftext|>")
    if chat:
        fast.chat_template = CHAT_TEMPLATE
    return fast


def tiny_llm(seed: int = 0, chat: bool = True):
    """(LlamaForCausalLM with hidden 64 and 2 layers, tokenizer), fp32 on the CPU."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tiny_tokenizer(chat)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True,
                         initializer_range=INIT_RANGE)
    return LlamaForCausalLM(config).eval(), tokenizer


def tiny_samples(n: int = 6, seed: int = 0, dataset: str = "explagraphs") -> list[SubgraphSample]:
    """n small random graphs (3-5 nodes, a chain plus a chord) with alternating labels."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        nodes = [f"node {i} {j}" for j in range(3 + i % 3)]
        edges = [(j, "causes" if j % 2 else "is a", j + 1) for j in range(len(nodes) - 1)]
        edges.append((0, "part of", len(nodes) - 1))  # two in-edges: attention has something to weigh
        x = torch.randn(len(nodes), EMBED_DIM, generator=g)
        edge_index = torch.tensor([[s for s, _, _ in edges], [d for _, _, d in edges]])
        edge_attr = torch.randn(len(edges), EMBED_DIM, generator=g)
        if dataset == "explagraphs":
            question, label = explagraphs_question(f"claim {i}", f"reason {i}"), ("support" if i % 2 else "counter")
        else:
            question, label = f"what does node {i} 0 cause?", nodes[1]
        out.append(SubgraphSample(str(i), question, label, textualize(nodes, edges), to_data(x, edge_index, edge_attr),
                                  dataset, nodes))
    return out


def test_tiny_tokenizer_round_trips_text_and_renders_the_chat_template():
    tok = tiny_tokenizer()
    text = "Question: what is it?\nAnswer: support"
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text
    rendered = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert rendered.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
