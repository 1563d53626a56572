CREATE INDEX question_dataset_split IF NOT EXISTS FOR (q:Question) ON (q.dataset, q.split)
