// The user's nodes that `load neo4j` adopts (read-only): those with one of $labels and none of
// gr-neo4j's own ($own_labels), with their labels and properties, in element id order.
MATCH (n)
WHERE any(l IN labels(n) WHERE l IN $labels) AND none(l IN labels(n) WHERE l IN $own_labels)
RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS properties
ORDER BY id
