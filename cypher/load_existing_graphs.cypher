MATCH (g:Graph)
WHERE g.uid STARTS WITH $prefix
RETURN g.uid AS uid
