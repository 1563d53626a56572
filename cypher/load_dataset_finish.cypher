MATCH (d:Dataset {name: $dataset})
SET d.status = 'complete', d.loaded_at = datetime(), d.source = $source
RETURN d.name AS name
