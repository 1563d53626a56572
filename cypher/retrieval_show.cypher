// Exactly the subgraph a recorded ask retrieved: its nodes, and the chosen relationships among them.
MATCH (r:Retrieval {id: $id})-[:RETRIEVED]->(n:Entity)
OPTIONAL MATCH (n)-[e:REL]->(m:Entity) WHERE elementId(e) IN r.rel_ids
RETURN n, e, m
