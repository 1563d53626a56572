// The question stored with one graph of a per-sample dataset (ExplaGraphs: its two arguments), for
// an ask that names the graph and types no question; the first by uid if several (read-only).
MATCH (q:Question {dataset: $dataset})-[:ON_GRAPH]->(:Graph {dataset: $dataset, graph: $graph})
RETURN q.text AS text
ORDER BY q.uid
LIMIT 1
