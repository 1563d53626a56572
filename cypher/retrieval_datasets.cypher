// Loaded datasets, to pick the default one and check the embedder before retrieving (read-only).
MATCH (d:Dataset)
RETURN d.name AS name, d.kind AS kind, d.embedder AS embedder, d.dimension AS dimension
ORDER BY name
