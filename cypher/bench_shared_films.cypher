// Pairs of entities linked to the same entity by two given relations, with every entity they share
// (scripts/bench_two_entity.py: "which films did <actor> act in that <director> directed").
// $first_rel, $second_rel: relation texts walked from the shared entity (film -> actor, film ->
// director); pairs of one entity with itself are skipped. Read-only; ordered, so a seeded sample
// of the rows is the same on every run.
MATCH (f:Entity)-[r1:REL]->(a:Entity)
WHERE r1.dataset = $dataset AND r1.graph = '' AND r1.text = $first_rel
MATCH (f)-[r2:REL]->(b:Entity)
WHERE r2.text = $second_rel AND b <> a
WITH a.key AS first, b.key AS second, f.key AS shared ORDER BY first, second, shared
RETURN first, second, collect(shared) AS shared
ORDER BY first, second
