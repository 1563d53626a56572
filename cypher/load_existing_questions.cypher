MATCH (q:Question)
WHERE q.dataset = $dataset AND q.split IS NOT NULL
RETURN q.uid AS uid, q.fingerprint AS fingerprint
