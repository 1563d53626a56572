// A re-load of a dataset that mirrors its source (`load neo4j`): delete the relationships and then
// the entities of $dataset whose uids the source no longer yields ($rel_uids, $entity_uids; one
// batch). An entity goes with whatever still links it (a Retrieval's marks).
CALL () {
  UNWIND $rel_uids AS uid
  MATCH ()-[r:REL {uid: uid}]->()
  WHERE r.dataset = $dataset
  DELETE r
  RETURN count(*) AS rels
}
CALL () {
  UNWIND $entity_uids AS uid
  MATCH (n:Entity {uid: uid})
  WHERE n.dataset = $dataset
  DETACH DELETE n
  RETURN count(*) AS entities
}
RETURN rels, entities
