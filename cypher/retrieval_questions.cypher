// Questions of a dataset (optionally one split and one hop count) with their gold answers and, on
// per-sample datasets, the graph they are about; in uid order, $limit of them after the first $skip
// (read-only).
MATCH (q:Question {dataset: $dataset})
WHERE ($split IS NULL OR q.split = $split) AND ($hops IS NULL OR q.hops = $hops)
WITH q ORDER BY q.uid
SKIP coalesce($skip, 0)
LIMIT coalesce($limit, 1000000000)
OPTIONAL MATCH (q)-[:ON_GRAPH]->(g:Graph)
RETURN q.uid AS uid, q.text AS text, q.answers AS answers, q.split AS split, g.graph AS graph,
       [(q)-[:ANSWER]->(a:Entity) | a.key] AS answer_keys,
       [(q)-[:TOPIC]->(t:Entity) | t.key] AS topic_keys
