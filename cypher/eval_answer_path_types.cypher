// For eval-retrieval's all-answers ceiling (read-only): for each question (by uid) and each of its
// topic entities, the relation-path types of $hops relations that lead from the topic entity to
// each gold answer, never coming back to it. A type is a list of [relation text, forward] steps
// (forward: walked from the relationship's start node to its end node).
UNWIND $uids AS uid
MATCH (q:Question {uid: uid})-[:TOPIC]->(t:Entity)
WITH q, t, [(q)-[:ANSWER]->(a:Entity) | a] AS gold
CALL (t, gold) {
  UNWIND gold AS a
  CALL (t, a) {
    MATCH p = (t)-[:REL*1..3]-(a)
    WHERE length(p) = $hops AND NONE(x IN tail(nodes(p)) WHERE x = t)
    RETURN collect(DISTINCT [i IN range(0, length(p) - 1) |
      [relationships(p)[i].text, startNode(relationships(p)[i]) = nodes(p)[i]]]) AS types
  }
  RETURN collect(types) AS per_answer
}
RETURN q.uid AS uid, elementId(t) AS topic, [a IN gold | a.key] AS gold, per_answer
