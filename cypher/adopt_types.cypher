// The relationship types of the user's graph and their counts, for `load neo4j` (read-only);
// gr-neo4j's own types ($own_types) are left out.
MATCH ()-[r]->()
WHERE NOT type(r) IN $own_types
RETURN type(r) AS type, count(*) AS n
ORDER BY type
