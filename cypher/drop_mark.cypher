// Mark a dataset as being dropped, unless a live load holds it (see load_lease_acquire): the write
// lock first, so a load cannot claim it between this check and the mark.
MATCH (d:Dataset {name: $dataset})
SET d._lock = true
REMOVE d._lock
WITH d,
     coalesce(d.status = 'loading' AND NOT d.load_token IN $stale_tokens
              AND d.heartbeat > datetime() - duration({seconds: $lease_s}), false) AS held
FOREACH (_ IN CASE WHEN held THEN [] ELSE [1] END |
  SET d.status = 'dropping'
  REMOVE d.load_token, d.load_pid, d.load_host, d.heartbeat)
RETURN NOT held AS marked, d.load_token AS token, d.load_pid AS pid, d.load_host AS host,
       duration.inSeconds(d.heartbeat, datetime()).seconds AS idle_s
