"""Support paths: from a topic entity to each answer item, inside the retrieved subgraph."""

from __future__ import annotations

from gr_neo4j.retrieval.result import RetrievalResult, RetrievedEdge, RetrievedNode, Timings
from gr_neo4j.retrieval.support import supported_answers

NODES = [("Tom Hanks", True), ("Forrest Gump", False), ("Robert Zemeckis", True), ("Cast Away", False), ("Big", False), ("1994", False)]
EDGES = [(1, "starred actors", 0), (1, "directed by", 2), (3, "starred actors", 0), (1, "release year", 5)]


def result() -> RetrievalResult:
    nodes = [RetrievedNode(f"n{i}", text, text, 0.0, topic) for i, (text, topic) in enumerate(NODES)]
    edges = [RetrievedEdge(f"e{k}", s, d, rel, 0.0) for k, (s, rel, d) in enumerate(EDGES)]
    return RetrievalResult("q", "metaqa", None, "paths", {}, nodes, edges, "", None, Timings(0, 0, 0, 0))


def test_each_item_gets_its_node_and_shortest_path_from_a_topic():
    got = {a.text: a for a in supported_answers(result(), "Forrest Gump|cast away|1994")}
    # Both named entities reach Forrest Gump: the path runs from one through it to the other.
    assert got["Forrest Gump"].key == "Forrest Gump" and len(got["Forrest Gump"].path) == 2
    assert got["Forrest Gump"].line() == "Tom Hanks <-starred actors- Forrest Gump -directed by-> Robert Zemeckis"
    # Robert Zemeckis reaches Cast Away only through Tom Hanks: one path, from Tom Hanks.
    assert got["cast away"].line() == "Tom Hanks <-starred actors- Cast Away"  # matched after normalisation
    assert [s.relation for s in got["1994"].path][-1] == "release year" and len(got["1994"].path) == 2
    assert got["1994"].line().endswith("-release year-> 1994")


def test_items_naming_no_node_or_no_path_say_so():
    got = supported_answers(result(), "Big|Steven Spielberg|not in the graph|Tom Hanks")
    assert [(a.text, a.key, a.path) for a in got] == [
        ("Big", "Big", ()), ("Steven Spielberg", None, ()), ("not in the graph", None, ()), ("Tom Hanks", "Tom Hanks", ())]
    assert got[1].line() == "Steven Spielberg (names no node of the subgraph)" and got[0].line() == "Big"


def test_graph_answers_carry_their_scores_into_the_answer_lines():
    from dataclasses import replace

    scored = replace(result(), graph_answers=(1, 3), graph_answer_scores=(0.97, 0.4))
    got = {a.text: a for a in supported_answers(scored, "Forrest Gump|Cast Away|1994")}
    assert (got["Forrest Gump"].score, got["Cast Away"].score, got["1994"].score) == (0.97, 0.4, None)
    assert got["Forrest Gump"].line().startswith("Tom Hanks <-starred actors- Forrest Gump")  # the score is a field of its own


def test_of_two_nodes_with_the_answers_text_the_path_goes_to_the_graphs_answer():
    from dataclasses import replace

    base = result()
    # Forrest Gump's genre "Drama" and its tag "drama": two nodes, one text once normalised.
    nodes = [*base.nodes, RetrievedNode("n6", "drama", "drama", 0.0, False), RetrievedNode("n7", "Drama", "Drama", 0.0, False)]
    edges = [*base.edges, RetrievedEdge("e4", 1, 6, "has tags", 0.0), RetrievedEdge("e5", 1, 7, "has genre", 0.0)]
    (got,) = supported_answers(replace(base, nodes=nodes, edges=edges, graph_answers=(7,), graph_answer_scores=(1.0,)), "Drama")
    assert got.key == "Drama" and got.line().endswith("-has genre-> Drama") and got.score == 1.0
    (tag,) = supported_answers(replace(base, nodes=nodes, edges=edges), "Drama")  # no graph answer: the nearest, the first
    assert tag.key == "drama"


def test_a_title_with_a_comma_keeps_its_node_and_path():
    from dataclasses import replace

    base = result()
    nodes = [*base.nodes, RetrievedNode("n6", "Lust, Caution", "Lust, Caution", 0.0, False)]
    edges = [*base.edges, RetrievedEdge("e4", 6, 0, "starred actors", 0.0)]
    (got,) = supported_answers(replace(base, nodes=nodes, edges=edges), "Lust, Caution")
    assert got.key == "Lust, Caution" and got.line() == "Tom Hanks <-starred actors- Lust, Caution"
