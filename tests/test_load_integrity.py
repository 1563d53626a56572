"""Nothing lost, nothing corrupted: uids that cannot collide, input read exactly as
written (TSV without quoting, bytes that are not UTF-8), limits checked before anything is
written, re-loads that bring changed samples to the file's content, counts of what was created."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES
from test_load_support import counts, tiny_embedder

from gr_neo4j.errors import BadInput, MissingInput
from gr_neo4j.ingest import load_dataset
from gr_neo4j.ingest.records import MAX_KEY_BYTES, MAX_TEXT_BYTES, entity_uid, make_uid

THREE_ROWS = (FIXTURES / "explagraphs" / "three_rows.tsv").read_text(encoding="utf-8").splitlines()


def write(path, text: str | bytes):
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def load(server, dataset, path, **kw):
    return load_dataset(server, dataset, path=path, embedder=tiny_embedder(), **kw)


# --- uids -------------------------------------------------------------------------------------


def test_uids_escape_the_separator_so_they_never_collide():
    assert make_uid("a|b", "c") != make_uid("a", "b|c")
    assert make_uid("a\\", "|b") != make_uid("a\\|", "b")
    assert make_uid("metaqa", "", "Tom Hanks") == "metaqa||Tom Hanks"  # keys without | or \ are unchanged


def test_triples_differing_only_in_where_the_bar_is_are_two_relationships(server, conn, tmp_path):
    report = load(server, "triples", write(tmp_path / "x.tsv", "a|b\tc\td\na\tb|c\td\n"))
    assert (report.input_relationships, report.written_relationships, report.skipped) == (2, 2, 0)
    assert counts(conn, "triples")["rels"] == 2
    uid = conn.query("MATCH (n:Entity {dataset: 'triples', key: 'a|b'}) RETURN n.uid AS uid")[0]["uid"]
    assert uid == entity_uid("triples", "", "a|b") == "triples||a\\|b"


# --- reading input exactly ----------------------------------------------------------------------


def test_tsv_quotes_are_text_and_an_unclosed_quote_swallows_nothing(server, conn, tmp_path):
    rows = ['"Crocodile" Dundee\tdirected by\tPeter Faiman', '"Unclosed\tstarred\tNobody']
    rows += [f"film {i}\treleased in\t19{i:02d}" for i in range(20)]
    report = load(server, "triples", write(tmp_path / "films.tsv", "\n".join(rows) + "\n"))
    assert (report.input_relationships, report.skipped) == (22, 0)
    keys = {r["k"] for r in conn.query("MATCH (n:Entity {dataset: 'triples'}) RETURN n.key AS k")}
    assert {'"Crocodile" Dundee', '"Unclosed', "film 19"} <= keys


def _explagraphs(tmp_path, bad: bytes):
    lines = [line.encode() for line in THREE_ROWS]
    return write(tmp_path / "x.tsv", b"\n".join([lines[0], bad, lines[2]]) + b"\n")


def _metaqa(tmp_path, bad: bytes):
    root = tmp_path / "metaqa"
    (root / "1-hop").mkdir(parents=True)
    write(root / "kb.txt", b"Film A|directed_by|Ann\n" + bad + b"\nFilm B|directed_by|Bob\n")
    write(root / "1-hop" / "qa_dev.txt", "who directed [Film A]\tAnn\n")
    return root


def _webqsp(tmp_path, bad: bytes):
    good = [json.dumps({"id": f"q{i}", "question": "q?", "answer": ["b"], "q_entity": ["a"], "a_entity": ["b"], "graph": [["a", "r", "b"]]}) for i in range(2)]
    return write(tmp_path / "train.jsonl", b"\n".join([good[0].encode(), bad, good[1].encode()]) + b"\n")


def _scene_csv(tmp_path, bad: bytes):
    root = tmp_path / "gqa"
    root.mkdir()
    (root / "train_sceneGraphs.json").write_bytes((FIXTURES / "scene_graphs_csv" / "train_sceneGraphs.json").read_bytes())
    lines = (FIXTURES / "scene_graphs_csv" / "questions.csv").read_bytes().splitlines()
    write(root / "questions.csv", b"\n".join([lines[0], lines[1], bad, *lines[2:]]) + b"\n")
    return root


NOT_UTF8 = b"caf\xe9\tis a\tplace"  # Latin-1 'é'
# loader, input builder, where the bad line is, the count that the good lines give with skip
LINE_CASES = [
    ("triples", lambda p, bad: write(p / "x.tsv", b"a\tr\tb\n" + bad + b"\nc\tr\td\n"), "x.tsv:2", ("rels", 2)),
    ("triples", lambda p, bad: write(p / "x.csv", b"a,r,b\n" + bad + b"\nc,r,d\n"), "x.csv:2", ("rels", 2)),
    ("triples", lambda p, bad: write(p / "x.jsonl", b'{"head": "a", "relation": "r", "tail": "b"}\n' + bad + b"\n"), "x.jsonl:2", ("rels", 1)),
    ("explagraphs", _explagraphs, "x.tsv:2", ("graphs", 2)),
    ("metaqa", _metaqa, "kb.txt:2", ("rels", 2)),
    ("webqsp", _webqsp, "train.jsonl:2", ("questions", 2)),
    ("scene_graphs", _scene_csv, "questions.csv:3", ("graphs", 2)),
]
LINE_IDS = [f"{c[0]}-{c[2].split(':')[0]}" for c in LINE_CASES]


@pytest.mark.parametrize("dataset, build, where, good", LINE_CASES, ids=LINE_IDS)
def test_a_line_that_is_not_utf8_is_one_bad_record(server, conn, tmp_path, dataset, build, where, good):
    path = build(tmp_path, NOT_UTF8)
    with pytest.raises(BadInput, match=rf"{where}: not valid UTF-8 \(byte 0xe9 at column 4\).*nothing was written"):
        load(server, dataset, path)
    assert set(counts(conn, dataset).values()) == {0}
    report = load(server, dataset, path, on_error="skip")
    assert report.skipped_reasons == {"not valid UTF-8": 1}
    assert counts(conn, dataset)[good[0]] == good[1]


def test_a_scene_graphs_json_that_is_not_utf8_names_file_and_offset(server, conn, tmp_path):
    data = (FIXTURES / "scene_graphs" / "train_sceneGraphs.json").read_bytes()
    at = data.index(b'"name"')
    path = write(tmp_path / "train_sceneGraphs.json", data[:at] + b'"n\xff":1,' + data[at:])
    with pytest.raises(BadInput, match=rf"train_sceneGraphs.json: not valid UTF-8 \(byte 0xff at offset {at + 2}\)"):
        load(server, "scene_graphs", path)
    assert set(counts(conn, "scene_graphs").values()) == {0}


@pytest.mark.parametrize("name", ["x.tsv", "x.csv", "x.jsonl", "kb.txt"])
def test_a_binary_file_is_one_bad_record(server, conn, tmp_path, name):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    if name == "kb.txt":
        path = _metaqa(tmp_path, b"x|r|y")
        write(path / "kb.txt", png)
        dataset, where = "metaqa", path / "kb.txt"
    else:
        path, dataset, where = write(tmp_path / name, png), "triples", tmp_path / name
    with pytest.raises(BadInput, match=rf"{where}: binary file, not text \(NUL byte at offset 8\)"):
        load(server, dataset, path)


def test_a_csv_field_over_the_csv_limit_is_a_bad_record(server, conn, tmp_path):
    path = write(tmp_path / "x.csv", "a,r,b\n" + '"' + "x" * 200_000 + '",r,c\nd,r,e\n')
    with pytest.raises(BadInput, match=r"x.csv:2: bad CSV: field larger than field limit"):
        load(server, "triples", path)
    report = load(server, "triples", path, on_error="skip")
    assert report.skipped == 1 and counts(conn, "triples")["rels"] == 2


def test_a_directory_named_like_a_triples_file_is_not_read(server, conn, tmp_path):
    write(tmp_path / "a.tsv", "a\tr\tb\n")
    (tmp_path / "b.tsv").mkdir()
    report = load(server, "triples", tmp_path)
    assert (report.input_relationships, report.skipped) == (1, 0)
    (tmp_path / "a.tsv").unlink()
    with pytest.raises(MissingInput, match="has no .tsv, .csv or .jsonl files"):
        load(server, "triples", tmp_path)


# --- limits, checked before anything is written ---------------------------------------------------


def _graph_row(graph: str) -> str:
    return json.dumps({"head": "a", "relation": "r", "tail": "b", "graph": graph}, ensure_ascii=False)


def test_a_key_at_the_limit_loads_and_one_byte_more_is_a_bad_record(server, conn, tmp_path):
    # the longest uid of a row is its relationship's, 'triples|G|0|r|1': 14 bytes + the graph id
    at_limit = "€" * ((MAX_KEY_BYTES - 14) // 3)  # 3 bytes each: the limit is in bytes, not characters
    assert len(make_uid("triples", at_limit, "0", "r", "1").encode()) == MAX_KEY_BYTES
    path = write(tmp_path / "g.jsonl", _graph_row(at_limit) + "\n" + _graph_row(at_limit + "x") + "\n")
    with pytest.raises(BadInput, match=rf"g.jsonl:2: key too long \({MAX_KEY_BYTES + 1} bytes, at most {MAX_KEY_BYTES}\)"):
        load(server, "triples", path)
    assert set(counts(conn, "triples").values()) == {0}
    report = load(server, "triples", path, on_error="skip")  # the real server takes the key at the limit
    assert report.skipped_reasons == {"key too long": 1}
    assert (counts(conn, "triples")["graphs"], counts(conn, "triples")["rels"]) == (1, 1)


@pytest.mark.parametrize(
    "graph, row, reason",
    [
        ("", "x" * 9000 + "\tr\tb", "key too long (9009 bytes, at most 8000): 'triples||xxx"),
        ("", "a" * 4000 + "\tr\t" + "b" * 4000, "key too long (8012 bytes"),  # each entity fits, their relationship does not
        ("\tg", "x" * 10_000_000 + "\tr\tb\tg", f"text too long (10000000 bytes, at most {MAX_TEXT_BYTES}): node 'xxx"),
    ],
    ids=["key", "relationship-key", "10MB-text"],
)
def test_too_long_is_found_before_the_first_write(server, conn, tmp_path, graph, row, reason):
    rows = [f"h{i}\tr\tt{i}{graph}" for i in range(30)] + [row]  # the bad row comes after several batches
    path = write(tmp_path / "x.tsv", "\n".join(rows) + "\n")
    with pytest.raises(BadInput) as info:
        load(server, "triples", path, batch_size=10)
    assert f"x.tsv:31: {reason}" in str(info.value) and len(str(info.value)) < 300
    assert set(counts(conn, "triples").values()) == {0}  # not even the Dataset node
    report = load(server, "triples", path, batch_size=10, on_error="skip")
    assert report.skipped == 1 and counts(conn, "triples")["rels"] == 30


def test_values_neo4j_cannot_store_are_bad_records(server, conn, tmp_path):
    lines = [
        '{"head": "a", "relation": "r", "tail": "b"}',
        '{"head": "a\\ud800", "relation": "r", "tail": "b"}',  # a lone surrogate cannot be sent as UTF-8
    ]
    write(tmp_path / "x.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(BadInput, match=r"x.jsonl:2: not valid UTF-8 \(lone surrogate U\+D800"):
        load(server, "triples", tmp_path / "x.jsonl")
    scenes = json.loads((FIXTURES / "scene_graphs" / "train_sceneGraphs.json").read_text(encoding="utf-8"))
    first = next(iter(scenes))
    scenes[first]["width"] = 2**70  # Bolt carries 64-bit integers only
    write(tmp_path / "train_sceneGraphs.json", json.dumps(scenes))
    report = load(server, "scene_graphs", tmp_path / "train_sceneGraphs.json", on_error="skip")
    assert report.skipped_examples == [f"{tmp_path / 'train_sceneGraphs.json'}: image {first}: bad value: property width is an integer beyond 64 bits"]
    assert counts(conn, "scene_graphs")["graphs"] == len(scenes) - 1


# --- what the report counts ----------------------------------------------------------------------


def test_newly_written_counts_what_the_server_created(server, conn, tmp_path):
    # a node that another writer merged after this load looked (here: before, without its vector,
    # so the load still writes it) is there already: written again, but not new
    conn.run_autocommit("CREATE (:Entity {uid: 'triples||a', dataset: 'triples', graph: '', key: 'a', text: 'a'})")
    report = load(server, "triples", write(tmp_path / "x.tsv", "a\tr\tb\nb\tr\tc\n"))
    assert (report.input_entities, report.written_entities, report.written_relationships) == (3, 2, 2)
    assert counts(conn, "triples")["entity_vectors"] == 3


# --- re-loading an edited file -------------------------------------------------------------------


def _graph_of(conn, graph: str) -> dict:
    nodes = conn.query("MATCH (n:Entity {dataset: 'explagraphs', graph: $g}) RETURN n.idx AS i, n.text AS t ORDER BY i", {"g": graph})
    edges = conn.query(
        "MATCH (h:Entity {dataset: 'explagraphs', graph: $g})-[r:REL]->(t) RETURN h.text AS h, r.text AS r, t.text AS t, r.idx AS i ORDER BY i",
        {"g": graph},
    )
    props = conn.query(
        "MATCH (q:Question {dataset: 'explagraphs', id: $g})-[:ON_GRAPH]->(g:Graph) RETURN g.label AS label, q.answers AS answers, q.text AS text",
        {"g": graph},
    )[0]
    return {"nodes": [(r["i"], r["t"]) for r in nodes], "edges": [(r["h"], r["r"], r["t"]) for r in edges], **dict(props)}


def test_reloading_an_edited_per_sample_file_brings_graphs_and_questions_to_it(server, conn, tmp_path):
    load(server, "explagraphs", write(tmp_path / "x.tsv", "\n".join(THREE_ROWS) + "\n"))
    before = {g: _graph_of(conn, g) for g in ("1", "2")}
    arg1, arg2, _, _ = THREE_ROWS[0].split("\t")
    edited = [f"{arg1}\t{arg2}\tcounter\t(cannabis; synonym of; marijuana)(marijuana; not capable of; harmless)"] + THREE_ROWS[1:]
    report = load(server, "explagraphs", write(tmp_path / "x.tsv", "\n".join(edited) + "\n"))
    assert (report.written_graphs, report.replaced_graphs, report.written_questions, report.updated_questions) == (0, 1, 0, 1)
    assert report.texts_embedded == 2  # 'harmless' and 'not capable of'; 'cannabis', 'marijuana', 'synonym of' are read back
    assert _graph_of(conn, "0") == {
        "nodes": [(0, "cannabis"), (1, "marijuana"), (2, "harmless")],
        "edges": [("cannabis", "synonym of", "marijuana"), ("marijuana", "not capable of", "harmless")],
        "label": "counter", "answers": ["counter"], "text": f"Argument 1: {arg1}\nArgument 2: {arg2}",
    }
    assert {g: _graph_of(conn, g) for g in ("1", "2")} == before
    c = counts(conn, "explagraphs")
    assert (c["entities"], c["entity_vectors"], c["rels"], c["rel_vectors"], c["graphs"], c["graph_links"]) == (10, 10, 7, 7, 3, 3)
    again = load(server, "explagraphs", tmp_path / "x.tsv")  # unchanged: nothing to do
    assert (again.written_entities, again.written_relationships, again.replaced_graphs, again.updated_questions, again.texts_embedded) == (0, 0, 0, 0, 0)
    # graphs absent from a load (here: a file with row 0 only) are left alone; row 0's split is
    # that of a one-row file now, so its question is rewritten
    partial = load(server, "explagraphs", write(tmp_path / "first.tsv", edited[0] + "\n"))
    assert (partial.replaced_graphs, partial.updated_questions) == (0, 1)
    assert counts(conn, "explagraphs") == c and {g: _graph_of(conn, g) for g in ("1", "2")} == before


def test_reloading_an_edited_question_file_replaces_its_answers_and_links(server, conn, tmp_path):
    import shutil

    from conftest import metaqa_fixture

    root = tmp_path / "metaqa"
    shutil.copytree(metaqa_fixture(), root)
    load(server, "metaqa", root)
    questions = root / "1-hop" / "qa_dev.txt"
    lines = questions.read_text(encoding="utf-8").splitlines()
    lines[0] = "who wrote [Velvet Harbor]\tTomas Reyk"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = counts(conn, "metaqa")
    report = load(server, "metaqa", root)
    assert (report.written_questions, report.updated_questions, report.written_relationships) == (0, 1, 0)
    q = conn.query(
        "MATCH (q:Question {uid: 'metaqa|1-hop/dev/1'})-[:ANSWER]->(a) RETURN q.text AS text, q.answers AS answers, collect(a.key) AS linked"
    )[0]
    assert (q["text"], q["answers"], q["linked"]) == ("who wrote Velvet Harbor", ["Tomas Reyk"], ["Tomas Reyk"])
    assert counts(conn, "metaqa") == before  # one ANSWER link replaced by another


# --- naming a triples dataset ----------------------------------------------------------------------


def test_triples_files_load_under_their_own_names_and_are_retrieved_by_them(server, conn, tmp_path):
    from gr_neo4j.ingest import dataset_stats, drop_dataset
    from gr_neo4j.retrieval.retriever import Retriever

    load(server, "triples", write(tmp_path / "a.tsv", "a|b\tknows\tc\n"), as_name="team|kg")
    load(server, "triples", write(tmp_path / "b.tsv", "x\tlikes\ty\n"))
    assert [s.name for s in dataset_stats(server)] == ["team|kg", "triples"]
    assert (counts(conn, "team|kg")["rels"], counts(conn, "triples")["rels"]) == (1, 1)
    with Retriever(server, embedder=tiny_embedder()) as r:
        result = r.retrieve("who does a|b know?", dataset="team|kg", entities=["a|b"])
    assert {n.text for n in result.nodes} == {"a|b", "c"}
    drop_dataset(server, "team|kg")
    assert [s.name for s in dataset_stats(server)] == ["triples"] and counts(conn, "triples")["rels"] == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["triples", "--name", ""], "--name must be printable text"),
        (["triples", "--name", "tab\there"], "--name must be printable text"),
        (["triples", "--name", "x" * 65], "--name must be at most 64 characters, got 65"),
        (["triples", "--name", "metaqa"], "--name 'metaqa' is the name of the metaqa loader's dataset"),
        (["explagraphs", "--name", "mine"], "--name is only for triples"),
    ],
    ids=["empty", "tab", "long", "taken", "not-triples"],
)
def test_bad_names_are_one_line_errors(server, tmp_path, args, message):
    from typer.testing import CliRunner

    from gr_neo4j.cli import app

    env = {"GR_NEO4J_HOME": str(server.home), "GR_NEO4J_DIST": str(server.dist_dir), "NEO4J_URI": None, "COLUMNS": "200"}
    path = write(tmp_path / "x.tsv", "a\tr\tb\n")
    result = CliRunner().invoke(app, ["load", args[0], "--path", str(path), *args[1:]], env=env)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output
