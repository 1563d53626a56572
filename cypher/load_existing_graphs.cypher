// By the dataset property, not a uid prefix: one dataset's name can begin another's ('a' and 'a|b').
MATCH (g:Graph)
WHERE g.dataset = $dataset
RETURN g.uid AS uid, g.fingerprint AS fingerprint
