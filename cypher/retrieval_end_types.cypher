// For each relation text in $texts: the embeddings of up to $sample distinct heads and tails of a
// dataset's relationships with that text (the zero-shot scorer's end types; read-only).
UNWIND $texts AS text
CALL (text) {
  MATCH (h:Entity)-[r:REL]->(t:Entity) WHERE r.dataset = $dataset AND r.text = text
  WITH h, t LIMIT $scan
  RETURN collect(DISTINCT h.embedding)[..$sample] AS heads, collect(DISTINCT t.embedding)[..$sample] AS tails
}
RETURN text, heads, tails
