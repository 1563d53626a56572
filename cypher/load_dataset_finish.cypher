// Mark a load complete only if it still holds its claim: a dataset dropped or taken over during the
// load returns no row, and the load fails instead of reporting success.
MATCH (d:Dataset {name: $dataset})
WHERE d.load_token = $token AND d.status = 'loading'
SET d.status = 'complete', d.loaded_at = datetime(), d.source = $source
REMOVE d.load_token, d.load_pid, d.load_host, d.heartbeat
RETURN d.name AS name
