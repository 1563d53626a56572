"""gr-neo4j's retrieval behind the interfaces of the frameworks its users already work in.

- :mod:`.graphrag`: a neo4j-graphrag ``Retriever`` (``pip install gr-neo4j[graphrag]``);
- :mod:`.langchain`: a LangChain ``BaseRetriever`` (``pip install gr-neo4j[langchain]``);
- :mod:`.context`: what both return, framework-free: the answers the graph gives, each with the
  path that supports it, and the textualized subgraph.

Each module imports its framework when imported itself, so ``import gr_neo4j`` never needs them.
"""
