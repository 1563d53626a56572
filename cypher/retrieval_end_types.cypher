// For each relation text in $texts: the embeddings of up to $sample distinct tails (backwards
// false) and heads (backwards true) of a dataset's relationships with that text, among the first
// $scan of them (the zero-shot scorer's end types; read-only). The sample is evenly spaced over
// the ends sorted by uid, not the first ones stored: the store's order follows how a load
// happened to write (concurrent batches), and its first few hundred ends can be one corner of
// the graph.
UNWIND $texts AS text
CALL (text) {
  MATCH (h:Entity)-[r:REL]->(t:Entity) WHERE r.dataset = $dataset AND r.text = text
  WITH h.uid AS h, t.uid AS t LIMIT $scan
  RETURN collect(DISTINCT h) AS heads, collect(DISTINCT t) AS tails
}
UNWIND [[false, tails], [true, heads]] AS side
CALL (side) {
  UNWIND side[1] AS uid
  WITH uid ORDER BY uid
  WITH collect(uid) AS sorted
  UNWIND range(0, size(sorted) - 1) AS i
  WITH sorted[i] AS uid WHERE size(sorted) <= $sample OR i * $sample % size(sorted) < $sample
  MATCH (e:Entity {uid: uid})
  RETURN collect(e.embedding) AS vectors
}
RETURN text, side[0] AS backwards, vectors
