"""The typed stages without a database: modes, parameters, the written-once k-hop statement."""

from __future__ import annotations

import numpy as np
import pytest

from gr_neo4j.cypher_store import repeats, statement
from gr_neo4j.defaults import Mode
from gr_neo4j.errors import UsageError
from gr_neo4j.retrieval import SELECTORS, RetrievalParams, Selection
from gr_neo4j.retrieval.candidates import MAX_HOPS, Candidates
from gr_neo4j.retrieval.modes import score, selector
from gr_neo4j.schema import ENTITY_VECTOR_INDEX, REL_VECTOR_INDEX


def test_every_mode_has_one_selector():
    assert set(SELECTORS) == set(Mode)
    assert all(SELECTORS[m].mode is m for m in Mode)
    with pytest.raises(ValueError, match="unknown retrieval mode 'nope'"):
        selector("nope")


def test_params_take_strings_and_refuse_unknown_modes():
    assert RetrievalParams(mode="triples").mode is Mode.TRIPLES
    assert RetrievalParams().resolved("metaqa", "knowledge-graph").mode is Mode.PATHS
    assert RetrievalParams().resolved("explagraphs", "per-sample").mode is Mode.WHOLE
    assert RetrievalParams().resolved("scene_graphs", "per-sample").mode is Mode.REFERENCE
    with pytest.raises(UsageError, match="unknown retrieval mode 'pcst'.*paths, reference, triples, whole, kaping"):
        RetrievalParams(mode="pcst")
    assert RetrievalParams(mode="kaping").to_json()["mode"] == "kaping"


def test_triple_modes_show_triple_scores():
    # a -> b -> c; the edge scores differ from the triple scores, so the selection says which it shows.
    c = Candidates(
        kind="knowledge-graph", embedder=None, dimension=2, node_ids=["0", "1", "2"], node_keys=["a", "b", "c"],
        node_texts=["a", "b", "c"], node_sim=np.array([1.0, 0.0, 0.5], dtype=np.float32), x=None, edge_ids=["e0", "e1"],
        edge_index=np.array([[0, 1], [1, 2]]), edge_rel=np.array([0, 0]), rel_texts=["r"],
        rel_attr=np.array([[0.0, 1.0]], dtype=np.float32), topic=np.array([0]),
    )
    s = score(c, np.array([1.0, 0.0], dtype=np.float32))
    params = RetrievalParams(hops=2).resolved("kg", "knowledge-graph")
    whole = SELECTORS[Mode.WHOLE](c, s, params)
    kaping = SELECTORS[Mode.KAPING](c, s, params)
    assert isinstance(whole, Selection) and whole.nodes.tolist() == [0, 1, 2] and whole.edges.tolist() == [0, 1]
    np.testing.assert_allclose(whole.edge_scores, [0.0, 0.0])
    np.testing.assert_allclose(kaping.edge_scores, [1 / 3, 0.5 / 3], rtol=1e-6)


def test_the_hop_block_is_written_once_and_expanded_per_hop():
    text = statement("retrieve_kg_candidates")
    assert repeats("retrieve_kg_candidates") == MAX_HOPS == 3
    assert text.count("UNWIND (CASE WHEN depth < $hops") == MAX_HOPS
    assert "// @repeat" not in text and "// @end" not in text
    # Index names come in as parameters from gr_neo4j.schema, never written in the statement.
    assert ENTITY_VECTOR_INDEX not in text and REL_VECTOR_INDEX not in text
    assert "$entity_index" in text and "$rel_index" in text
