MATCH (d:Dataset {name: $dataset})
RETURN d {.*} AS dataset
