"""Relation paths: the knowledge-graph selection and what `train-paths` learns for it.

- :mod:`.scoring`: the ``paths`` selection, walks from the topic entities grouped by relation path
  and scored against the question;
- :mod:`.ranker`: the learned path ranker (per-step relation scores, path length) read from Neo4j;
- :mod:`.hops`: how many hops a question asks for (question vector and hashed n-grams);
- :mod:`.plan`: whole relation paths a question's wording names, learned from the train split;
- :mod:`.training`: `train-paths`, which fits the three above from a dataset's questions.
"""

from .ranker import PathRanker, load_ranker
from .scoring import PathScorer, complete_steps, select_paths

__all__ = ["PathRanker", "PathScorer", "complete_steps", "load_ranker", "select_paths"]
