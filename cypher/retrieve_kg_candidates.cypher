// Candidate subgraph of a knowledge-graph dataset for one question, in one round trip (read-only).
// Seeds: topic entities (by uid, and the TOPIC links of $question_uid), the top-k most similar
// entities and the ends of the top-k most similar relationships ($entity_index, $rel_index: the
// names in gr_neo4j/schema.py). The vector indexes cover every dataset: a small dataset
// ($exact_nodes, $exact_rels: retrieval_dataset_small.cypher) is scored exactly instead; a larger one is
// over-fetched from the index ($fetch_nodes, $fetch_edges) and filtered to $dataset, and scored
// exactly only when other datasets crowd the question's neighbourhood so that fewer than k remain.
// Either way a dataset's seeds never depend on what else the database holds.
// Expansion: up to 3 hops ($hops; the hop block is written once, between `@repeat` and `@end`,
// and expanded when the statement is loaded: gr_neo4j/cypher_store.py); each node follows at
// most $fanout of its relationships; $allowed, unless null, is a zero-shot fetch plan's relation
// texts per hop (gr_neo4j/retrieval/fetch_plan.py): hop d follows only $allowed[d]. Every
// frontier node carries (origin, via_hub, relevance): origin 0 when reached from a topic entity, 1
// from a vector hit; via_hub 1 once its walk went through a node with more than $fanout
// relationships (a hub such as a genre or a year, whose expansion is cut anyway); relevance the sum
// of $rel_scores[text] (question-relation similarity, computed by the client once per relation
// text) along its walk. A hop expands its frontier in the order (origin, via_hub, relevance desc,
// degree), streaming, and stops at $max_nodes nodes or $max_edges relationships, so both caps are
// exact and what the caps cut is what matters least: vector hits after topics, hub detours last,
// then the walks whose relations resemble the question least.
// Returns parallel lists: no embeddings (the client holds the relation vectors; the question's
// cosine similarity to each node is computed here); relationship ends are element ids.
CALL () {
  OPTIONAL MATCH (d:Dataset {name: $dataset})
  RETURN d.kind AS kind, d.embedder AS embedder, d.dimension AS dimension
}
CALL () {
  // (An exact search still calls the index, for one row it drops: a CALL cannot be skipped.)
  CALL db.index.vector.queryNodes($entity_index, CASE WHEN $exact_nodes THEN 1 ELSE $fetch_nodes END, $q) YIELD node
  WITH node WHERE NOT $exact_nodes AND node.dataset = $dataset AND node.graph = ''
  WITH collect(node)[..$topk_nodes] AS hits
  CALL (hits) {
    // UNWIND, not WHERE: the planner moves a WHERE above the index seek, which then reads every entity.
    UNWIND CASE WHEN size(hits) < $topk_nodes THEN [true] ELSE [] END AS crowded
    MATCH (n:Entity {dataset: $dataset, graph: ''})
    WITH n ORDER BY vector.similarity.cosine(n.embedding, $q) DESC, n.uid LIMIT $topk_nodes
    RETURN collect(n) AS exact
  }
  RETURN CASE WHEN size(hits) < $topk_nodes THEN exact ELSE hits END AS vector_nodes
}
CALL () {
  CALL db.index.vector.queryRelationships($rel_index, CASE WHEN $exact_rels THEN 1 ELSE $fetch_edges END, $q) YIELD relationship
  WITH relationship WHERE NOT $exact_rels AND relationship.dataset = $dataset AND relationship.graph = ''
  WITH collect(relationship)[..$topk_edges] AS hits
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $topk_edges THEN [true] ELSE [] END AS crowded
    MATCH ()-[r:REL {dataset: $dataset}]->() WHERE r.graph = ''
    WITH r ORDER BY vector.similarity.cosine(r.embedding, $q) DESC, r.uid LIMIT $topk_edges
    RETURN collect(r) AS exact
  }
  RETURN CASE WHEN size(hits) < $topk_edges THEN exact ELSE hits END AS vector_rels
}
CALL () {
  OPTIONAL MATCH (:Question {uid: $question_uid})-[:TOPIC]->(qt:Entity)
  WITH collect(qt) AS from_question
  OPTIONAL MATCH (t:Entity) WHERE t.uid IN $topic_uids
  WITH from_question, collect(t) AS given
  RETURN from_question + [x IN given WHERE NOT x IN from_question] AS topics
}
CALL (topics, vector_nodes, vector_rels) {
  UNWIND topics + vector_nodes + [r IN vector_rels | startNode(r)] + [r IN vector_rels | endNode(r)] AS s
  WITH DISTINCT s
  RETURN collect(s) AS seeds
}
// seen: nodes walked so far; taken: relationships so far; front: [node, origin, via_hub, relevance]
// to expand. A planned fetch walks from the topics only, hop d along the texts $allowed[d]: the
// vector hits are added after the walks (a hit that a walk reaches is expanded there, along that
// hop's texts), and until then their number is held back from the node cap.
WITH kind, embedder, dimension, topics, seeds, vector_rels AS taken, 0 AS depth,
     CASE WHEN $allowed IS NULL THEN seeds ELSE topics END AS seen,
     CASE WHEN $allowed IS NULL THEN 0 ELSE size(seeds) - size(topics) END AS held
WITH kind, embedder, dimension, topics, seeds, taken, depth, seen, held,
     [s IN seen | [s, CASE WHEN s IN topics THEN 0 ELSE 1 END, 0, 0.0]] AS front
// @repeat 3 (one hop; a hop past $hops expands nothing)
CALL (front, depth) {
  UNWIND (CASE WHEN depth < $hops THEN front ELSE [] END) AS f
  WITH f[0] AS a, f[1] AS origin, f[2] AS via, f[3] AS relevance
  WITH a, origin, via, relevance, COUNT { (a)-[:REL]-() } AS degree
  WITH a, origin, CASE WHEN via = 1 OR degree > $fanout THEN 1 ELSE 0 END AS via_hub, relevance, degree
  ORDER BY origin, via_hub, relevance DESC, degree
  CALL (a, depth) { MATCH (a)-[r:REL]-(b) WHERE $allowed IS NULL OR r.text IN $allowed[depth] RETURN r, b LIMIT $fanout }
  WITH r, b, origin, via_hub, relevance + coalesce($rel_scores[r.text], 0.0) AS relevance
  LIMIT $max_edges
  RETURN collect([r, b, origin, via_hub, relevance]) AS rows
}
WITH kind, embedder, dimension, topics, seeds, seen, held, taken, depth,
     rows[..toInteger(($max_nodes - held - size(seen)) * toInteger($max_nodes > held + size(seen)))][..toInteger(($max_edges - size(taken)) * toInteger($max_edges > size(taken)))] AS rows
CALL (rows, seen) {
  UNWIND rows AS row
  WITH row WHERE NOT row[1] IN seen
  WITH row[1] AS b, collect(row)[0] AS best
  RETURN collect([b, best[2], best[3], best[4]]) AS front
}
WITH kind, embedder, dimension, topics, seeds, seen + [f IN front | f[0]] AS seen, held, taken + [row IN rows | row[0]] AS taken, front, depth + 1 AS depth
// @end repeat
WITH kind, embedder, dimension, topics, taken,
     CASE WHEN held = 0 THEN seen ELSE seen + [s IN seeds WHERE NOT s IN seen] END AS seen
CALL (taken) { UNWIND taken AS r WITH DISTINCT r RETURN collect(r) AS rels }
RETURN kind, embedder, dimension,
       [t IN topics | elementId(t)] AS topic_ids,
       [n IN seen | elementId(n)] AS node_ids,
       [n IN seen | n.key] AS node_keys,
       [n IN seen | n.text] AS node_texts,
       [n IN seen | vector.similarity.cosine(n.embedding, $q)] AS node_sims,
       [r IN rels | elementId(r)] AS edge_ids,
       [r IN rels | elementId(startNode(r))] AS edge_heads,
       [r IN rels | elementId(endNode(r))] AS edge_tails,
       [r IN rels | r.text] AS edge_texts
