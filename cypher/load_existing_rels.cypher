MATCH ()-[r:REL]->()
WHERE r.dataset = $dataset AND r.embedding IS NOT NULL
RETURN r.uid AS uid
