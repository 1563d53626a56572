"""Decoding held to the subgraph: the trie's rules, then a random tiny LLM that may only name nodes."""

from __future__ import annotations

from test_model_support import tiny_llm, tiny_samples

from gr_neo4j.defaults import Decoding
from gr_neo4j.metrics import names_outside
from gr_neo4j.model.constrained import NOT_IN_GRAPH, SEPARATOR, PhraseConstraint
from gr_neo4j.model.gretriever import GRetrieverModel, constraint_for


def walk(c: PhraseConstraint, tok, text: str) -> list[int]:
    """Feed the ids of ``text`` and return what may follow; every id on the way must be allowed."""
    ids = tok.encode(text, add_special_tokens=False)
    for i, t in enumerate(ids):
        assert t in c.allowed(ids[:i]), (text, i)
    return c.allowed(ids)


def test_the_trie_allows_phrases_separators_and_the_end_only():
    _, tok = tiny_llm()
    c = PhraseConstraint(tok, ["cat", "cat dog", "node 1 2"])
    sep = tok.encode(SEPARATOR, add_special_tokens=False)[0]
    after_cat = walk(c, tok, "cat")
    assert tok.eos_token_id in after_cat and sep in after_cat and len(after_cat) > 2  # or go on to "cat dog"
    assert set(walk(c, tok, "cat dog")) == {tok.eos_token_id, sep}
    assert tok.eos_token_id not in walk(c, tok, "node 1")  # a phrase cut short may not end
    assert set(walk(c, tok, "cat|node 1 2")) == {tok.eos_token_id, sep}
    assert walk(c, tok, NOT_IN_GRAPH) == [tok.eos_token_id]  # stands alone
    assert c.items("cat dog|node 1 2|node 1|cat dog") == ["cat dog", "node 1 2"]
    assert c.allowed(tok.encode("dog", add_special_tokens=False)) == [tok.eos_token_id]  # off the trie: stop


def test_labels_allow_one_of_them():
    _, tok = tiny_llm()
    c = PhraseConstraint(tok, ["support", "counter"], several=False, none_phrase=None)
    assert walk(c, tok, "support") == [tok.eos_token_id]
    assert c.items("counter") == ["counter"] and c.items("maybe") == []


def test_a_random_llm_constrained_names_only_nodes_of_each_subgraph():
    llm, tok = tiny_llm()
    samples = tiny_samples(6, dataset="metaqa")
    model = GRetrieverModel.llm_only(llm, tok, "tiny", max_new_tokens=12)
    free = model.generate(samples, decoding=Decoding.FREE)
    held = model.generate(samples, decoding=Decoding.AUTO)
    assert sum(names_outside(a, s.node_texts) for a, s in zip(free, samples)) > 0  # untrained: babble
    assert all(not names_outside(a, s.node_texts) for a, s in zip(held, samples))  # 0 by construction
    assert all(item in s.node_texts + [NOT_IN_GRAPH] for a, s in zip(held, samples) for item in a.split(SEPARATOR) if item)
    stance = tiny_samples(4)
    assert all(a in ("support", "counter", "") for a in model.generate(stance, decoding=Decoding.AUTO))
    assert constraint_for(samples[0], tok, Decoding.FREE) is None
