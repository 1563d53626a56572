// A fact derived from a dataset and kept on its Dataset node (JSON under the property $key, with
// the load time it was computed for), and the dataset's load time now: the client uses the fact
// only when the two agree, so a later load makes it stale (read-only).
MATCH (d:Dataset {name: $dataset})
RETURN toString(d.loaded_at) AS loaded_at, d[$key] AS fact
