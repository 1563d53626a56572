// Exactly the subgraph a recorded ask retrieved: the Retrieval node (captioned with its question),
// its TOPIC and ANSWER links, the retrieved nodes, and the chosen relationships among them.
MATCH (r:Retrieval {id: $id})
OPTIONAL MATCH (r)-[mark:TOPIC|ANSWER]->(:Entity)
WITH r, collect(mark) AS marks
MATCH (r)-[:RETRIEVED]->(n:Entity)
OPTIONAL MATCH (n)-[e:REL]->(m:Entity) WHERE elementId(e) IN r.rel_ids
RETURN r, marks, n, e, m
