MATCH (n:Entity)
WHERE n.dataset = $dataset AND n.graph IS NOT NULL AND n.embedding IS NOT NULL
RETURN n.uid AS uid
