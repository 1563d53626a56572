// Embeddings of the nodes a retrieval chose, by element id, with their position in $ids (read-only).
UNWIND range(0, size($ids) - 1) AS i
MATCH (n:Entity) WHERE elementId(n) = $ids[i]
RETURN i, n.embedding AS embedding
