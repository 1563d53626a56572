CREATE FULLTEXT INDEX entity_text_fulltext IF NOT EXISTS FOR (n:Entity) ON EACH [n.text]
