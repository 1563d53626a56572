MATCH (n:Entity)
WHERE n.dataset = $dataset AND n.graph IS NOT NULL AND n.text IN $texts
WITH n.text AS text, min(n.uid) AS uid
MATCH (m:Entity {uid: uid})
WHERE m.embedding IS NOT NULL
RETURN text, m.embedding AS embedding
