// For each relation text in $texts: the embeddings of up to $sample distinct heads and tails of a
// dataset's relationships with that text, among the first $scan of them (the zero-shot scorer's
// end types; read-only). Nodes are made distinct before their embeddings are read.
UNWIND $texts AS text
CALL (text) {
  MATCH (h:Entity)-[r:REL]->(t:Entity) WHERE r.dataset = $dataset AND r.text = text
  WITH h, t LIMIT $scan
  WITH collect(DISTINCT h)[..$sample] AS heads, collect(DISTINCT t)[..$sample] AS tails
  RETURN [x IN heads | x.embedding] AS heads, [x IN tails | x.embedding] AS tails
}
RETURN text, heads, tails
