CREATE INDEX graph_dataset IF NOT EXISTS FOR (g:Graph) ON (g.dataset)
