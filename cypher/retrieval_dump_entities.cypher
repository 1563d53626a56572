// One page of a knowledge-graph dataset's entities, by uid (for the in-memory baseline; read-only).
// $prefix: the uid prefix of the dataset's knowledge graph (records.make_uid(dataset, '', '')).
MATCH (n:Entity)
WHERE n.uid > $after AND n.uid STARTS WITH $prefix
WITH n ORDER BY n.uid LIMIT $page
RETURN n.uid AS uid, n.key AS key, n.text AS text, n.embedding AS embedding
