// Texts of a knowledge-graph dataset's entities with at least one relationship, in uid order
// (scripts/bench_abstention.py draws a seeded sample of them; read-only).
MATCH (e:Entity) WHERE e.dataset = $dataset AND e.graph = '' AND EXISTS { (e)-[:REL]-() }
RETURN e.text AS text ORDER BY e.uid SKIP $skip LIMIT $limit
