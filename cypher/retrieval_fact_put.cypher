// Keep a fact derived from a completely loaded dataset on its Dataset node ($fact: {key: JSON}),
// unless the dataset was loaded again since the fact was computed ($loaded_at: the load time it
// was computed for, as retrieval_fact_get returned it).
MATCH (d:Dataset {name: $dataset}) WHERE d.status = 'complete' AND toString(d.loaded_at) = $loaded_at
SET d += $fact
