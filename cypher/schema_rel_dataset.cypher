CREATE INDEX rel_dataset IF NOT EXISTS FOR ()-[r:REL]-() ON (r.dataset)
