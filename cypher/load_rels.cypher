UNWIND $rows AS row
MATCH (h:Entity {uid: row.head})
MATCH (t:Entity {uid: row.tail})
MERGE (h)-[r:REL {uid: row.uid}]->(t)
SET r.dataset = $dataset, r.graph = row.graph, r.text = row.text, r.idx = row.idx
WITH r, row
CALL db.create.setRelationshipVectorProperty(r, 'embedding', $vectors[row.v])
RETURN count(*) AS written
