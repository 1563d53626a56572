"""Subgraph samples: ExplaGraphs parsing (real shared data) and the samples file format."""

from __future__ import annotations

import pytest
import torch
from conftest import SHARED_DATASETS
from gr_neo4j.loaders.explagraphs import parse_graph, parse_row, row_fragment
from gr_neo4j.loaders.explagraphs import read_rows as read_explagraphs
from gr_neo4j.loaders.explagraphs import whole_graph_samples as explagraphs_samples

from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.ingest.records import BadRecord
from gr_neo4j.samples import load_samples, save_samples
from gr_neo4j.textualize import textualize

TSV = SHARED_DATASETS / "explagraphs" / "train.tsv"


def test_graph_string_becomes_lowercased_nodes_in_first_seen_order_and_edges():
    nodes, edges = parse_graph("(Cannabis; synonym of; marijuana)(legal; causes; more available)(marijuana; capable of; good thing)")
    assert nodes == ["cannabis", "marijuana", "legal", "more available", "good thing"]
    assert edges == [(0, "synonym of", 1), (2, "causes", 3), (1, "capable of", 4)]


@pytest.mark.skipif(not TSV.is_file(), reason="shared ExplaGraphs not present")
def test_the_real_explagraphs_file_parses_completely():
    rows = read_explagraphs(TSV)
    assert len(rows) == 2368
    assert {r.label for r in rows} == {"support", "counter"}
    first = rows[0]
    assert first.arg1 == "Cannabis should be legal." and first.label == "support"
    assert first.nodes[:2] == ["cannabis", "marijuana"] and first.edges[0] == (0, "synonym of", 1)


@pytest.mark.parametrize("line, problem", [
    ("a\tb\tsupport\n", "wrong column count: expected 4 tab-separated fields"),
    ("a\tb\tmaybe\t(x; y; z)\n", "bad stance: 'maybe'"),
    ("a\tb\tsupport\t(x; y)\n", "2 ';'-separated parts, expected 3"),
])
def test_bad_rows_name_the_file_and_line(tmp_path, line, problem):
    path = tmp_path / "bad.tsv"
    path.write_text("arg1\targ2\tlabel\tgraph\nok\tfine\tcounter\t(a; b; c)\n" + line)
    with pytest.raises(GrNeo4jError, match=rf"bad.tsv:3: .*{problem}"):
        read_explagraphs(path)


@pytest.mark.parametrize("stance, label", [("support", "support"), ("Support", "support"), ("COUNTER", "counter")])
def test_one_parser_reads_the_stance_in_any_case_for_the_loader_and_the_samples(tmp_path, stance, label):
    line = f"b\ta\t{stance}\t(x; causes; y)"
    assert parse_row(line).label == label
    fragment = row_fragment("f.tsv:1", 0, line, "train")
    assert not isinstance(fragment, BadRecord), fragment
    assert fragment.graph.props["label"] == label and fragment.questions[0].answers == [label]
    path = tmp_path / "one.tsv"
    path.write_text(line + "\n")
    assert read_explagraphs(path)[0].label == label
    assert isinstance(row_fragment("f.tsv:1", 0, "b\ta\tmaybe\t(x; causes; y)", "train"), BadRecord)


class FakeDims:
    """Deterministic stand-in for the embedder: only the shapes matter here."""

    dimension = 8

    def encode(self, texts, batch_size=256):
        return torch.stack([torch.full((8,), float(len(t))) for t in texts]).numpy()


def test_explagraphs_samples_keep_the_whole_graph(tmp_path):
    path = tmp_path / "two.tsv"
    path.write_text("b1\ta1\tsupport\t(x; causes; y)(y; is a; z)\nb2\ta2\tcounter\t(p; desires; q)\n")
    samples = explagraphs_samples(path, FakeDims())
    s = samples[0]
    assert (s.id, s.label, s.dataset) == ("0", "support", "explagraphs")
    assert s.question == "Argument 1: b1\nArgument 2: a1"
    assert s.desc == textualize(["x", "y", "z"], [(0, "causes", 1), (1, "is a", 2)])
    assert s.data.x.shape == (3, 8) and s.data.edge_index.tolist() == [[0, 1], [1, 2]]
    assert s.data.edge_attr[:, 0].tolist() == [6.0, 4.0]  # len('causes'), len('is a')
    save_samples(tmp_path / "s.pt", samples)
    assert [x.desc for x in load_samples(tmp_path / "s.pt")] == [x.desc for x in samples]


def test_loading_a_foreign_file_is_a_clear_error(tmp_path):
    path = tmp_path / "other.pt"
    torch.save({"something": 1}, path)
    with pytest.raises(GrNeo4jError, match="not a samples file"):
        load_samples(path)
    with pytest.raises(GrNeo4jError, match="no such samples file"):
        load_samples(tmp_path / "missing.pt")
