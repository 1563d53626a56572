MATCH (d:Dataset)
CALL (d) {
  MATCH (n:Entity)
  WHERE n.dataset = d.name AND n.graph IS NOT NULL
  RETURN count(n) AS entities, count(n.embedding) AS entities_embedded
}
CALL (d) {
  MATCH ()-[r:REL]->()
  WHERE r.dataset = d.name
  RETURN count(r) AS relationships, count(r.embedding) AS relationships_embedded
}
CALL (d) {
  MATCH (g:Graph)
  WHERE g.dataset = d.name
  RETURN count(g) AS graphs
}
CALL (d) {
  MATCH (q:Question)
  WHERE q.dataset = d.name AND q.split IS NOT NULL
  WITH q.split AS split, count(*) AS n
  ORDER BY split
  RETURN collect([split, n]) AS splits
}
RETURN d {.*, loaded_at: toString(d.loaded_at)} AS dataset, entities, entities_embedded,
       relationships, relationships_embedded, graphs, splits
ORDER BY d.name
