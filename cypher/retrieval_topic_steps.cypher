// The relation steps each topic entity has (gr_neo4j/retrieval/fetch_plan.py): for every uid in
// $uids, the distinct [relation text, walked forwards] of its first $scan relationships, and how
// many it read (at $scan the list may be short of some). Read-only.
UNWIND $uids AS uid
MATCH (e:Entity {uid: uid})
CALL (e) {
  MATCH (e)-[r:REL]-() WITH r LIMIT $scan
  RETURN collect(DISTINCT [r.text, startNode(r) = e]) AS steps, count(r) AS read
}
RETURN uid, steps, read
