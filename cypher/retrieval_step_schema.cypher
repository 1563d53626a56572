// The step schema of a knowledge-graph dataset (gr_neo4j/retrieval/fetch_plan.py): the distinct
// (incoming relation texts, outgoing relation texts) of its entities, each list sorted, with how
// many entities have them. Which relation steps can follow which follows from them. Read-only;
// it reads every relationship once (a second on MetaQA), so the client keeps the result.
MATCH (n:Entity) WHERE n.dataset = $dataset AND n.graph = ''
WITH COLLECT { MATCH (n)<-[r:REL]-() WITH DISTINCT r.text AS t ORDER BY t RETURN t } AS ins,
     COLLECT { MATCH (n)-[r:REL]->() WITH DISTINCT r.text AS t ORDER BY t RETURN t } AS outs
RETURN ins, outs, count(*) AS entities
