// A recorded ask, with the number of nodes it links to (read-only).
MATCH (r:Retrieval {id: $id})
RETURN r.id AS id, r.question AS question, r.dataset AS dataset, r.graph AS graph, r.mode AS mode,
       r.parameters AS parameters, toString(r.created_at) AS created_at, r.answer AS answer,
       r.rel_ids AS rel_ids, COUNT { (r)-[:RETRIEVED]->() } AS nodes
