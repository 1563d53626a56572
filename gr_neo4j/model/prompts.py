"""Prompts of the GNN + LLM model, per dataset, as token-id pieces around the graph token.

Layout of one sample (``[g]`` = the projected graph token(s), ``|`` = a piece boundary)::

    chat prefix | [g] | desc[:max_txt_len tokens] | "\\n" + instruction | chat suffix | label + EOS
    ^ BOS, system and user header                                  ^ end of user turn, assistant header

With a chat template (SmolLM2-Instruct, Llama-2-chat, ...) the template is rendered around a
sentinel user message and cut there, so the graph token opens the user turn, right before the
textualised graph and the question (G-Retriever puts it right after ``<s>[INST]``). A template that
adds a default system prompt when none is given (SmolLM2's is 16 tokens, a tenth of an ExplaGraphs
prompt) is rendered with an empty one instead: the shorter prefix wins, since every token is paid
for in each training step on a CPU. Without a chat template the prefix is just BOS and the suffix
is empty. Only the label tokens are learnt.

With a node head (``--objective joint``), a line after the graph lists the node texts the head
ranks best, most likely first (:func:`candidates_line`); a checkpoint says whether it has a head, so
that line is part of its configuration and the prompt without it is unchanged.

The instructions are the paper's. Bump PROMPT_VERSION whenever anything here changes: it is
stored in checkpoints so that a model is never evaluated with a prompt it was not trained on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..ingest.facts import Answers
from ..metrics import kind_of

PROMPT_VERSION = "v2"  # v2: no default system prompt
_SENTINEL = "\x00GRAPH_PROMPT\x00"


def instruction(dataset: str, question: str) -> str:
    """The text after the textualised graph: the question and what to answer."""
    kind = kind_of(dataset)
    if kind == Answers.STANCE:
        return (f"{question}\nQuestion: Do argument 1 and argument 2 support or counter each other? "
                "Answer in one word in the form of 'support' or 'counter'.\n\nAnswer:")
    if kind == Answers.SCENE_GRAPH:
        return f"Question: {question}\n\nAnswer:"
    return f"Question: {question}\nAnswer:"


def candidates_line(candidates: Sequence[str]) -> str:
    """The prompt's line of the node head's best nodes ('' without any)."""
    if not candidates:
        return ""
    return "Likely answers, most likely first: " + " | ".join(candidates) + ". Answer with nodes of the graph."


@dataclass
class EncodedPrompt:
    """Token ids of one sample: before the graph token, after it, and the answer (None to generate)."""

    before: list[int]
    after: list[int]
    label: list[int] | None


class PromptBuilder:
    """Turns (dataset, question, desc, label) into :class:`EncodedPrompt` for one tokenizer."""

    def __init__(self, tokenizer, max_txt_len: int = 512, max_new_tokens: int = 32):
        self.tokenizer = tokenizer
        self.max_txt_len = max_txt_len
        self.max_new_tokens = max_new_tokens
        self.uses_chat_template = bool(getattr(tokenizer, "chat_template", None))
        if self.uses_chat_template:
            self.prefix, self.suffix = min(self._chat_pieces(), key=lambda pieces: len(pieces[0]))
        else:
            self.prefix = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
            self.suffix = []
        if tokenizer.eos_token_id is None:
            raise ValueError("the tokenizer has no EOS token: answers would never end")
        self.eos = [tokenizer.eos_token_id]

    def _chat_pieces(self) -> list[tuple[list[int], list[int]]]:
        """(prefix, suffix) ids of the template around a user turn, without and with an empty system turn."""
        from jinja2 import TemplateError  # what a template's raise_exception() raises

        pieces = []
        for system in ([], [{"role": "system", "content": ""}]):
            try:
                text = self.tokenizer.apply_chat_template(
                    system + [{"role": "user", "content": _SENTINEL}], tokenize=False, add_generation_prompt=True
                )
            except TemplateError:  # a template without a system role
                pass
            else:
                prefix, _, suffix = text.partition(_SENTINEL)
                pieces.append((self._ids(prefix), self._ids(suffix)))
        if not pieces:
            raise ValueError("the tokenizer's chat template cannot render a user message")
        return pieces

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"] if text else []

    def encode(self, dataset: str, question: str, desc: str, label: str | None = None,
               candidates: Sequence[str] = ()) -> EncodedPrompt:
        """``candidates``: the node head's best node texts, listed after the (cut) graph text."""
        ranked = self._ids("\n" + candidates_line(candidates)) if candidates else []
        after = self._ids(desc)[: self.max_txt_len] + ranked + self._ids("\n" + instruction(dataset, question)) + self.suffix
        label_ids = None if label is None else self._ids(label)[: self.max_new_tokens] + self.eos
        return EncodedPrompt(list(self.prefix), after, label_ids)
