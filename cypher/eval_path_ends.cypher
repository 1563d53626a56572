// The end nodes of one relation-path type from one entity, on the whole graph (read-only; the
// all-answers ceiling of eval-retrieval). $root: element id; $steps: [relation text, forward] per
// step. Like the selection's walks, a walk never comes back to the root.
MATCH (root:Entity) WHERE elementId(root) = $root
WITH root, [root] AS front, 0 AS depth
// @repeat 3 (one step; a step past the path's length keeps the front)
CALL (root, front, depth) {
  UNWIND (CASE WHEN depth < size($steps) THEN front ELSE [] END) AS a
  MATCH (a)-[r:REL]-(b)
  WHERE r.text = $steps[depth][0] AND (startNode(r) = a) = $steps[depth][1] AND b <> root
  RETURN collect(DISTINCT b) AS next
}
WITH root, CASE WHEN depth < size($steps) THEN next ELSE front END AS front, depth + 1 AS depth
// @end repeat
RETURN [x IN front | x.key] AS ends
