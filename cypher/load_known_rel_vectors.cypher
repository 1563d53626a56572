MATCH ()-[r:REL]->()
WHERE r.dataset = $dataset AND r.text IN $texts
WITH r.text AS text, min(r.uid) AS uid
MATCH ()-[s:REL {uid: uid}]->()
WHERE s.embedding IS NOT NULL
RETURN text, s.embedding AS embedding
