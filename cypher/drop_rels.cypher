MATCH ()-[r:REL]->()
WHERE r.dataset = $dataset
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS
