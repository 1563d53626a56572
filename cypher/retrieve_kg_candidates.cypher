// Candidate subgraph of a knowledge-graph dataset for one question, in one round trip (read-only).
// Seeds: topic entities (by uid, and the TOPIC links of $question_uid), the top-k most similar
// entities and the ends of the top-k most similar relationships. The vector indexes cover every
// dataset, so they are over-fetched ($fetch_nodes, $fetch_edges) and filtered to $dataset; fewer
// than k may remain when other datasets crowd the neighbourhood of the question.
// Expansion: up to 3 hops ($hops) from the seeds; each node keeps at most $fanout of its
// relationships, low-degree nodes are expanded first (hubs such as a genre or a year last), and a hop
// stops when $max_nodes nodes or $max_edges relationships are reached, so both caps are exact.
// Returns parallel lists; relationship ends are element ids (mapped to local indices by the client).
CALL () {
  OPTIONAL MATCH (d:Dataset {name: $dataset})
  RETURN d.kind AS kind, d.embedder AS embedder, d.dimension AS dimension
}
CALL () {
  CALL db.index.vector.queryNodes('entity_text_embedding', $fetch_nodes, $q) YIELD node
  WITH node WHERE node.dataset = $dataset AND node.graph = ''
  RETURN collect(node)[..$topk_nodes] AS vector_nodes
}
CALL () {
  CALL db.index.vector.queryRelationships('rel_text_embedding', $fetch_edges, $q) YIELD relationship
  WITH relationship WHERE relationship.dataset = $dataset AND relationship.graph = ''
  RETURN collect(relationship)[..$topk_edges] AS vector_rels
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
CALL (seeds) {
  UNWIND (CASE WHEN $hops >= 1 THEN seeds ELSE [] END) AS a
  WITH a ORDER BY COUNT { (a)-[:REL]-() } ASC
  CALL (a) { MATCH (a)-[r:REL]-(b) RETURN r, b LIMIT $fanout }
  WITH r, b LIMIT $max_edges
  RETURN collect([r, b]) AS rows
}
WITH kind, embedder, dimension, topics, seeds, vector_rels, seeds AS seen, vector_rels AS taken, rows
WITH kind, embedder, dimension, topics, seeds, vector_rels, seen, taken, rows[..toInteger(($max_nodes - size(seen)) * toInteger($max_nodes > size(seen)))][..toInteger(($max_edges - size(taken)) * toInteger($max_edges > size(taken)))] AS rows
CALL (rows) { UNWIND rows AS row WITH DISTINCT row[1] AS b RETURN collect(b) AS ends }
WITH kind, embedder, dimension, topics, seeds, vector_rels, [row IN rows | row[0]] AS rels1, [b IN ends WHERE NOT b IN seen] AS new1
CALL (new1) {
  UNWIND (CASE WHEN $hops >= 2 THEN new1 ELSE [] END) AS a
  WITH a ORDER BY COUNT { (a)-[:REL]-() } ASC
  CALL (a) { MATCH (a)-[r:REL]-(b) RETURN r, b LIMIT $fanout }
  WITH r, b LIMIT $max_edges
  RETURN collect([r, b]) AS rows
}
WITH kind, embedder, dimension, topics, seeds, vector_rels, rels1, new1, seeds + new1 AS seen, vector_rels + rels1 AS taken, rows
WITH kind, embedder, dimension, topics, seeds, vector_rels, rels1, new1, seen, taken, rows[..toInteger(($max_nodes - size(seen)) * toInteger($max_nodes > size(seen)))][..toInteger(($max_edges - size(taken)) * toInteger($max_edges > size(taken)))] AS rows
CALL (rows) { UNWIND rows AS row WITH DISTINCT row[1] AS b RETURN collect(b) AS ends }
WITH kind, embedder, dimension, topics, seeds, vector_rels, rels1, new1, [row IN rows | row[0]] AS rels2, [b IN ends WHERE NOT b IN seen] AS new2
CALL (new2) {
  UNWIND (CASE WHEN $hops >= 3 THEN new2 ELSE [] END) AS a
  WITH a ORDER BY COUNT { (a)-[:REL]-() } ASC
  CALL (a) { MATCH (a)-[r:REL]-(b) RETURN r, b LIMIT $fanout }
  WITH r, b LIMIT $max_edges
  RETURN collect([r, b]) AS rows
}
WITH kind, embedder, dimension, topics, seeds, vector_rels, rels1, new1, rels2, new2, seeds + new1 + new2 AS seen, vector_rels + rels1 + rels2 AS taken, rows
WITH kind, embedder, dimension, topics, seeds, vector_rels, rels1, new1, rels2, new2, seen, taken, rows[..toInteger(($max_nodes - size(seen)) * toInteger($max_nodes > size(seen)))][..toInteger(($max_edges - size(taken)) * toInteger($max_edges > size(taken)))] AS rows
CALL (rows) { UNWIND rows AS row WITH DISTINCT row[1] AS b RETURN collect(b) AS ends }
WITH kind, embedder, dimension, topics, seeds, vector_rels, rels1, new1, rels2, new2, [row IN rows | row[0]] AS rels3, [b IN ends WHERE NOT b IN seen] AS new3
WITH kind, embedder, dimension, topics, seeds + new1 + new2 + new3 AS nodes, vector_rels + rels1 + rels2 + rels3 AS all_rels
CALL (all_rels) { UNWIND all_rels AS r WITH DISTINCT r RETURN collect(r) AS rels }
RETURN kind, embedder, dimension,
       [t IN topics | elementId(t)] AS topic_ids,
       [n IN nodes | elementId(n)] AS node_ids,
       [n IN nodes | n.key] AS node_keys,
       [n IN nodes | n.text] AS node_texts,
       [n IN nodes | n.embedding] AS node_embeddings,
       [r IN rels | elementId(r)] AS edge_ids,
       [r IN rels | elementId(startNode(r))] AS edge_heads,
       [r IN rels | elementId(endNode(r))] AS edge_tails,
       [r IN rels | r.text] AS edge_texts,
       [r IN rels | r.embedding] AS edge_embeddings
