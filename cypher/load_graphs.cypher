// New or changed graphs (plan.py). The graph's old entities and relationships go in the same
// transaction (the load writes them all anew), and the questions linked to them lose their
// fingerprint, so that a load killed before it rewrites those questions relinks them when rerun.
UNWIND $rows AS row
MERGE (g:Graph {uid: row.uid})
SET g = row.props
WITH row
CALL (row) {
  MATCH (q:Question)-[:TOPIC|ANSWER]->(:Entity {dataset: $dataset, graph: row.graph})
  REMOVE q.fingerprint
}
CALL (row) {
  MATCH (n:Entity {dataset: $dataset, graph: row.graph})
  DETACH DELETE n
}
RETURN count(*) AS written
