"""Cypher candidates on a fixture graph written with Cypher (hand-chosen 384-d unit vectors)."""

from __future__ import annotations

import numpy as np
import pytest
from neo4j.exceptions import ClientError

from gr_neo4j.cypher_store import statement
from gr_neo4j.retrieval import CandidateLimits, Retriever
from gr_neo4j.retrieval.candidates import graph_candidates, kg_candidates, load_vocab
from gr_neo4j.schema import init_schema

DIM = 384


def e(i: int, *mix: tuple[int, float]) -> list[float]:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    for j, w in mix:
        v[j] = w
    return (v / np.linalg.norm(v)).tolist()


Q = np.array(e(0), dtype=np.float32)  # the question vector

# (key, embedding) of the knowledge graph 'kg'; 'other' has its own nodes just as similar to Q.
NODES = [
    ("alpha", e(0)),  # the most similar entity
    ("beta", e(0, (1, 1.33))),  # second most similar, no edges
    ("a1", e(3)), ("a2", e(4)), ("a3", e(5)),  # chain alpha -> a1 -> a2 -> a3
    ("x1", e(6)), ("x2", e(7)),  # joined by the relationship most similar to Q
    ("t", e(8)), ("t1", e(9)), ("t2", e(10)),  # a topic entity and its chain t -> t1 -> t2
    ("h", e(11)),  # a hub: h -> leaf0..leaf9
    ("m", e(40)), ("g1", e(41)), ("g2", e(42)), ("b1", e(43)), ("b2", e(44)),  # m -good-> g1 -r-> g2, m -bad-> b1 -r-> b2
] + [(f"leaf{i}", e(12 + i)) for i in range(10)]
RELS = [
    ("alpha", "r", "a1", e(30)), ("a1", "r", "a2", e(30)), ("a2", "r", "a3", e(30)),
    ("x1", "best", "x2", e(0)),
    ("t", "r", "t1", e(30)), ("t1", "r", "t2", e(30)),
    ("m", "good", "g1", e(0, (33, 1.0))), ("m", "bad", "b1", e(34)), ("g1", "r", "g2", e(30)), ("b1", "r", "b2", e(30)),
] + [("h", "has", f"leaf{i}", e(32)) for i in range(10)]

LOAD = """
MERGE (d:Dataset {name: $dataset}) SET d.kind = 'knowledge-graph', d.dimension = 384
WITH d
UNWIND $nodes AS n
CREATE (:Entity {uid: $dataset + '||' + n[0], dataset: $dataset, graph: '', key: n[0], text: n[0], embedding: n[1]})
WITH count(*) AS done
UNWIND $rels AS r
MATCH (h:Entity {uid: $dataset + '||' + r[0]}), (t:Entity {uid: $dataset + '||' + r[2]})
CREATE (h)-[:REL {uid: $dataset + '||' + r[0] + '|' + r[1] + '|' + r[2], dataset: $dataset, graph: '', text: r[1], embedding: r[3]}]->(t)
"""


@pytest.fixture()
def kg(conn):
    init_schema(conn, DIM)
    for dataset in ("kg", "other"):
        nodes = [[k, v] for k, v in NODES] if dataset == "kg" else [["alpha", e(0)], ["omega", e(50)]]
        rels = [[h, r, t, v] for h, r, t, v in RELS] if dataset == "kg" else [["alpha", "best", "omega", e(0)]]
        conn.query(LOAD, {"dataset": dataset, "nodes": nodes, "rels": rels})
    conn.query("CALL db.awaitIndexes(60)")
    return conn


def fetch(conn, hops=2, topics=(), dataset="kg", allowed=None, **limits):
    lim = CandidateLimits(**{"topk_nodes": 1, "topk_edges": 1, **limits})
    vocab = conn.read_tx(lambda tx: load_vocab(tx, dataset))
    return conn.read_tx(lambda tx: kg_candidates(tx, dataset, Q, hops, lim, vocab, [f"{dataset}||{t}" for t in topics], allowed=allowed))


def triples(c):
    return {(c.node_keys[h], c.edge_texts[i], c.node_keys[t]) for i, (h, t) in enumerate(c.edge_index.T)}


def test_top_k_seeds_and_two_hops_exactly(kg):
    c = fetch(kg, hops=2)
    assert set(c.node_keys) == {"alpha", "x1", "x2", "a1", "a2"}  # a3 is 3 hops away; nothing of 'other'
    assert triples(c) == {("alpha", "r", "a1"), ("a1", "r", "a2"), ("x1", "best", "x2")}
    # No embeddings travel: each node's cosine to Q, and relation vectors from the client's vocabulary.
    assert c.x is None and c.edge_attr.shape == (3, DIM)
    np.testing.assert_allclose(c.node_sim[c.node_keys.index("alpha")], 1.0, atol=1e-5)
    np.testing.assert_allclose(c.node_sim[c.node_keys.index("a1")], 0.0, atol=1e-5)
    np.testing.assert_allclose(c.edge_attr[c.edge_texts.index("best")], Q, atol=1e-6)
    assert sorted(c.rel_texts) == ["bad", "best", "good", "has", "r"]
    assert c.topic.tolist() == []


def test_one_hop_and_more_top_nodes(kg):
    c = fetch(kg, hops=1, topk_nodes=2)
    assert set(c.node_keys) == {"alpha", "beta", "x1", "x2", "a1"}
    assert triples(c) == {("alpha", "r", "a1"), ("x1", "best", "x2")}


def test_topic_entities_are_expanded_and_marked(kg):
    c = fetch(kg, hops=2, topics=["t"])
    assert {"t", "t1", "t2"} <= set(c.node_keys)
    assert {("t", "r", "t1"), ("t1", "r", "t2")} <= triples(c)
    assert [c.node_keys[i] for i in c.topic] == ["t"]


def test_fanout_cap_per_node(kg):
    c = fetch(kg, hops=1, topics=["h"], fanout=3)
    assert sum(k.startswith("leaf") for k in c.node_keys) == 3


def test_node_and_edge_caps_are_exact_and_topics_are_expanded_before_vector_hits(kg):
    # seeds h (topic), alpha, x1, x2 (vector hits): 4 nodes, so max_nodes=6 leaves room for 2 rows,
    # both from the topic's relationships; alpha's neighbour a1 is cut.
    c = fetch(kg, hops=2, topics=["h"], max_nodes=6)
    assert c.num_nodes == 6
    assert sum(k.startswith("leaf") for k in c.node_keys) == 2 and "a1" not in c.node_keys
    c = fetch(kg, hops=2, topics=["h"], max_edges=3)
    assert c.num_edges == 3 and "a1" not in c.node_keys
    c = fetch(kg, hops=2, topics=["h"], max_nodes=100, max_edges=100)
    assert sum(k.startswith("leaf") for k in c.node_keys) == 10 and {"a1", "a2"} <= set(c.node_keys)


def test_hub_detours_come_last(kg):
    # h has 10 relationships > fanout 5: a hub, expanded after the topic t although both are topics.
    # Edge budget 3 = the vector hit (x1 best x2) + 2 rows: t -> t1, then one leaf of h.
    c = fetch(kg, hops=1, topics=["h", "t"], fanout=5, max_edges=3)
    assert ("t", "r", "t1") in triples(c)
    assert sum(k.startswith("leaf") for k in c.node_keys) == 1 and "a1" not in c.node_keys


def test_walks_through_relations_like_the_question_are_expanded_first(kg):
    # m -good-> g1 (good is similar to Q: cos 0.71) and m -bad-> b1 (cos 0). Edge budget 8 = the
    # vector hit + the 5 rows of hop 1 (m's two, then alpha's, x1's and x2's) + 2 rows at hop 2:
    # g1 is expanded before b1 (its two rows: back to m, on to g2), so b1 -> b2 is cut.
    c = fetch(kg, hops=2, topics=["m"], max_edges=8)
    assert triples(c) == {("x1", "best", "x2"), ("m", "good", "g1"), ("m", "bad", "b1"), ("alpha", "r", "a1"), ("g1", "r", "g2")}
    assert "b2" not in c.node_keys


def test_vector_hits_of_other_datasets_are_filtered_out(kg):
    c = fetch(kg, hops=1, dataset="other")
    assert set(c.node_keys) == {"alpha", "omega"}
    assert all(i.startswith("4:") or ":" in i for i in c.node_ids)


def test_per_sample_graph_in_index_order(conn):
    conn.query(
        """
        UNWIND $graphs AS g
        UNWIND range(0, 2) AS i
        CREATE (:Entity {uid: 'eg|' + g + '|' + i, dataset: 'eg', graph: g, key: toString(i), idx: i,
                         text: 'n' + g + i, embedding: [1.0, 0.0]})
        """,
        {"graphs": ["7", "8"]},
    )
    conn.query(
        """
        MATCH (a:Entity {dataset: 'eg'}), (b:Entity {dataset: 'eg'})
        WHERE a.graph = b.graph AND b.idx = a.idx + 1
        CREATE (b)-[:REL {dataset: 'eg', graph: a.graph, text: 'next', embedding: [0.0, 1.0]}]->(a)
        """
    )
    q = np.array([0.6, 0.8], dtype=np.float32)
    c = conn.read_tx(lambda tx: graph_candidates(tx, "eg", "7", q))
    assert c.node_texts == ["n70", "n71", "n72"] and c.node_idx == [0, 1, 2]
    assert c.edge_index.tolist() == [[1, 2], [0, 1]]
    np.testing.assert_allclose(c.node_sim, [0.6, 0.6, 0.6], rtol=1e-6)
    assert c.x.shape == (3, 2) and c.rel_texts == ["next"] and c.edge_attr.tolist() == [[0.0, 1.0], [0.0, 1.0]]
    assert conn.read_tx(lambda tx: graph_candidates(tx, "eg", "9", q)).num_nodes == 0


@pytest.mark.parametrize("name", ["retrieve_kg_candidates", "retrieve_path_ends", "retrieve_graph", "retrieval_datasets", "retrieval_node_embeddings", "retrieval_dump_rel_texts",
                                  "retrieval_step_schema", "retrieval_topic_steps", "retrieval_fact_get"])
def test_retrieval_statements_are_read_only(conn, name):
    summary = conn.driver.execute_query("EXPLAIN " + statement(name), database_=conn.database).summary
    assert summary.query_type == "r"


def test_retriever_transactions_refuse_writes(kg, server):
    with Retriever(server, conn=kg) as r:
        assert len(r.read(lambda tx: list(tx.run("MATCH (n:Entity) RETURN n LIMIT 1")))) == 1
        with pytest.raises(ClientError):
            r.read(lambda tx: tx.run("CREATE (:Intruder)").consume())
    assert kg.query("MATCH (n:Intruder) RETURN count(n) AS n")[0]["n"] == 0


@pytest.mark.parametrize(
    "hops, topics, limits",
    [(2, (), {}), (1, (), {"topk_nodes": 2}), (2, ("t",), {}), (2, ("h",), {"max_nodes": 14}), (3, ("h",), {"max_edges": 11}),
     (1, ("h", "t"), {"fanout": 5, "max_edges": 2}), (2, ("m",), {"max_edges": 8})],
)
def test_in_memory_baseline_builds_the_same_candidates(kg, hops, topics, limits):
    # (A cap that cuts through one node's relationships may keep other ones: Neo4j meets a node's
    # relationships in its own storage order. Caps here cut between nodes.)
    from gr_neo4j.retrieval.inmemory import InMemoryKG

    memory = InMemoryKG.from_neo4j(kg, "kg")
    assert len(memory.keys) == len(NODES) and len(memory.heads) == len(RELS)
    lim = CandidateLimits(**{"topk_nodes": 1, "topk_edges": 1, **limits})
    ours = memory.candidates(Q, hops, lim, topics)
    theirs = fetch(kg, hops, topics, **{"topk_nodes": 1, "topk_edges": 1, **limits})
    assert set(ours.node_keys) == set(theirs.node_keys)
    assert triples(ours) == triples(theirs)
    assert [ours.node_keys[i] for i in ours.topic] == [theirs.node_keys[i] for i in theirs.topic]


@pytest.mark.parametrize(
    "hops, topics, allowed, walked",
    [(2, ("m",), (("good",), ("r",)), {("m", "good", "g1"), ("g1", "r", "g2")}),
     (2, ("m",), (("good", "bad"), ("r",)), {("m", "good", "g1"), ("g1", "r", "g2"), ("m", "bad", "b1"), ("b1", "r", "b2")}),
     (2, ("m",), (("good",), ("nope",)), {("m", "good", "g1")}),
     (2, ("alpha",), (("r",), ("r",)), {("alpha", "r", "a1"), ("a1", "r", "a2")}),
     (1, ("h",), (("has",),), {("h", "has", f"leaf{i}") for i in range(10)})],
)
def test_a_planned_fetch_walks_from_the_topics_along_each_hops_texts(kg, hops, topics, allowed, walked):
    # Hop d follows only allowed[d], from the topics only: the vector hits (alpha, x1, x2) are kept
    # as found, not expanded, and one the topics' walks reach (alpha, a topic itself in the fourth
    # case) is expanded there; the top-k relationship is a seed, kept as found.
    from gr_neo4j.retrieval.inmemory import InMemoryKG

    theirs = fetch(kg, hops, topics, allowed=allowed)
    assert triples(theirs) == walked | {("x1", "best", "x2")}
    assert {"alpha", "x1", "x2"} <= set(theirs.node_keys)
    ours = InMemoryKG.from_neo4j(kg, "kg").candidates(Q, hops, CandidateLimits(topk_nodes=1, topk_edges=1), topics, allowed)
    assert triples(ours) == triples(theirs) and set(ours.node_keys) == set(theirs.node_keys)
    with pytest.raises(ValueError, match="allowed"):
        fetch(kg, hops + 1, topics, allowed=allowed)


def test_a_planned_fetch_keeps_the_node_cap_with_the_vector_hits_it_adds_after(kg):
    from gr_neo4j.retrieval.inmemory import InMemoryKG

    theirs = fetch(kg, 1, ("h",), allowed=(("has",),), max_nodes=8)
    assert theirs.num_nodes == 8 and {"h", "alpha", "x1", "x2"} <= set(theirs.node_keys)  # and 4 of the 10 leaves
    ours = InMemoryKG.from_neo4j(kg, "kg").candidates(Q, 1, CandidateLimits(topk_nodes=1, topk_edges=1, max_nodes=8), ("h",), (("has",),))
    assert ours.num_nodes == 8 and {"h", "alpha", "x1", "x2"} <= set(ours.node_keys)


def test_retriever_reads_after_execute_query_writes(kg, server):
    # The Retriever's read session takes the driver's execute_query bookmark manager, so its reads
    # wait for the writes made through execute_query (on a neo4j:// cluster a follower may lag).
    # Shown by what the server is sent: a bookmark it cannot parse, put into that manager, makes the
    # Retriever's read fail, while a session without the manager reads fine.
    from neo4j.exceptions import Neo4jError

    from gr_neo4j.connection import connect

    with connect(server) as fresh, Retriever(server, conn=fresh) as r:
        fresh.query("CREATE (:Written {n: 1})")  # through execute_query: the manager holds its bookmark
        manager = fresh.driver.execute_query_bookmark_manager
        assert manager.get_bookmarks()
        assert r.read(lambda tx: tx.run("MATCH (w:Written) RETURN count(w) AS n").single()["n"]) == 1
        r.close()  # a new session next: it takes the manager's bookmarks when it begins
        manager.update_bookmarks((), ["not-a-bookmark"])
        with pytest.raises(Neo4jError, match="(?i)bookmark"):
            r.read(lambda tx: tx.run("RETURN 1 AS one").single())
        with fresh.driver.session(database=fresh.database) as plain:
            assert plain.execute_read(lambda tx: tx.run("RETURN 1 AS one").single()["one"]) == 1
    kg.query("MATCH (w:Written) DELETE w")


@pytest.mark.parametrize("mode", ["whole", "reference", "triples", "kaping"])
def test_in_memory_source_through_the_same_retriever(kg, server, mode):
    # One pipeline, two backends: the same question through Retriever.retrieve with Neo4j and with
    # the in-memory graph as the candidate source gives the same subgraph.
    from gr_neo4j.retrieval import RetrievalParams
    from gr_neo4j.retrieval.inmemory import InMemoryKG

    params = RetrievalParams(mode=mode, hops=2, topk=1, topk_e=1)
    with Retriever(server, conn=kg) as neo:
        ours = neo.retrieve("q", "kg", entities=["t"], params=params, q=Q)
        with Retriever(server, conn=kg, embedder=neo.embedder, source=InMemoryKG.from_neo4j(kg, "kg")) as mem:
            theirs = mem.retrieve("q", "kg", entities=["t"], params=params, q=Q)
    assert ours.mode == theirs.mode == mode
    assert {n.key for n in ours.nodes} == {n.key for n in theirs.nodes}
    assert {(ours.nodes[e.src].key, e.text, ours.nodes[e.dst].key) for e in ours.edges} == {
        (theirs.nodes[e.src].key, e.text, theirs.nodes[e.dst].key) for e in theirs.edges
    }
    assert ours.data.x.shape == theirs.data.x.shape == (len(ours.nodes), DIM)


@pytest.mark.parametrize(
    "root, steps",
    [("h", [[("has", True)]]), ("leaf3", [[("has", False)]]), ("alpha", [[("r", True), ("r", True)], [("r", True)]]), ("a2", [[("r", True)], [("r", False), ("r", False)]]),
     ("h", [[("has", False)]]), ("t", [[("r", True), ("nope", True)]])],
)
def test_path_ends_follow_relation_texts_and_directions_exactly(kg, server, root, steps):
    # Neo4j and the in-memory graph follow the same steps to the same relationships; a step against
    # a relationship's direction, or with a text nobody has, reaches nothing.
    from gr_neo4j.retrieval.inmemory import InMemoryKG

    memory = InMemoryKG.from_neo4j(kg, "kg")
    with Retriever(server, conn=kg) as r:
        c = fetch(kg, 0, (root,))
        ours = r.neo4j.path_ends(c, np.asarray(c.topic), steps, Q, 100)
    m = memory.candidates(Q, 0, CandidateLimits(topk_nodes=1, topk_edges=1), (root,))
    theirs = memory.path_ends(m, np.asarray(m.topic), steps, Q, 100)
    assert triples(ours) == triples(theirs)
    expected = {
        ("h", "has", False): set(),
        # A walk that dies at its second step keeps its first (harmless: the selection keeps walks
        # along whole relation paths only).
        ("t", "r", True): {("t", "r", "t1")},
        ("h", "has", True): {("h", "has", f"leaf{i}") for i in range(10)},
        ("leaf3", "has", False): {("h", "has", "leaf3")},
        ("alpha", "r", True): {("alpha", "r", "a1"), ("a1", "r", "a2")},
        ("a2", "r", True): {("a2", "r", "a3"), ("a1", "r", "a2"), ("alpha", "r", "a1")},
    }[(root, steps[0][0][0], steps[0][0][1])]
    assert triples(ours) == expected


def test_the_paths_mode_completes_the_best_path_past_the_fanout(kg, server):
    # The hub h has 10 leaves; a fan-out of 5 fetches 5 of them. Its best (only) relation path is cut
    # there, so the retriever follows it exactly and keeps all ten answers; without an answer cap it
    # does not, and keeps only what the capped candidates hold.
    from gr_neo4j.retrieval import RetrievalParams

    limits = CandidateLimits(topk_nodes=1, topk_edges=1, fanout=5)
    with Retriever(server, conn=kg) as r:
        full = r.retrieve("q", "kg", entities=["h"], params=RetrievalParams(mode="paths", hops=1, limits=limits), q=Q)
        capped = r.retrieve("q", "kg", entities=["h"], params=RetrievalParams(mode="paths", hops=1, answer_cap=0, limits=limits), q=Q)
    assert {n.key for n in full.nodes} >= {f"leaf{i}" for i in range(10)}
    assert len({n.key for n in capped.nodes} & {f"leaf{i}" for i in range(10)}) < 10


def test_end_types_sample_the_ends_evenly_by_uid_in_whatever_order_they_were_stored(conn):
    # The zero-shot end types must not depend on how a load happened to write its batches: the
    # first ends stored can be one corner of the graph (a MetaQA load that put its first few
    # hundred films first moved 2-hop Hit@1 by four points).
    init_schema(conn, DIM)
    leaves = [(f"leaf{i:02d}", e(i)) for i in range(12)]
    for dataset, order in (("fwd", leaves), ("rev", leaves[::-1])):
        nodes = [["h", e(20)]] + [[k, v] for k, v in order]
        conn.query(LOAD, {"dataset": dataset, "nodes": nodes, "rels": [["h", "has", k, e(30)] for k, _ in order]})

    def sample(dataset: str) -> dict[bool, set[tuple[float, ...]]]:
        rows = conn.read("retrieval_end_types", dataset=dataset, texts=["has"], sample=3, scan=100)
        return {r["backwards"]: {tuple(v) for v in r["vectors"]} for r in rows}

    evenly = {tuple(e(i)) for i in (0, 4, 8)}
    assert sample("fwd") == sample("rev") == {False: evenly, True: {tuple(e(20))}}
