MATCH (q:Question)
WHERE q.dataset = $dataset AND q.split IS NOT NULL
CALL (q) { DETACH DELETE q } IN TRANSACTIONS OF 10000 ROWS
