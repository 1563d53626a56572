// The questions the hop model learns from: those of a dataset (optionally one split) with $hops
// hops, in uid order after the first $skip (eval-retrieval's), each with its topic entities' texts
// so that it can be masked without linking (read-only).
MATCH (q:Question {dataset: $dataset})
WHERE q.hops = $hops AND ($split IS NULL OR q.split = $split)
WITH q ORDER BY q.uid
SKIP coalesce($skip, 0)
RETURN q.uid AS uid, q.text AS text, [(q)-[:TOPIC]->(t:Entity) | t.text] AS topics
