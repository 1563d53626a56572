// Whether a dataset has at most $exact_max entities and at most $exact_max relationships (each
// counted up to $exact_max + 1 only): retrieval scores such a dataset's seeds exactly instead of
// through the vector indexes that every dataset shares (read once per dataset and process).
CALL () {
  MATCH (n:Entity {dataset: $dataset, graph: ''}) WITH n LIMIT $exact_max + 1
  RETURN count(n) <= $exact_max AS exact_nodes
}
CALL () {
  MATCH ()-[r:REL {dataset: $dataset}]->() WITH r LIMIT $exact_max + 1
  RETURN count(r) <= $exact_max AS exact_rels
}
RETURN exact_nodes, exact_rels
