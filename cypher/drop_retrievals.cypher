MATCH (r:Retrieval)
WHERE r.dataset = $dataset
CALL (r) { DETACH DELETE r } IN TRANSACTIONS OF 10000 ROWS
