"""From a question to a small connected subgraph: Cypher candidates, in-process PCST, text + Data."""
