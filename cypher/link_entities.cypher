// Entities a question may mention, for every candidate span, in one read (gr_neo4j/retrieval/linking.py).
// $spans: [{i, uids, lucene}]: the span's position in the client's list, the uids of its exact
// spellings (as typed, lower-cased, capitalised: a uniqueness-index lookup each) and a Lucene phrase
// query (escaped by the client) for every other spelling the fulltext index $index finds (case,
// punctuation). The fulltext index spans all datasets, so its hits are filtered to $dataset's
// knowledge graph (graph ''); the client keeps only hits whose whole text equals the span once
// normalised, so a partial hit ("Gump" in "Forrest Gump") never links.
// Returns one row per (span, entity) with the entity's degree (the tie-break among equal matches).
UNWIND $spans AS span
CALL (span) {
  MATCH (n:Entity) WHERE n.uid IN span.uids
  RETURN n
  UNION
  CALL db.index.fulltext.queryNodes($index, span.lucene, {limit: $limit}) YIELD node AS n
  WITH n WHERE n.dataset = $dataset AND n.graph = ''
  RETURN n
}
RETURN span.i AS span, n.uid AS uid, n.key AS key, n.text AS text, COUNT { (n)-[:REL]-() } AS degree
