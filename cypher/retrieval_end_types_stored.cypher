// The zero-shot end types stored on a dataset (JSON), if computed since its last load; else null.
MATCH (d:Dataset {name: $dataset})
RETURN CASE WHEN d.end_types_loaded_at = d.loaded_at THEN d.end_types END AS end_types
