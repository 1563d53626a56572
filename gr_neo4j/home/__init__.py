"""The managed Neo4j's files under GR_NEO4J_HOME, read without managing anything: where each
file is (:mod:`.layout`) and whether its server runs (:mod:`.pid`).

Below :mod:`gr_neo4j.connection` (which tells a stopped managed server from an unreachable one)
and :mod:`gr_neo4j.server` (which installs, starts and stops it), so neither package imports the
other's callers.
"""
