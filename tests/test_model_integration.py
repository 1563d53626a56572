"""The GNN + LLM model with the real default models: SmolLM2-135M-Instruct (gr_neo4j.llm) and the
embedded all-MiniLM-L6-v2, on real ExplaGraphs rows. Slow: marked integration."""

from __future__ import annotations

import pytest
import torch
from conftest import SHARED_DATASETS
from gr_neo4j.loaders.explagraphs import whole_graph_samples as explagraphs_samples

from gr_neo4j.embedder import load_embedder
from gr_neo4j.llm import load_llm
from gr_neo4j.model import GRetrieverModel, ModelConfig
from gr_neo4j.settings import load_settings

TSV = SHARED_DATASETS / "explagraphs" / "train.tsv"
pytestmark = [pytest.mark.integration, pytest.mark.skipif(not TSV.is_file(), reason="shared ExplaGraphs not present")]


@pytest.fixture(scope="module")
def real_samples(tmp_path_factory):
    lines = TSV.read_text(encoding="utf-8").splitlines(keepends=True)[:4]
    path = tmp_path_factory.mktemp("expla") / "four.tsv"
    path.write_text("".join(lines), encoding="utf-8")
    return explagraphs_samples(path, load_embedder(load_settings()))


def test_smollm2_learns_from_the_graph_token_and_answers(real_samples):
    llm, tokenizer = load_llm(load_settings(), device="cpu", dtype=torch.float32)
    torch.manual_seed(0)
    model = GRetrieverModel(llm, tokenizer, ModelConfig(llm="default", embed_dim=384, gnn_hidden=256, gnn_layers=2,
                                                        max_new_tokens=4))
    enc = model.encode_prompts(real_samples[:1], with_labels=True)[0]
    assert tokenizer.decode(enc.before).endswith("<|im_start|>user\n")  # SmolLM2's chat template
    assert tokenizer.decode(enc.after).endswith("<|im_start|>assistant\n")
    assert tokenizer.decode(enc.label) == real_samples[0].label + "<|im_end|>"

    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    model.train()
    losses = []
    for _ in range(6):
        opt.zero_grad()
        loss = model(real_samples)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    answers = model.eval().generate(real_samples)
    assert len(answers) == 4 and all(isinstance(a, str) for a in answers)
