// How many of the load's rows are in the database, complete (with their embedding), before the load
// is marked complete: exit 0 must mean every input row is there, whatever else ran meanwhile.
CALL () {
  UNWIND $entity_uids AS uid
  MATCH (n:Entity {uid: uid})
  WHERE n.embedding IS NOT NULL
  RETURN count(n) AS entities
}
CALL () {
  UNWIND $rel_uids AS uid
  MATCH ()-[r:REL {uid: uid}]->()
  WHERE r.embedding IS NOT NULL
  RETURN count(r) AS relationships
}
CALL () {
  UNWIND $graph_uids AS uid
  MATCH (g:Graph {uid: uid})
  RETURN count(g) AS graphs
}
CALL () {
  UNWIND $question_uids AS uid
  MATCH (q:Question {uid: uid})
  RETURN count(q) AS questions
}
RETURN entities, relationships, graphs, questions
