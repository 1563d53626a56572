// The labels of the user's graph, for `load neo4j` (read-only): per label, a row with `key` null
// giving its node count, and a row per property giving how many of its nodes hold it. Nodes with
// one of gr-neo4j's own labels ($own_labels) are not the user's and are left out.
MATCH (n)
WHERE none(l IN labels(n) WHERE l IN $own_labels)
UNWIND labels(n) AS label
UNWIND keys(n) + [null] AS key
RETURN label, key, count(*) AS n
ORDER BY label, key
