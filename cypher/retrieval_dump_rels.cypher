// One page of a knowledge-graph dataset's relationships, by uid (for the in-memory baseline; read-only).
// $prefix: the uid prefix of the dataset's knowledge graph (records.make_uid(dataset, '', '')).
MATCH (h:Entity)-[r:REL]->(t:Entity)
WHERE r.uid > $after AND r.uid STARTS WITH $prefix
WITH h, r, t ORDER BY r.uid LIMIT $page
RETURN r.uid AS uid, h.key AS head, t.key AS tail, r.text AS text
