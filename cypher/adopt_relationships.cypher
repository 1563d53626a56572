// The user's relationships that `load neo4j` adopts (read-only): those of $types between two
// adopted nodes (see adopt_nodes), with their properties, in element id order.
MATCH (a)-[r]->(b)
WHERE type(r) IN $types
  AND any(l IN labels(a) WHERE l IN $labels) AND none(l IN labels(a) WHERE l IN $own_labels)
  AND any(l IN labels(b) WHERE l IN $labels) AND none(l IN labels(b) WHERE l IN $own_labels)
RETURN elementId(r) AS id, elementId(a) AS head, type(r) AS type, elementId(b) AS tail, properties(r) AS properties
ORDER BY id
