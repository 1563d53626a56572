// Record one ask: a Retrieval node linked to the chosen nodes (RETRIEVED), to its topic entities
// (TOPIC) and to the entities it answered (ANSWER), with the chosen relationships' ids, so that
// `retrieval_show` returns exactly the retrieved subgraph. A separate write transaction.
CREATE (r:Retrieval {question: $question, answer: $answer, id: $id, dataset: $dataset, graph: $graph, mode: $mode,
                     parameters: $parameters, created_at: datetime(), rel_ids: $rel_ids})
WITH r
CALL (r) {
  UNWIND $node_ids AS node_id
  MATCH (n:Entity) WHERE elementId(n) = node_id
  CREATE (r)-[:RETRIEVED]->(n)
  RETURN count(n) AS linked
}
CALL (r) {
  UNWIND $topic_ids AS node_id
  MATCH (n:Entity) WHERE elementId(n) = node_id
  CREATE (r)-[:TOPIC]->(n)
  RETURN count(n) AS topics
}
CALL (r) {
  UNWIND $answer_ids AS node_id
  MATCH (n:Entity) WHERE elementId(n) = node_id
  CREATE (r)-[:ANSWER]->(n)
  RETURN count(n) AS answers
}
RETURN r.id AS id, linked, topics, answers
