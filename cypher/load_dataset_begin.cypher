MERGE (d:Dataset {name: $dataset})
SET d.kind = $kind, d.embedder = $embedder, d.dimension = $dimension, d.status = 'loading'
RETURN d.name AS name
