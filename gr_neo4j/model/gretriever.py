"""The G-Retriever model: graph encoder + projector -> graph token(s) -> frozen or LoRA-tuned LLM.

Written here rather than with ``torch_geometric.llm.models.GRetriever`` because that class needs
PyG's ``LLM`` wrapper, which loads models itself by hub id (and asks the hub for their size), cannot
take the locally converted SmolLM2, does not truncate the textualised graph under a chat template,
always routes LoRA through ``prepare_model_for_kbit_training`` (fp32 upcast + gradient
checkpointing) and leaves the LLM trainable in "frozen" mode. The pieces are still PyG's (the
message-passing layers and pooling of :mod:`.encoder`, the projector layout of PyG's GRetriever).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch_geometric.data import Batch

from ..defaults import Decoding, Gnn
from ..errors import UsageError
from ..ingest.facts import Answers
from ..ingest.source import facts_of
from ..samples import SubgraphSample
from .answer_head import build_head, head_logits, node_loss, ranked_texts
from .config import ModelConfig
from .constrained import SEPARATOR, PhraseConstraint
from .encoder import GraphEncoder
from .prompts import EncodedPrompt, PromptBuilder

IGNORE_INDEX = -100


def constraint_for(sample: SubgraphSample, tokenizer, decoding: Decoding) -> PhraseConstraint | None:
    """The decoding constraint of one sample: its node texts (knowledge-graph QA), the two stances
    (ExplaGraphs), or None (free decoding; scene-graph answers are free text)."""
    if decoding == Decoding.FREE:
        return None
    facts = facts_of(sample.dataset)
    if facts.labels:
        return PhraseConstraint(tokenizer, facts.labels, several=False, none_phrase=None)
    if facts.answers == Answers.ENTITIES or (decoding == Decoding.CONSTRAINED and sample.node_texts):
        return PhraseConstraint(tokenizer, sample.node_texts)
    return None


class GRetrieverModel(nn.Module):
    """Graph token(s) from a GNN, prepended to the prompt of a causal LM.

    Args:
        llm: a Hugging Face causal LM (any device/dtype; its parameters get frozen).
        tokenizer: its tokenizer.
        config: a :class:`ModelConfig`.
    """

    def __init__(self, llm: nn.Module, tokenizer, config: ModelConfig):
        super().__init__()
        self.config = config
        self.tokenizer = tokenizer
        for p in llm.parameters():
            p.requires_grad_(False)
        if config.lora:
            from peft import LoraConfig, get_peft_model

            lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                              target_modules=list(config.lora_targets), bias="none", task_type="CAUSAL_LM")
            try:
                llm = get_peft_model(llm, lora)
            except ValueError as exc:  # a module name the LLM does not have: one line, not a traceback
                raise UsageError(f"--lora-targets {','.join(config.lora_targets)}: {exc}") from None
        self.llm = llm
        embedding = llm.get_input_embeddings()
        self.hidden_size = embedding.embedding_dim
        device = embedding.weight.device  # with a device_map, where the sequence enters the LLM
        self.encoder = self.projector = None
        if config.gnn != Gnn.NONE:
            self.encoder = GraphEncoder(config.gnn, config.embed_dim, config.gnn_hidden, config.gnn_layers,
                                        config.gnn_heads, config.gnn_dropout).to(device)
            h, t = config.gnn_hidden, config.graph_tokens
            self.projector = nn.Sequential(
                nn.Linear(h, h), nn.Sigmoid(), nn.Linear(h, self.hidden_size * t), nn.Unflatten(-1, (t, self.hidden_size))
            ).to(device)
        # objective joint: the question-conditioned node head beside the encoder (its input is the
        # question-conditioned node features, so it shares no layer); it ranks the prompt's candidates
        self.head = build_head(config).to(device) if config.has_head else None
        self.pos_weight, self.node_weight = 1.0, 1.0  # of the head's BCE in the loss; set by training
        self.prompts = PromptBuilder(tokenizer, config.max_txt_len, config.max_new_tokens)

    @classmethod
    def llm_only(cls, llm: nn.Module, tokenizer, name: str, max_new_tokens: int = 32) -> GRetrieverModel:
        """The LLM alone behind the same prompt, no graph token: zero-shot answering and the
        benchmarks' baseline see exactly the chat template and ``max_txt_len`` cut of a trained model."""
        return cls(llm, tokenizer, ModelConfig(llm=name, embed_dim=0, gnn=Gnn.NONE, max_new_tokens=max_new_tokens))

    # -- pieces ---------------------------------------------------------------------------------

    @property
    def device(self) -> torch.device:
        return self.llm.get_input_embeddings().weight.device

    @property
    def llm_dtype(self) -> torch.dtype:
        return self.llm.get_input_embeddings().weight.dtype

    def graph_parameters(self) -> list[nn.Parameter]:
        """The trainable parameters of the graph side (GNN and projector), which ``--graph-lr`` sets."""
        return [p for m in (self.encoder, self.projector) if m is not None for p in m.parameters() if p.requires_grad]

    def trainable_state_dict(self) -> dict[str, Tensor]:
        """Only the learnt weights (encoder, projector, LoRA adapters), on the CPU."""
        names = {n for n, p in self.named_parameters() if p.requires_grad}
        buffers = {n for n, _ in self.named_buffers() if n.startswith(("encoder.", "projector.", "head."))}
        return {n: t.detach().cpu().contiguous() for n, t in self.state_dict().items() if n in names | buffers}

    def graph_tokens(self, samples: Sequence[SubgraphSample]) -> Tensor | None:
        """-> [B, graph_tokens, hidden_size] in the LLM's dtype, or None without a GNN."""
        if self.encoder is None:
            return None
        batch = Batch.from_data_list([s.data for s in samples]).to(self.device)
        pooled = self.encoder(batch.x, batch.edge_index, batch.edge_attr, batch.batch, len(samples))
        return self.projector(pooled).to(self.llm_dtype)

    def node_logits(self, samples: Sequence[SubgraphSample]) -> tuple[Tensor, list[int]]:
        """The head's ``[sum n_i]`` node logits and each sample's node count (samples need ``q``)."""
        missing = [s.id for s in samples if s.q is None]
        if missing:
            raise ValueError(f"samples without a question vector (answer_head.fill_question_vectors): {missing[:3]}")
        return head_logits(self.head, samples, self.device)

    def candidates(self, samples: Sequence[SubgraphSample], logits: Tensor | None = None,
                   sizes: Sequence[int] | None = None) -> list[list[str]] | None:
        """Per sample, the node texts the head ranks best (``config.candidates`` of them); None
        without a head. ``logits``/``sizes``: the head's output when already computed."""
        if self.head is None or self.config.candidates <= 0:
            return None
        if logits is None:
            with torch.no_grad():
                logits, sizes = self.node_logits(samples)
        probs = torch.sigmoid(logits.detach().float().cpu()).split(list(sizes))
        return [ranked_texts(p, s.node_texts, self.config.candidates) for p, s in zip(probs, samples)]

    def encode_prompts(self, samples: Sequence[SubgraphSample], with_labels: bool,
                       candidates: Sequence[Sequence[str]] | None = None) -> list[EncodedPrompt]:
        """The prompts; ``candidates`` (per sample, e.g. :meth:`candidates`) are listed in them."""
        return [self.prompts.encode(s.dataset, s.question, s.desc, s.label if with_labels else None,
                                    candidates[i] if candidates else ()) for i, s in enumerate(samples)]

    def embed(self, samples: Sequence[SubgraphSample], with_labels: bool,
              candidates: Sequence[Sequence[str]] | None = None) -> tuple[Tensor, Tensor, Tensor | None]:
        """Input embeddings [B, L, H], attention mask [B, L] and labels [B, L] (-100 except on the
        answer tokens; None without labels). Sequences are left-padded so generation continues them.
        With a head the prompts list its candidates (computed here unless given)."""
        graph = self.graph_tokens(samples)
        words = self.llm.get_input_embeddings()
        if candidates is None:
            candidates = self.candidates(samples)
        rows, label_rows = [], []
        for i, enc in enumerate(self.encode_prompts(samples, with_labels, candidates)):
            tail = enc.after + (enc.label or [])
            ids = torch.tensor(enc.before + tail, dtype=torch.long, device=self.device)
            emb = words(ids)
            parts = [emb[: len(enc.before)]]
            if graph is not None:
                parts.append(graph[i])
            parts.append(emb[len(enc.before):])
            row = torch.cat(parts)
            rows.append(row)
            if with_labels:
                label_rows.append([IGNORE_INDEX] * (row.size(0) - len(enc.label)) + enc.label)
        length = max(r.size(0) for r in rows)
        embeds = torch.zeros(len(rows), length, self.hidden_size, dtype=rows[0].dtype, device=self.device)
        mask = torch.zeros(len(rows), length, dtype=torch.long, device=self.device)
        labels = torch.full((len(rows), length), IGNORE_INDEX, dtype=torch.long, device=self.device) if with_labels else None
        for i, row in enumerate(rows):
            embeds[i, length - row.size(0):] = row
            mask[i, length - row.size(0):] = 1
            if with_labels:
                labels[i, length - row.size(0):] = torch.tensor(label_rows[i], device=self.device)
        return embeds, mask, labels

    # -- training and answering -----------------------------------------------------------------

    def forward(self, samples: Sequence[SubgraphSample]) -> Tensor:
        """Mean cross-entropy of the answer tokens (a scalar); with a head (objective joint) plus
        ``node_weight`` times its binary cross-entropy on the answer nodes, whose ranking of this
        very pass (detached) gives the prompt's candidates.

        Only the last K positions get logits (K = longest answer + 1): the answers end every row
        (left padding), and the vocabulary projection of the whole prompt would cost a fifth of
        the compute of a small LLM and gigabytes of logits for nothing.
        """
        node = None
        candidates = None
        if self.head is not None:
            logits, sizes = self.node_logits(samples)
            node = node_loss(logits, samples, self.pos_weight)
            candidates = self.candidates(samples, logits, sizes)
        embeds, mask, labels = self.embed(samples, with_labels=True, candidates=candidates)
        position_ids = (mask.cumsum(-1) - 1).clamp(min=0)  # left padding must not shift positions
        keep = int((labels != IGNORE_INDEX).sum(-1).max()) + 1
        logits = self.llm(inputs_embeds=embeds, attention_mask=mask, position_ids=position_ids,
                          logits_to_keep=keep).logits
        # logits at position t predict the token at t + 1
        lm = nn.functional.cross_entropy(logits[:, :-1].float().flatten(0, 1), labels[:, -(keep - 1):].flatten(),
                                         ignore_index=IGNORE_INDEX)
        return lm if node is None else lm + self.node_weight * node

    @torch.no_grad()
    def generate(self, samples: Sequence[SubgraphSample], max_new_tokens: int | None = None,
                 decoding: Decoding | str = Decoding.FREE) -> list[str]:
        """Greedy answers, one string per sample; ``decoding`` constrained (or auto, where the
        dataset's answers are node texts or labels) holds them to :mod:`.constrained`'s tries."""
        embeds, mask, _ = self.embed(samples, with_labels=False)
        tok = self.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        constraints = [constraint_for(s, tok, Decoding(decoding)) for s in samples]
        extra = {}
        if any(c is not None for c in constraints):
            vocab = list(range(len(tok)))
            # with inputs_embeds, ``ids`` holds only the tokens generated so far
            extra["prefix_allowed_tokens_fn"] = lambda b, ids: constraints[b].allowed(ids.tolist()) if constraints[b] else vocab
        out = self.llm.generate(inputs_embeds=embeds, attention_mask=mask, do_sample=False,
                                max_new_tokens=max_new_tokens or self.config.max_new_tokens,
                                pad_token_id=pad, eos_token_id=tok.eos_token_id, **extra)
        texts = [t.strip() for t in tok.batch_decode(out, skip_special_tokens=True)]
        return [SEPARATOR.join(c.items(t)) if c is not None else t for c, t in zip(constraints, texts)]
