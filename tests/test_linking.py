"""Entity linking: spans and matching without a database, then on the MetaQA fixture in real Neo4j
(questions as people type them, with and without brackets, through the retriever and `ask`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import metaqa_fixture
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.connection import connect
from gr_neo4j.cypher_store import statement
from gr_neo4j.defaults import Seeds
from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.retrieval import RetrievalParams, Retriever
from gr_neo4j.retrieval.candidates import END_TYPES_FACT
from gr_neo4j.retrieval.linking import CASE, EXACT, MASK, NORMALISED, Linked, Span, choose, lucene_phrase, masked, match_score, spans
from gr_neo4j.retrieval.params import MAX_HOPS
from gr_neo4j.retrieval.zero_shot import ANSWERABLE

runner = CliRunner()


# -- without a database -------------------------------------------------------------------------


def test_spans_skip_stop_words_and_question_vocabulary():
    texts = [s.text for s in spans("which films did Tom Hanks act in that were directed by Robert Zemeckis?")]
    assert {"Tom Hanks", "Robert Zemeckis", "Zemeckis"} <= set(texts)
    assert not {"films", "directed by", "which films did Tom", "in that"} & set(texts)
    # Typed in lower case, a name may start or end anywhere, but a span of question words never links.
    lower = [s.text for s in spans("what films did michelle trachtenberg star in")]
    assert "michelle trachtenberg" in lower and "films" not in lower and "star in" not in lower


def test_spans_strip_outer_punctuation_and_possessives_and_keep_offsets():
    q = 'who is "Ilse Varga\'s" director?'
    by_text = {s.text: s for s in spans(q)}
    assert {"Ilse Varga", "Ilse Varga's"} <= set(by_text)
    s = by_text["Ilse Varga"]
    assert q[s.start : s.end] == "Ilse Varga" and s.words == 2


def test_brackets_are_hints_and_ngrams_do_not_cross_them():
    got = spans("who directed the films starred by [Ilse Varga]")
    assert all(s.hint for s in got if "Ilse" in s.text)
    long = spans("[A B C D E F G H] x")
    assert any(s.text == "A B C D E F G H" and s.words == 8 for s in long)  # a hint of any length
    assert not any("H" in s.text and "x" in s.text for s in long)


def test_lucene_special_characters_are_escaped():
    assert lucene_phrase('a "b" (c)') == '"a \\"b\\" \\(c\\)"'
    assert lucene_phrase("x:y~2 AND z*?\\") == '"x\\:y\\~2 AND z\\*\\?\\\\"'


def test_match_scores_exact_case_punctuation_or_nothing():
    s = Span(0, 12, "Spider-Man 2", 2)
    assert match_score(s, "Spider-Man 2", "Spider-Man 2") == EXACT
    assert match_score(s, "Spider-man 2", "spider-man 2") == CASE
    assert match_score(s, "Spider Man 2", "Spider Man 2") == NORMALISED
    assert match_score(s, "Spider-Man 3", "Spider-Man 3") is None
    # WebQSP keeps the name as key and lower-cases the text: either may match.
    assert match_score(Span(0, 6, "jamaica", 1), "Jamaica", "jamaica") == EXACT


def _row(span, key, degree=1, text=None):
    return {"span": span, "uid": f"kg||{key}", "key": key, "text": text or key, "degree": degree}


def test_choose_prefers_longer_spans_then_exact_case_then_degree():
    q = "films of Tom Hanks"
    cands = [Span(9, 12, "Tom", 1), Span(9, 18, "Tom Hanks", 2), Span(13, 18, "Hanks", 1)]
    rows = [_row(0, "Tom", 50), _row(1, "Tom Hanks", 3), _row(2, "Hanks", 9), _row(1, "tom hanks", 99)]
    (linked,) = choose(q, cands, rows)
    assert (linked.key, linked.span, linked.mention, linked.score) == ("Tom Hanks", (9, 18), "Tom Hanks", EXACT)
    assert linked.alternatives == ("tom hanks",)
    # Same span, same match: the entity with more relationships wins.
    rows = [_row(0, "Tom", 5), _row(0, "TOM", 7)]
    (linked,) = choose("tom", [Span(0, 3, "tom", 1)], rows)
    assert linked.key == "TOM" and linked.alternatives == ("Tom",) and linked.score == CASE


def test_choose_drops_partial_hits_and_lower_case_question_words():
    # The fulltext index also returns entities that merely contain the span.
    assert choose("Gump", [Span(0, 4, "Gump", 1)], [_row(0, "Forrest Gump")]) == []
    # 'film' is a MetaQA tag: typed in lower case it is the question's word, not the entity.
    assert choose("a film", [Span(2, 6, "film", 1)], [_row(0, "film")]) == []
    assert [x.key for x in choose("Together", [Span(0, 8, "Together", 1)], [_row(0, "Together")])] == ["Together"]


def test_masked_replaces_each_linked_mention_by_the_mask():
    q = "which films did Tom Hanks make with Meg Ryan"

    def at(name: str) -> Linked:
        start = q.index(name)
        return Linked(f"metaqa||{name}", name, name, (start, start + len(name)), name, EXACT, 1)

    assert masked(q, [at("Meg Ryan"), at("Tom Hanks")]) == f"which films did {MASK} make with {MASK}"
    assert masked(q, []) == q


# -- on the MetaQA fixture in Neo4j -------------------------------------------------------------


@pytest.fixture(scope="module")
def metaqa(server):
    """The MetaQA fixture loaded once for this module (other modules empty the database first)."""
    with connect(server) as c:
        c.run_autocommit("MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 20000 ROWS")
        c.run_autocommit("MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF 20000 ROWS")
        load_dataset(server, "metaqa", path=metaqa_fixture())
        with Retriever(server, conn=c) as r:
            yield r


def keys(result) -> list[str]:
    return [x.key for x in result.linked]


def test_link_statement_is_read_only(metaqa):
    summary = metaqa.conn.driver.execute_query("EXPLAIN " + statement("link_entities"), database_=metaqa.conn.database).summary
    assert summary.query_type == "r"


def test_a_question_without_brackets_links_its_person_and_film(metaqa):
    res = metaqa.retrieve("what films did Ilse Varga act in", "metaqa")
    assert res.seeds is Seeds.LINKED and keys(res) == ["Ilse Varga"]
    (x,) = res.linked
    assert res.question[x.span[0] : x.span[1]] == "Ilse Varga" and x.score == EXACT and x.alternatives == ()
    assert [n.key for n in res.nodes if n.topic] == ["Ilse Varga"]
    assert {"Velvet Harbor", "Glass Orchard", "Salt Road"} <= {n.key for n in res.nodes}
    # No hop model trained yet: paths of every length compete and the depth is read from the
    # question, before the fetch, which walks as deep as the best path and no deeper.
    assert res.parameters["hops"] == 1 and res.hop_probabilities == () and res.read_depth
    assert res.path == (("starred actors", True),) and res.depth == 1 and res.not_in_graph is None
    assert res.path_asked > ANSWERABLE
    assert res.hops_line() == (f"Hops: 1 (~starred actors), read from the question (zero-shot, up to {MAX_HOPS}); "
                               f"asked for {res.path_asked:.2f}, answers above {ANSWERABLE}")
    # Typed in lower case, the name still links (a case-insensitive match).
    res = metaqa.retrieve("when was glass orchard released", "metaqa")
    assert keys(res) == ["Glass Orchard"] and res.linked[0].score == CASE


def test_an_open_question_is_answered_by_the_names_only_relation(metaqa):
    # No word of "appear in" asks for "starred actors" (to MiniLM), but Ilse Varga has no other
    # relation and the question asks what she has: her films, and the hops line says why.
    res = metaqa.retrieve("what does Ilse Varga appear in", "metaqa")
    assert res.path == (("starred actors", True),) and res.not_in_graph is None and res.sole_relation
    assert {res.nodes[i].key for i in res.graph_answers} == {"Velvet Harbor", "Glass Orchard", "Salt Road"}
    assert res.hops_line().endswith("or as here by the named entity's only relation")
    # Asked for something else, the same name has no answer.
    for q in ("how tall is Ilse Varga", "what is the population of Ilse Varga", "who is the spouse of Ilse Varga"):
        res = metaqa.retrieve(q, "metaqa")
        assert res.not_in_graph is not None and not res.graph_answers and not res.sole_relation, q


def test_two_names_link_both(metaqa):
    res = metaqa.retrieve("did Ada Morrow direct Velvet Harbor or Salt Road?", "metaqa")
    assert keys(res) == ["Ada Morrow", "Velvet Harbor", "Salt Road"]
    assert {n.key for n in res.nodes if n.topic} == {"Ada Morrow", "Velvet Harbor", "Salt Road"}


def test_an_ambiguous_name_picks_by_the_rule_and_lists_the_others(metaqa):
    # 'Otto van Deren' is a director and, in lower case, a tag of Salt Road.
    (x,) = metaqa.retrieve("which films did Otto van Deren direct", "metaqa").linked
    assert (x.key, x.score, x.alternatives) == ("Otto van Deren", EXACT, ("otto van deren",))
    res = metaqa.retrieve("which films of Ilse Varga are tagged otto van deren", "metaqa")
    assert [(x.key, x.score, x.alternatives) for x in res.linked] == [
        ("Ilse Varga", EXACT, ()), ("otto van deren", EXACT, ("Otto van Deren",)),
    ]
    # Exact case wins in a lower-case question too (MetaQA asks about its tags that way).
    (x,) = metaqa.retrieve("which films are tagged otto van deren", "metaqa").linked
    assert (x.key, x.score, x.alternatives) == ("otto van deren", EXACT, ("Otto van Deren",))
    res = metaqa.retrieve("which films did Otto van Deren direct", "metaqa")
    assert "'Otto van Deren' -> Otto van Deren (1.0) [also matched: otto van deren]" in res.seeds_line()


def test_a_question_naming_nothing_falls_back_to_vector_seeds_and_says_so(metaqa):
    res = metaqa.retrieve("what is the meaning of all this", "metaqa")
    assert res.seeds is Seeds.VECTOR and res.linked == () and res.nodes
    assert "no entity linked in the question" in res.seeds_line()


def test_linking_off_and_entity_given_override_it(metaqa):
    res = metaqa.retrieve("what films did Ilse Varga act in", "metaqa", params=RetrievalParams(link=False))
    assert res.seeds is Seeds.VECTOR and res.linked == () and "linking is off" in res.seeds_line()
    res = metaqa.retrieve("what films did Ilse Varga act in", "metaqa", entities=["Salt Road"])
    assert res.seeds is Seeds.GIVEN and res.linked == () and [n.key for n in res.nodes if n.topic] == ["Salt Road"]


def test_brackets_are_hints(metaqa):
    res = metaqa.retrieve("who directed the Drama films starred by [Ilse Varga]", "metaqa")
    assert keys(res) == ["Ilse Varga"]  # 'Drama' is an entity too, but the bracket says which one
    res = metaqa.retrieve("did [Nobody Known] direct Salt Road", "metaqa")
    assert keys(res) == ["Salt Road"]  # a hint that links nothing: the rest of the question is linked


def test_lucene_special_characters_do_not_break_the_query(metaqa):
    q = 'what about "Salt Road" + Glass Orchard: (1938)~ \\ / ^ ! && || *? AND OR NOT {x}'
    res = metaqa.retrieve(q, "metaqa")
    assert keys(res) == ["Salt Road", "Glass Orchard", "1938"]


def test_ask_shows_linked_entities_and_no_link_turns_linking_off(metaqa, server, monkeypatch):
    monkeypatch.setenv("GR_NEO4J_HOME", str(server.home))
    base = ["ask", "which films did Otto van Deren direct", "-d", "metaqa", "--no-answer", "--no-record"]
    out = runner.invoke(app, [*base, "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["seeds"] == "linked" and result["parameters"]["link"] is True
    (x,) = result["linked"]
    assert (x["key"], x["span"], x["alternatives"]) == ("Otto van Deren", [16, 30], ["otto van deren"])
    out = runner.invoke(app, base)
    assert out.exit_code == 0 and "also matched: otto van deren" in " ".join(out.output.split())
    out = runner.invoke(app, [*base, "--no-link", "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["seeds"] == "vector" and result["linked"] == [] and result["parameters"]["link"] is False


def test_eval_retrieval_asks_as_typed_and_reports_linking(metaqa, server, monkeypatch, tmp_path):
    # As typed: brackets removed and no TOPIC links, so the linker finds the topics and is scored
    # against them; --oracle-topic gives the stored topics instead and has no linking figures.
    monkeypatch.setenv("GR_NEO4J_HOME", str(server.home))
    typed, oracle = tmp_path / "typed.json", tmp_path / "oracle.json"
    base = ["eval-retrieval", "-d", "metaqa", "--hops", "1", "--limit", "20", "--mode", "paths", "--mode", "whole"]
    out = runner.invoke(app, [*base, "--json-out", str(typed)])
    assert out.exit_code == 0, out.output
    assert "Entity linking" in out.output
    report = json.loads(typed.read_text())
    fig = report["hops"]["1"]
    assert report["questions"] == "as typed" and set(fig["modes"]) == {"paths", "whole"}
    assert fig["linking"]["recall"] >= 0.9 and fig["linking"]["precision"] >= 0.9
    assert 0 < fig["modes"]["paths"]["all_answers_recall"] <= fig["modes"]["paths"]["answer_recall"] <= fig["ceiling"]
    assert fig["path_ceiling"] == {"covered": 1.0, "exact": 1.0} and "Ceilings" in out.output
    assert fig["modes"]["paths"]["graph_hit_at_1"] >= 0.6 and fig["modes"]["whole"]["graph_hit_at_1"] is None
    assert 0.3 < fig["modes"]["paths"]["graph_answer_f1"] <= 1.0
    out = runner.invoke(app, [*base, "--oracle-topic", "--no-ceilings", "--json-out", str(oracle)])
    assert out.exit_code == 0, out.output
    report = json.loads(oracle.read_text())
    assert report["questions"] == "oracle topic" and report["hops"]["1"]["linking"] is None
    assert report["hops"]["1"]["path_ceiling"] is None and "Ceilings" not in out.output
    assert "Entity linking" not in out.output
    # Spread over the questions after the first one instead of the first ones.
    out = runner.invoke(app, [*base[:6], "2", "--mode", "paths", "--no-ceilings", "--spread-after", "1", "--json-out", str(oracle)])
    assert out.exit_code == 0, out.output
    report = json.loads(oracle.read_text())
    assert report["spread_after"] == 1 and report["hops"]["1"]["questions"] == 2


def test_path_ceilings_follow_one_relation_chain_over_the_whole_graph(metaqa):
    from gr_neo4j.retrieval.ceiling import PathCeiling, path_ceiling

    starred = "metaqa|2-hop/dev/1"  # who directed the films starred by [Ilse Varga]
    assert metaqa.conn.read("retrieval_questions", dataset="metaqa", split=None, hops=2, limit=1, skip=0)[0]["uid"] == starred
    # Two relations (starred actors, then directed by) give exactly both directors; one relation gives neither.
    assert path_ceiling(metaqa.conn, [starred], 2) == PathCeiling(1, 1.0, 1.0)
    assert path_ceiling(metaqa.conn, [starred], 1).covered == 0.0


def test_train_paths_stores_a_ranker_that_retrieval_uses_unless_switched_off(metaqa, server, monkeypatch):
    # Kept last in this module: the ranker it stores changes how this dataset's paths are ranked.
    from gr_neo4j.retrieval.paths.hops import NGRAM_BUCKETS
    from gr_neo4j.retrieval.paths.ranker import load_ranker

    monkeypatch.setenv("GR_NEO4J_HOME", str(server.home))
    base = ["train-paths", "-d", "metaqa", "--hops", "1,2", "--skip", "0", "--limit", "10", "--epochs", "3", "--json"]
    out = runner.invoke(app, [*base, "--dry-run"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    # The 1-hop questions are walked again two deep: asked with more hops than they need.
    assert report["questions"] == {"1": 3, "1 in 2": 3, "2": 2} and report["saved"] is False
    assert load_ranker(metaqa.conn, "metaqa") is None
    out = runner.invoke(app, base)
    assert out.exit_code == 0, out.output
    ranker = load_ranker(metaqa.conn, "metaqa")
    assert ranker is not None and ranker.embedder == metaqa.embedder.name
    assert ranker.weight.shape == (metaqa.embedder.dimension,) * 2 and ranker.report["skip"] == 0
    assert ranker.step_rel.shape[:2] == (2, 2) and ranker.length_q.shape == (2, metaqa.embedder.dimension)
    assert ranker.hops_q.shape == (2, metaqa.embedder.dimension + NGRAM_BUCKETS) and ranker.hops_bias.shape == (2,)
    assert set(report["hop_accuracy"]) == {"1", "1 in 2", "2"}
    # The floor under which an unasked path is no answer: a low quantile of held-out best scores.
    assert isinstance(report["answer_floor"], float) and ranker.answer_floor == report["answer_floor"]
    metaqa.rankers.clear()
    assert metaqa.path_scorer("metaqa").ranker is not None and metaqa.path_scorer("metaqa", learned=False).ranker is None
    result = metaqa.retrieve("what films did Ilse Varga act in", "metaqa", params=RetrievalParams(hops=1))
    assert {"Velvet Harbor", "Glass Orchard", "Salt Road"} <= {n.key for n in result.nodes}
    assert result.parameters["path_ranker"] is True
    # Left to the question, the depth is the hop model's most likely; switched off, read zero-shot.
    result = metaqa.retrieve("what films did Ilse Varga act in", "metaqa")
    p = result.hop_probabilities
    assert len(p) == 2 and abs(sum(p) - 1) < 1e-3 and result.parameters["hops"] == 1 + max(range(2), key=p.__getitem__)
    assert result.hops_line().startswith(f"Hops: {result.parameters['hops']}, predicted")
    assert "hop_probabilities" in result.to_json()
    result = metaqa.retrieve("what films did Ilse Varga act in", "metaqa", params=RetrievalParams(path_ranker=False))
    assert result.hop_probabilities == () and result.parameters["hops"] == 1 and result.depth == 1
    # The hop model alone is refitted from every question, the path weights kept.
    before = load_ranker(metaqa.conn, "metaqa")
    out = runner.invoke(app, ["train-paths", "-d", "metaqa", "--hops", "1,2", "--skip", "0", "--fit", "hop-model", "--json"])
    assert out.exit_code == 0, out.output
    refit = json.loads(out.stdout)
    counts = {str(h): len(metaqa.conn.read("retrieval_questions", dataset="metaqa", split=None, hops=h, limit=None, skip=0)) for h in (1, 2)}
    assert refit["questions"] == counts and refit["saved"] is True
    after = load_ranker(metaqa.conn, "metaqa")
    assert np.array_equal(after.weight, before.weight) and after.report["hop_model"]["questions"] == refit["questions"]
    assert after.hops_q.shape == before.hops_q.shape
    # The path plan alone is fitted from retrieved questions and kept with the ranker.
    out = runner.invoke(app, ["train-paths", "-d", "metaqa", "--hops", "1,2", "--skip", "0", "--fit", "path-plan", "--json"])
    assert out.exit_code == 0, out.output
    plan_report = json.loads(out.stdout)
    assert set(plan_report["top1_planned"]) == {"1", "2"} and plan_report["saved"] is True
    planned = load_ranker(metaqa.conn, "metaqa")
    assert planned.plan is not None and planned.plan.strength == plan_report["plan_strength"]
    assert isinstance(planned.answer_floor, float)  # recomputed: the plan moves the scores
    assert np.array_equal(planned.weight, before.weight) and np.array_equal(planned.hops_q, after.hops_q)
    assert all(len(p) in (1, 2) for p in planned.plan.paths)
    metaqa.rankers.clear()
    result = metaqa.retrieve("what films did Ilse Varga act in", "metaqa", params=RetrievalParams(hops=1))
    assert {"Velvet Harbor", "Glass Orchard", "Salt Road"} <= {n.key for n in result.nodes}
    # The trained ranker plans the fetch too, at the depth its hop model predicts.
    for question in ("what films did Ilse Varga act in", "who directed the films starred by Ilse Varga"):
        f = metaqa.fetch(question, "metaqa")
        assert f.hop_probabilities and not f.read_depth and f.plan is not None and f.plan.depth <= f.params.hops
        answers_as_a_whole_fetch(metaqa, monkeypatch, f, RetrievalParams())
    out = runner.invoke(app, ["train-paths", "-d", "metaqa", "--skip", "100"])
    assert out.exit_code == 1 and "no questions with hops = 1 after the first 100" in out.output
    # A refit with nothing to learn from stops before it replaces the stored plan.
    out = runner.invoke(app, ["train-paths", "-d", "metaqa", "--skip", "100", "--fit", "path-plan"])
    assert out.exit_code == 1 and "no questions with hops = 1 after the first 100" in out.output
    assert "Traceback" not in out.output and load_ranker(metaqa.conn, "metaqa").plan is not None
    metaqa.conn.run_autocommit("MATCH (d:Dataset {name: 'metaqa'}) REMOVE d.path_ranker_weight")
    metaqa.rankers.clear()


@pytest.mark.parametrize(
    "question, best, depth",
    [("what films did Ilse Varga act in", (("starred actors", True),), 1),
     ("who directed the films starred by Ilse Varga", (("starred actors", True), ("directed by", False)), 2)],
)
def test_a_zero_shot_fetch_follows_its_plan_and_answers_as_a_full_one(metaqa, monkeypatch, question, best, depth):
    params = RetrievalParams(path_ranker=False)
    f = metaqa.fetch(question, "metaqa", params=params)
    assert f.plan.paths[0] == best and f.params.hops == f.plan.depth == depth and f.read_depth
    assert f.topic_steps == {("starred actors", True)}  # Ilse Varga's only relation
    whole = answers_as_a_whole_fetch(metaqa, monkeypatch, f, params)
    assert whole.params.hops == MAX_HOPS and metaqa.choose(f).path == best


def answers_as_a_whole_fetch(metaqa, monkeypatch, f, params):
    """Check that planned fetch ``f`` answers as the unplanned one (returned) does, from fewer candidates."""
    planned = metaqa.choose(f)
    with monkeypatch.context() as m:
        m.setattr(metaqa, "plan", lambda *a, **k: None)  # the whole neighbourhood, as deep as the depth
        whole = metaqa.fetch(f.question, "metaqa", params=params)
    assert whole.plan is None and f.candidates.num_nodes < whole.candidates.num_nodes
    full = metaqa.choose(whole)
    # The same answers; their order may differ, as fewer paths of the full fetch lead to each.
    answers = {planned.nodes[i].key for i in planned.graph_answers}
    assert answers and answers == {full.nodes[i].key for i in full.graph_answers} and planned.path == full.path
    assert planned.not_in_graph == full.not_in_graph
    return whole


@pytest.mark.parametrize("key", [END_TYPES_FACT, "step_schema"])
def test_derived_facts_are_kept_on_the_dataset_until_its_next_load(metaqa, key):
    from gr_neo4j.retrieval.candidates import Neo4jSource

    texts = metaqa.vocab("metaqa").texts

    def derive(source):
        return source.end_types("metaqa", texts) if key == END_TYPES_FACT else source.step_schema("metaqa").follows

    first = derive(Neo4jSource(metaqa.conn))
    assert first and Neo4jSource(metaqa.conn).fact("metaqa", key)[0] is not None
    # Another process (a fresh source) reads them instead of scanning the relationships again.
    fresh = derive(Neo4jSource(metaqa.conn))
    assert fresh.keys() == first.keys()
    if key == END_TYPES_FACT:
        assert all(np.allclose(fresh[k].vector, first[k].vector, atol=1e-5) and fresh[k].nodes == first[k].nodes for k in first)
    else:
        assert fresh == first and ("directed by", True) in first[("directed by", False)]  # a director's other films
    # A later load of the dataset makes them stale.
    metaqa.conn.driver.execute_query("MATCH (d:Dataset {name: 'metaqa'}) SET d.loaded_at = datetime()", database_=metaqa.conn.database)
    assert Neo4jSource(metaqa.conn).fact("metaqa", key)[0] is None
