"""`load neo4j`: a graph already in the database, adopted as it stands (Neo4j's own Movies graph,
created from the installed Browser jar), asked, re-adopted and dropped, never modified."""

from __future__ import annotations

import pytest
from gr_neo4j.loaders.neo4j_graph import user_graph_checksum
from typer.testing import CliRunner

from gr_neo4j.cli import app
from gr_neo4j.errors import GrNeo4jError
from gr_neo4j.examples import create_example
from gr_neo4j.ingest.pipeline import load_dataset
from gr_neo4j.ingest.source import DatabaseSource
from gr_neo4j.ingest.stats import drop_dataset
from gr_neo4j.retrieval import Retriever

runner = CliRunner()


@pytest.fixture()
def movies(server, conn):
    created = create_example(server, "movies")
    assert (created.nodes, created.relationships) == (171, 253)
    return conn




def adopt(server, **options):
    return load_dataset(server, "neo4j", path=DatabaseSource(server, **options), as_name="movies")


def relation_texts(conn) -> set[str]:
    return {r["t"] for r in conn.query("MATCH ()-[r:REL {dataset: 'movies'}]->() RETURN DISTINCT r.text AS t")}


def test_the_movies_graph_is_adopted_whole_and_never_modified(movies, server):
    before = user_graph_checksum(movies)
    report = adopt(server)
    assert report.kind == "knowledge-graph" and report.skipped == 0
    # Every label, relationship type and property is there: types as words, properties as relations.
    assert relation_texts(movies) == {"acted in", "directed", "produced", "wrote", "reviewed", "follows",
                                      "released", "tagline", "born", "roles", "summary", "rating"}
    texts = {r["t"] for r in movies.query("MATCH (n:Entity {dataset: 'movies'}) RETURN n.text AS t")}
    assert {"The Matrix", "Keanu Reeves", "Neo", "1999", "Welcome to the Real World"} <= texts
    assert user_graph_checksum(movies) == before
    again = adopt(server)
    assert again.written_entities == 0 and again.written_relationships == 0 and user_graph_checksum(movies) == before
    drop_dataset(server, "movies")
    assert user_graph_checksum(movies) == before
    assert movies.query("MATCH (n:Entity {dataset: 'movies'}) RETURN count(n) AS n")[0]["n"] == 0


def test_a_re_adoption_follows_the_source(movies, server):
    adopt(server)
    movies.query("MATCH (p:Person {name: 'Keanu Reeves'}) DETACH DELETE p")
    movies.query("MATCH (m:Movie {title: 'The Matrix'}) SET m.tagline = 'There is no spoon'")
    movies.query("CREATE (:Person {name: 'Ada Lovelace', born: 1815})-[:WROTE]->(:Movie {title: 'Notes on the Engine', released: 1843})")
    adopt(server)
    texts = {r["t"] for r in movies.query("MATCH (n:Entity {dataset: 'movies'}) RETURN n.text AS t")}
    assert {"Ada Lovelace", "Notes on the Engine", "1843", "There is no spoon"} <= texts
    assert "Keanu Reeves" not in texts and "Welcome to the Real World" not in texts


def test_a_re_adoption_removes_relations_the_source_no_longer_has_at_all(movies, server):
    adopt(server, labels=("Person",))
    assert relation_texts(movies) == {"born", "follows"}
    movies.query("MATCH (:Person)-[r:FOLLOWS]->(:Person) DELETE r")
    movies.query("MATCH (p:Person) REMOVE p.born")
    adopt(server, labels=("Person",))
    assert relation_texts(movies) == set()


def test_ask_answers_from_the_adopted_graph(movies, server):
    adopt(server)
    with Retriever(server) as r:
        def answers(question):
            res = r.retrieve(question, "movies")
            return {res.nodes[i].text for i in res.graph_answers}, res.not_in_graph

        assert answers("who directed The Matrix") == ({"Lana Wachowski", "Lilly Wachowski"}, None)
        assert answers("when was The Matrix released") == ({"1999"}, None)
        assert answers("what role did Keanu Reeves play in The Matrix") == ({"Neo"}, None)
        got, why = answers("what is the capital of France")
        assert not got and why is not None


@pytest.mark.parametrize(("setup", "options", "message"), [
    (None, {"labels": ("Film",)}, "--labels: no label 'Film' in the database"),
    (None, {"types": ("STARRED_IN",)}, "--relationship-types: no relationship type 'STARRED_IN'"),
    (None, {"text": {"Person": "nickname"}}, "--text Person=nickname: no Person node has a property 'nickname'"),
    ("CREATE (:Gadget {weight: 3})", {}, "label 'Gadget' (1 node) has no text property"),
    ("MATCH (a:Person {name: 'Keanu Reeves'}), (b:Person {name: 'Carrie-Anne Moss'}) CREATE (a)-[:`!!`]->(b)", {},
     "relationship type '!!' has no letter or digit"),
    ("MATCH (m:Movie {title: 'The Matrix'}) SET m.notes = $big", {}, "property 'notes': text too long"),
])
def test_bad_input_is_one_line_and_nothing_is_written(movies, server, setup, options, message):
    if setup:
        movies.query(setup, {"big": "x" * (1 << 20)})
    before = user_graph_checksum(movies)
    with pytest.raises(GrNeo4jError) as err:
        adopt(server, **options)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert movies.query("MATCH (n:Entity) RETURN count(n) AS n")[0]["n"] == 0
    assert movies.query("MATCH (d:Dataset) RETURN count(d) AS n")[0]["n"] == 0
    assert user_graph_checksum(movies) == before


def test_a_long_value_keeps_its_text_under_a_short_key(movies, server):
    plot = "A hacker learns the truth about his world. " * 250  # 10.75 KB: over a key's 8 KB, under a text's 16 KB
    movies.query("MATCH (m:Movie {title: 'The Matrix'}) SET m.plot = $plot", {"plot": plot})
    adopt(server)
    (row,) = movies.query("MATCH (:Entity {dataset: 'movies', text: 'The Matrix'})-[:REL {text: 'plot'}]->(v) RETURN v.key AS key, v.text AS text")
    assert row["text"] == plot.strip() and len(row["key"].encode()) < 200


def test_load_neo4j_from_the_cli(movies, server, env):
    out = runner.invoke(app, ["load", "neo4j", "--name", "movies", "--labels", "Movie,Person", "--relationship-types", "DIRECTED",
                              "--text", "Movie=title"], env=env)
    assert out.exit_code == 0, out.output
    assert relation_texts(movies) == {"directed", "released", "tagline", "born"}
    out = runner.invoke(app, ["load", "neo4j", "--path", "x.tsv"], env=env)
    assert out.exit_code != 0 and "--path" in out.output
    out = runner.invoke(app, ["load", "neo4j", "--limit", "5"], env=env)
    assert out.exit_code != 0 and "--limit does not apply to neo4j" in out.output


def test_a_small_dataset_answers_alike_beside_a_large_one(movies, server, tmp_path):
    # The vector indexes span every dataset: a larger one whose texts sit where the questions are
    # must not take the small one's seeds.
    adopt(server)
    questions = ["who directed The Matrix", "when was Tom Hanks born", "tell me about films with Keanu Reeves", "which movies are about robots"]

    def retrieved(r):
        out = []
        for q in questions:
            res = r.retrieve(q, "movies")
            out.append((sorted(n.key for n in res.nodes), [res.nodes[i].key for i in res.graph_answers], res.not_in_graph))
        return out

    with Retriever(server) as r:
        alone = retrieved(r)
    crowd = tmp_path / "crowd.tsv"
    crowd.write_text("".join(f"{q} {i}\tis like\t{q} ({i})\n" for q in questions for i in range(60)))
    load_dataset(server, "triples", path=crowd, as_name="crowd")
    with Retriever(server) as r:
        assert retrieved(r) == alone
