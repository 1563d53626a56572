"""PCST selection against cases worked out by hand (G-Retriever's `retrieval_via_pcst` rules)."""

from __future__ import annotations

import numpy as np
import pytest

from gr_neo4j.retrieval.pcst import edge_prizes, node_prizes, retrieval_pcst


def ei(*pairs):
    """[(src, dst), ...] -> edge_index [2, E]."""
    return np.array(pairs, dtype=np.int64).T.reshape(2, -1)


def test_node_prizes_topk_then_zero_and_ties_to_lower_index():
    assert node_prizes(np.array([0.2, 0.9, 0.5, 0.5, 0.1]), 3).tolist() == [0, 3, 2, 1, 0]
    assert node_prizes(np.array([0.2, 0.9]), 3).tolist() == [1, 2]  # topk larger than the graph
    assert node_prizes(np.array([0.2, 0.9]), 0).tolist() == [0, 0]


def test_edge_prizes_rank_distinct_values_split_ties_and_cap_by_last():
    # distinct values 0.9 > 0.7 > 0.5 > 0.1, topk_e = min(5, 4) = 4
    # rank 0: 0.9 -> min(4/1, 4) = 4, last = 3.96; rank 1: 0.7 -> 3, last = 2.97
    # rank 2: 0.5 (three edges) -> min(2/3, 2.97) = 0.6667, last = 0.66
    # rank 3: 0.1 -> min(1/1, 0.66) = 0.66: the cap keeps ranks strictly decreasing
    prizes = edge_prizes(np.array([0.9, 0.5, 0.5, 0.5, 0.1, 0.7]), 5)
    np.testing.assert_allclose(prizes, [4, 2 / 3, 2 / 3, 2 / 3, 0.66, 3], rtol=1e-6)


def test_edge_prizes_below_the_kth_value_are_zero():
    prizes = edge_prizes(np.array([0.3, 0.8, 0.1, 0.6, -0.2]), 2)
    np.testing.assert_allclose(prizes, [0, 2, 0, 1, 0])
    assert edge_prizes(np.array([0.3, 0.8]), 0).tolist() == [0, 0]


def test_all_profitable_edges_become_virtual_nodes_and_everything_is_chosen():
    # path 0-1-2-3; node prizes [3, 0, 1, 2]; edge prizes [2, 3, 1]; cost_e 0.5 -> all three edges
    # are virtual nodes joined by free half edges, so the whole path is free and chosen.
    sel = retrieval_pcst(np.array([0.9, 0.1, 0.2, 0.8]), ei((0, 1), (1, 2), (2, 3)), np.array([0.3, 0.9, 0.2]))
    assert sel.nodes.tolist() == [0, 1, 2, 3]
    assert sel.edges.tolist() == [0, 1, 2]


def test_a_small_far_prize_is_not_worth_the_path():
    # path 0..6; prizes: node 0 -> 3, node 1 -> 2, node 6 -> 1; only edge 0 (0.9) has a prize (topk_e=1):
    # 1, so cost_e = min(0.5, 1 * 0.995) = 0.5 and edge 0 is a virtual node of prize 0.5.
    # Reaching node 6 costs 5 * 0.5 = 2.5 for a prize of 1: left out.
    edges = ei((0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6))
    sel = retrieval_pcst(np.array([0.9, 0.8, 0, 0, 0, 0, 0.5]), edges, np.array([0.9, 0.1, 0.1, 0.1, 0.1, 0.1]), topk=3, topk_e=1)
    assert sel.nodes.tolist() == [0, 1]
    assert sel.edges.tolist() == [0]


def test_tied_edges_share_one_prize_and_crumbs_are_not_worth_their_cost():
    # star around 0; edge 0 scores 0.9, edges 1..3 tie at 0.5 (topk_e=2):
    # prizes 2 and 1/3 each; cost_e = 0.5; edge 0 virtual (prize 1.5); edges 1..3 cost 0.1667
    # and lead to leaves without prize (topk=1: only node 0 has one).
    sel = retrieval_pcst(np.array([0.9, 0.1, 0.2, 0.3, 0.0]), ei((0, 1), (0, 2), (0, 3), (0, 4)), np.array([0.9, 0.5, 0.5, 0.5]), topk=1, topk_e=2)
    assert sel.nodes.tolist() == [0, 1]
    assert sel.edges.tolist() == [0]


def test_cost_is_clamped_so_tied_top_edges_are_still_chosen():
    # four edges tie: each gets 1/4; without the clamp (cost 0.5) none would pay for itself.
    # cost_e = 0.25 * 0.995, so each becomes a virtual node of prize 0.00125: all chosen.
    sel = retrieval_pcst(np.array([0.9, 0.1, 0.2, 0.3, 0.0]), ei((0, 1), (0, 2), (0, 3), (0, 4)), np.full(4, 0.5), topk=1, topk_e=5)
    assert sel.nodes.tolist() == [0, 1, 2, 3, 4]
    assert sorted(sel.edges.tolist()) == [0, 1, 2, 3]


def test_direct_edges_come_before_virtual_ones_like_the_original_description():
    # path 0-1-2; edge 0 is the only prized edge (virtual), edge 1 a direct edge of cost 0.5 that joins
    # node 2 (prize 2): chosen edges are reported direct first, then virtual: [1, 0].
    sel = retrieval_pcst(np.array([0.9, 0.1, 0.8]), ei((0, 1), (1, 2)), np.array([0.9, 0.1]), topk=3, topk_e=1)
    assert sel.nodes.tolist() == [0, 1, 2]
    assert sel.edges.tolist() == [1, 0]


def test_no_edge_prizes_keeps_cost_and_joins_two_prized_nodes():
    # topk_e=0: every edge costs 0.5; nodes 0 (3) and 2 (2) are worth the 1.0 path between them;
    # node 3 (prize 1) hangs off node 2 by one edge of cost 0.5 < 1, so it is kept; node 4 (no prize) is not.
    edges = ei((0, 1), (1, 2), (2, 3), (3, 4))
    sel = retrieval_pcst(np.array([0.9, 0.0, 0.8, 0.5, 0.1]), edges, np.zeros(4), topk=3, topk_e=0)
    assert sel.nodes.tolist() == [0, 1, 2, 3]
    assert sorted(sel.edges.tolist()) == [0, 1, 2]


def test_extra_node_prizes_pull_in_a_topic_entity():
    # same far path as above, but node 6 gets 3 more (a topic entity): 4 > 2.5, now worth it.
    edges = ei((0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6))
    extra = np.zeros(7)
    extra[6] = 3
    sel = retrieval_pcst(np.array([0.9, 0.8, 0, 0, 0, 0, 0.5]), edges, np.array([0.9, 0.1, 0.1, 0.1, 0.1, 0.1]), topk=3, topk_e=1, extra_node_prizes=extra)
    assert sel.nodes.tolist() == list(range(7))


@pytest.mark.parametrize("num_nodes", [0, 3])
def test_empty_cases_return_the_whole_graph(num_nodes):
    sel = retrieval_pcst(np.linspace(0, 1, num_nodes), np.zeros((2, 0), dtype=np.int64), np.zeros(0))
    assert sel.nodes.tolist() == list(range(num_nodes))
    assert sel.edges.tolist() == []
