// Keep the zero-shot end types (JSON) on a completely loaded dataset, stamped with its load time so
// that a later load makes them stale.
MATCH (d:Dataset {name: $dataset}) WHERE d.status = 'complete'
SET d.end_types = $end_types, d.end_types_loaded_at = d.loaded_at
