// New or changed questions (plan.py): properties and TOPIC/ANSWER/ON_GRAPH links become the file's.
UNWIND $rows AS row
MERGE (q:Question {uid: row.uid})
SET q = row.props
WITH q, row
CALL (q) {
  MATCH (q)-[l:TOPIC|ANSWER|ON_GRAPH]->()
  DELETE l
}
CALL (q, row) {
  UNWIND row.topics AS uid
  MATCH (e:Entity {uid: uid})
  MERGE (q)-[:TOPIC]->(e)
}
CALL (q, row) {
  UNWIND row.answers AS uid
  MATCH (e:Entity {uid: uid})
  MERGE (q)-[:ANSWER]->(e)
}
CALL (q, row) {
  MATCH (g:Graph {uid: row.graph})
  MERGE (q)-[:ON_GRAPH]->(g)
}
RETURN count(*) AS written
