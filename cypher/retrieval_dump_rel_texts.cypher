// Each distinct relation text of a dataset with its embedding (for the in-memory baseline; read-only).
MATCH ()-[r:REL]->() WHERE r.dataset = $dataset
WITH DISTINCT r.text AS text
CALL (text) {
  MATCH ()-[s:REL]->() WHERE s.dataset = $dataset AND s.text = text
  RETURN s.embedding AS embedding LIMIT 1
}
RETURN text, embedding ORDER BY text
