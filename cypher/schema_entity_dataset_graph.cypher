CREATE INDEX entity_dataset_graph IF NOT EXISTS FOR (n:Entity) ON (n.dataset, n.graph)
