"""gr-neo4j: G-Retriever (He et al., 2024) on a real Neo4j graph database."""

__version__ = "0.1.0"
