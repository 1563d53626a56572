UNWIND $rows AS row
MERGE (n:Entity {uid: row.uid})
SET n.dataset = $dataset, n.graph = row.graph, n.key = row.key, n.idx = row.idx, n.text = row.text
WITH n, row
CALL db.create.setNodeVectorProperty(n, 'embedding', $vectors[row.v])
RETURN count(*) AS written
