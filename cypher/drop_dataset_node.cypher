MATCH (d:Dataset {name: $dataset})
DETACH DELETE d
