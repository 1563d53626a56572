// Every node of the user's graph (none of gr-neo4j's own $own_labels) with its labels and
// properties, for the checksum that shows adopting never modified it.
MATCH (n)
WHERE none(l IN labels(n) WHERE l IN $own_labels)
RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS properties
