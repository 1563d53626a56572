CREATE INDEX retrieval_dataset IF NOT EXISTS FOR (r:Retrieval) ON (r.dataset)
