"""Decoding held to the graph: the LLM may write only node texts of the retrieved
subgraph, separated by ``|``, or the explicit ``not in the graph``; on ExplaGraphs only a label.

Each sample gets a token trie over the tokenisations of its allowed phrases; transformers'
``prefix_allowed_tokens_fn`` (a ``PrefixConstrainedLogitsProcessor``) asks it, before every
token, which ids may come next. After a complete phrase the model may end (EOS) or write the
separator and start another; ``not in the graph`` stands alone. A phrase that is a prefix of
another ("Heat", "Heat 2") may end or go on. Greedy decoding then picks the likeliest allowed
token, so every answer item names something the graph holds, by construction; an item cut off by
``max_new_tokens`` is dropped by :meth:`PhraseConstraint.items`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..metrics import NOT_IN_GRAPH, SEPARATOR


@dataclass
class _Node:
    children: dict[int, _Node] = field(default_factory=dict)
    end: str | None = None  # the phrase that ends here


class PhraseConstraint:
    """Which token ids may follow a prefix of generated ids, for one sample.

    Args:
        tokenizer: the LLM's tokenizer (phrases are encoded without special tokens).
        phrases: the allowed answer items (node texts, or labels).
        several: whether items may be joined by :data:`SEPARATOR` (entities) or one only (labels).
        none_phrase: the explicit "nothing in the graph answers" item (None: not offered).
    """

    def __init__(self, tokenizer, phrases: Sequence[str], several: bool = True, none_phrase: str | None = NOT_IN_GRAPH):
        self.eos = tokenizer.eos_token_id
        self.separator = tokenizer.encode(SEPARATOR, add_special_tokens=False) if several else []
        self.none_phrase = none_phrase
        self.phrases = {p.strip() for p in phrases if p and p.strip()}
        self.root = _Node()
        for phrase in sorted(self.phrases | ({none_phrase} if none_phrase else set())):
            node = self.root
            for t in tokenizer.encode(phrase, add_special_tokens=False):
                node = node.children.setdefault(t, _Node())
            node.end = phrase

    def allowed(self, generated: Sequence[int]) -> list[int]:
        """The ids that may follow ``generated`` (the answer's ids so far, prompt excluded)."""
        node, in_separator, items = self.root, 0, 0
        for t in generated:
            if in_separator:
                if t != self.separator[in_separator]:
                    return [self.eos]
                in_separator += 1
                if in_separator == len(self.separator):
                    node, in_separator = self.root, 0
                continue
            if t in node.children:
                node = node.children[t]
            elif node.end is not None and self.separator and t == self.separator[0] and node.end != self.none_phrase:
                items += 1
                node, in_separator = self.root, (1 if len(self.separator) > 1 else 0)
            else:
                return [self.eos]  # cannot happen under the constraint; end rather than wander
        if in_separator:
            return [self.separator[in_separator]]
        ids = list(node.children)
        if node is self.root and items and self.none_phrase:  # "not in the graph" only stands alone
            ids = [t for t in ids if not self._starts_only_none(t)]
        if node.end is not None:
            ids.append(self.eos)
            if self.separator and node.end != self.none_phrase:
                ids.append(self.separator[0])
        return ids or [self.eos]

    def _starts_only_none(self, token: int) -> bool:
        """True when every phrase under the root's child ``token`` is the none phrase."""
        stack = [self.root.children[token]]
        while stack:
            node = stack.pop()
            if node.end is not None and node.end != self.none_phrase:
                return False
            stack.extend(node.children.values())
        return True

    def items(self, text: str) -> list[str]:
        """The complete allowed items of a decoded answer, in order, without repeats."""
        parts = [p.strip() for p in text.split(SEPARATOR)] if self.separator else [text.strip()]
        keep = [p for p in parts if p in self.phrases or p == self.none_phrase]
        return list(dict.fromkeys(keep))
