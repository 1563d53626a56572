"""G-Retriever's textual layout and the PyG Data of a subgraph."""

from __future__ import annotations

import pytest
import torch

from gr_neo4j.textualize import textualize, to_data


def test_layout_matches_pandas_to_csv_of_nodes_and_edges():
    text = textualize(["cannabis", "marijuana", 'the "good", stuff'], [(0, "synonym of", 1), (2, "causes", 0)])
    # what pandas writes: header, rows, one blank line, header, rows; quoting only when needed
    assert text == (
        "node_id,node_attr\n0,cannabis\n1,marijuana\n2,\"the \"\"good\"\", stuff\"\n"
        "\n"
        "src,edge_attr,dst\n0,synonym of,1\n2,causes,0\n"
    )


def test_original_node_ids_are_kept_when_given():
    text = textualize(["b", "d"], [(1, "r", 3)], node_ids=[1, 3])
    assert text == "node_id,node_attr\n1,b\n3,d\n\nsrc,edge_attr,dst\n1,r,3\n"


def test_empty_graph_is_two_headers():
    assert textualize([], []) == "node_id,node_attr\n\nsrc,edge_attr,dst\n"


def test_multiline_text_is_quoted():
    assert textualize(["a\nb"], []).splitlines()[1] == '0,"a'


def test_ids_must_match_texts():
    with pytest.raises(ValueError):
        textualize(["a"], [], node_ids=[0, 1])


def test_to_data_shapes():
    data = to_data(torch.randn(3, 4), torch.tensor([[0, 2], [1, 1]]), torch.randn(2, 4))
    assert data.num_nodes == 3 and data.edge_index.dtype == torch.long and data.edge_attr.shape == (2, 4)
    with pytest.raises(ValueError):
        to_data(torch.randn(3, 4), torch.tensor([[0, 2], [1, 1]]), torch.randn(3, 4))


def test_a_retrieval_result_builds_its_data_from_numpy_features_on_first_read():
    import numpy as np

    from gr_neo4j.retrieval.result import GraphFeatures, RetrievalResult, RetrievedEdge, RetrievedNode, Timings

    nodes = [RetrievedNode(f"n{i}", t, t, 0.0) for i, t in enumerate(("a", "b", "c"))]
    edges = [RetrievedEdge("e0", 2, 0, "r", 0.0), RetrievedEdge("e1", 0, 1, "s", 0.0)]
    x, edge_attr = np.arange(12, dtype=np.float32).reshape(3, 4), np.ones((2, 4), dtype=np.float32)
    result = RetrievalResult("q", "d", None, "paths", {}, nodes, edges, "", GraphFeatures(x, edge_attr), Timings(0, 0, 0, 0))
    data = result.data
    assert data.edge_index.tolist() == [[2, 0], [0, 1]] and data.num_nodes == 3
    assert torch.equal(data.x, torch.from_numpy(x)) and torch.equal(data.edge_attr, torch.from_numpy(edge_attr))
    assert result.data is data  # built once
    assert RetrievalResult("q", "d", None, "paths", {}, [], [], "", None, Timings(0, 0, 0, 0)).data is None
