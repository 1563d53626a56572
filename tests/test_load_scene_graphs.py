"""GQA scene graphs loader: G-Retriever's object texts, relations as edges, questions per image."""

from __future__ import annotations

from conftest import FIXTURES
from gr_neo4j.loaders.scene_graphs import node_text
from test_load_support import counts, tiny_embedder, vector_sizes

from gr_neo4j.ingest import load_dataset
from gr_neo4j.ingest.split import split_of_groups


def test_node_text_is_g_retrievers():
    obj = {"name": "chair", "x": 10, "y": 120, "w": 60, "h": 90, "attributes": ["wooden", "brown"]}
    assert node_text(obj) == "name: chair; attribute: wooden, brown; (x,y,w,h): (10, 120, 60, 90)"
    assert node_text({**obj, "attributes": []}) == "name: chair; (x,y,w,h): (10, 120, 60, 90)"


def _check_loaded(conn, report):
    # only the two images that questions ask about are loaded; the third has no question
    assert (report.input_graphs, report.input_entities, report.input_relationships, report.input_questions) == (2, 5, 4, 3)
    c = counts(conn, "scene_graphs")
    assert c == {
        "entities": 5, "entity_vectors": 5, "rels": 4, "rel_vectors": 4, "graphs": 2, "questions": 3,
        "topic_links": 0, "answer_links": 0, "graph_links": 3, "dataset_nodes": 1,
    }
    assert vector_sizes(conn, "scene_graphs") == {384}
    nodes = conn.query("MATCH (n:Entity {dataset: 'scene_graphs', graph: '2407890'}) RETURN n.idx AS i, n.text AS t ORDER BY i")
    assert [r["t"] for r in nodes] == [
        "name: chair; attribute: wooden, brown; (x,y,w,h): (10, 120, 60, 90)",
        "name: table; (x,y,w,h): (90, 140, 120, 70)",
        "name: lamp; attribute: white; (x,y,w,h): (230, 30, 40, 110)",
    ]
    edges = conn.query(
        "MATCH (h:Entity {graph: '2407890'})-[r:REL {dataset: 'scene_graphs'}]->(t) RETURN h.idx AS h, r.text AS r, t.idx AS t ORDER BY h, t"
    )
    assert [(e["h"], e["r"], e["t"]) for e in edges] == [(0, "to the left of", 1), (0, "near", 2), (1, "to the right of", 0)]
    g = conn.query("MATCH (g:Graph {uid: 'scene_graphs|2354786'}) RETURN g.image_id AS id, g.width AS w, g.height AS h")[0]
    assert (g["id"], g["w"], g["h"]) == ("2354786", 640, 480)
    splits = split_of_groups(["2407890", "2407890", "2354786"])
    q = conn.query(
        "MATCH (q:Question {dataset: 'scene_graphs'})-[:ON_GRAPH]->(g:Graph) WHERE q.text = 'What is the dog on?' "
        "RETURN q.answers AS a, q.full_answer AS fa, q.split AS s, g.graph AS g"
    )[0]
    assert (q["a"], q["fa"], q["g"], q["s"]) == (["grass"], "The dog is on the grass.", "2354786", splits["2354786"])


def test_gqa_json_questions(server, conn):
    report = load_dataset(server, "scene_graphs", path=FIXTURES / "scene_graphs", embedder=tiny_embedder())
    _check_loaded(conn, report)
    assert conn.query("MATCH (q:Question {uid: 'scene_graphs|10592865'}) RETURN q.id AS id")[0]["id"] == "10592865"


def test_g_retriever_questions_csv(server, conn):
    report = load_dataset(server, "scene_graphs", path=FIXTURES / "scene_graphs_csv", embedder=tiny_embedder())
    _check_loaded(conn, report)
    # without an id column the question id is the row number, like G-Retriever's DataFrame index
    assert conn.query("MATCH (q:Question {uid: 'scene_graphs|2'}) RETURN q.text AS t")[0]["t"] == "What is the dog on?"


def test_scene_graph_file_without_questions_loads_every_image(server, conn):
    report = load_dataset(server, "scene_graphs", path=FIXTURES / "scene_graphs" / "train_sceneGraphs.json", embedder=tiny_embedder())
    assert (report.input_graphs, report.input_entities, report.input_questions) == (3, 6, 0)
