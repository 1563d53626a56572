// The whole textual graph of one sample of a per-sample dataset (ExplaGraphs, scene graphs), read-only.
// Nodes in their index order; relationships in their source order when the loader stored it (idx),
// else by head and tail index. Parallel lists as in retrieve_kg_candidates.
CALL () {
  OPTIONAL MATCH (d:Dataset {name: $dataset})
  RETURN d.kind AS kind, d.embedder AS embedder, d.dimension AS dimension
}
CALL () {
  MATCH (n:Entity {dataset: $dataset, graph: $graph})
  WITH n ORDER BY n.idx
  RETURN collect(n) AS nodes
}
CALL (nodes) {
  UNWIND nodes AS a
  MATCH (a)-[r:REL]->(b)
  WHERE r.graph = $graph AND r.dataset = $dataset
  WITH r, a, b ORDER BY coalesce(r.idx, 0), a.idx, b.idx, r.text
  RETURN collect(r) AS rels
}
RETURN kind, embedder, dimension,
       [] AS topic_ids,
       [n IN nodes | elementId(n)] AS node_ids,
       [n IN nodes | n.key] AS node_keys,
       [n IN nodes | n.idx] AS node_idx,
       [n IN nodes | n.text] AS node_texts,
       [n IN nodes | n.embedding] AS node_embeddings,
       [r IN rels | elementId(r)] AS edge_ids,
       [r IN rels | elementId(startNode(r))] AS edge_heads,
       [r IN rels | elementId(endNode(r))] AS edge_tails,
       [r IN rels | r.text] AS edge_texts,
       [r IN rels | r.embedding] AS edge_embeddings
