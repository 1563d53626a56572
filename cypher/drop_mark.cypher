MATCH (d:Dataset {name: $dataset})
SET d.status = 'dropping'
RETURN d.name AS name
