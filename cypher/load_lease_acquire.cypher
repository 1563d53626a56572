// Claim a dataset for one load. The write lock is taken first (SET d._lock), so the status read after
// it is the committed one: two loads, or a load and a drop, can never both pass the check. A claim
// lapses when its heartbeat is older than $lease_s or its token is known dead ($stale_tokens).
MERGE (d:Dataset {name: $dataset})
SET d._lock = true
REMOVE d._lock
WITH d,
     coalesce(d.status = 'loading' AND d.load_token <> $token AND NOT d.load_token IN $stale_tokens
              AND d.heartbeat > datetime() - duration({seconds: $lease_s}), false) AS held,
     coalesce(d.status = 'dropping', false) AS dropping
FOREACH (_ IN CASE WHEN held OR dropping THEN [] ELSE [1] END |
  SET d.kind = $kind, d.embedder = $embedder, d.dimension = $dimension, d.status = 'loading',
      d.load_token = $token, d.load_pid = $pid, d.load_host = $host, d.heartbeat = datetime())
RETURN d.load_token = $token AS acquired, d.status AS status, d.load_token AS token, d.load_pid AS pid,
       d.load_host AS host, duration.inSeconds(d.heartbeat, datetime()).seconds AS idle_s
