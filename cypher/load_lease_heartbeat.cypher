// A running load says it is alive; returns nothing once its claim is gone (dropped or taken over).
MATCH (d:Dataset {name: $dataset})
WHERE d.load_token = $token AND d.status = 'loading'
SET d.heartbeat = datetime()
RETURN d.name AS name
