// Every relationship of the user's graph (from a node with none of gr-neo4j's own $own_labels)
// with its ends, type and properties, for the checksum that shows adopting never modified it.
MATCH (a)-[r]->(b)
WHERE none(l IN labels(a) WHERE l IN $own_labels)
RETURN elementId(r) AS id, elementId(a) AS head, type(r) AS type, elementId(b) AS tail, properties(r) AS properties
