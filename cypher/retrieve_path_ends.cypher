// Every walk of the chosen relation paths from the roots (read-only; gr_neo4j/retrieval/paths.py).
// The candidate graph is capped (fan-out, node and relationship caps), so the ends of the relation
// paths that read most like the question may have been cut; this read follows exactly those paths,
// so the subgraph can keep all the answers of "what films did X act in".
// $roots: element ids of the walks' roots (the topic entities); $paths: one list per relation path
// of [relation text, forward] steps (forward: walked from the relationship's start node to its end
// node); $max_rows: relationships per path and step; $q: the question vector.
// Walks never come back to a root, as in the selection. Returns the relationships of all the walks
// and every node they touch, with its similarity to the question (cosine, as (1 + cos) / 2).
UNWIND $paths AS steps
CALL (steps) {
  MATCH (root:Entity) WHERE elementId(root) IN $roots
  WITH collect(root) AS roots
  WITH roots, roots AS front, [] AS taken, 0 AS depth
// @repeat 3 (one step of the path; a step past its length follows nothing)
  CALL (front, steps, depth, roots) {
    UNWIND (CASE WHEN depth < size(steps) THEN front ELSE [] END) AS a
    MATCH (a)-[r:REL]-(b)
    WHERE r.text = steps[depth][0] AND (startNode(r) = a) = steps[depth][1] AND NOT b IN roots
    WITH r, b LIMIT $max_rows
    RETURN collect(r) AS rows, collect(DISTINCT b) AS next
  }
  WITH roots, CASE WHEN depth < size(steps) THEN next ELSE front END AS front, taken + rows AS taken, depth + 1 AS depth
// @end repeat
  RETURN taken
}
UNWIND taken AS r
WITH DISTINCT r
WITH collect(r) AS rels
CALL (rels) {
  UNWIND rels AS r
  UNWIND [startNode(r), endNode(r)] AS n
  WITH DISTINCT n
  RETURN collect(n) AS nodes
}
RETURN [n IN nodes | elementId(n)] AS node_ids,
       [n IN nodes | n.key] AS node_keys,
       [n IN nodes | n.text] AS node_texts,
       [n IN nodes | vector.similarity.cosine(n.embedding, $q)] AS node_sims,
       [r IN rels | elementId(r)] AS edge_ids,
       [r IN rels | elementId(startNode(r))] AS edge_heads,
       [r IN rels | elementId(endNode(r))] AS edge_tails,
       [r IN rels | r.text] AS edge_texts
