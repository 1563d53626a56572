// Record one ask: a Retrieval node linked to the chosen nodes, with the chosen relationships' ids,
// so that `retrieval_show` returns exactly the retrieved subgraph. A separate write transaction.
CREATE (r:Retrieval {id: $id, question: $question, dataset: $dataset, graph: $graph, mode: $mode,
                     parameters: $parameters, created_at: datetime(), answer: $answer, rel_ids: $rel_ids})
WITH r
CALL (r) {
  UNWIND $node_ids AS node_id
  MATCH (n:Entity) WHERE elementId(n) = node_id
  CREATE (r)-[:RETRIEVED]->(n)
  RETURN count(n) AS linked
}
RETURN r.id AS id, linked
