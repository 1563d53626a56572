"""How many questions *can* have all their answers retrieved by following one relation path.

``eval-retrieval``'s all-answers recall needs a bar to be read against. Reachability within k hops
is far too loose (a film reaches most of a movie KB in three hops through its year and genre), so
two ceilings over the whole graph, from the stored TOPIC and ANSWER links:

``covered``  the gold answers all lie among the ends of one relation-path type of ``hops``
             relations from a topic entity (the walk never comes back to it);
``exact``    they *are* the ends of one such type: the question's relation chain, followed on this
             graph, gives exactly the gold answers. When a KB lacks triples the question was written
             against (MetaQA's rebuilt ``kb.txt`` lacks a few percent), no path gives them all.

A retriever that keeps the ends of the right path reaches ``exact``; ``covered`` also counts a path
whose ends happen to include the answers among many others.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..connection import Connection


@dataclass(frozen=True)
class PathCeiling:
    questions: int
    covered: float
    exact: float

    def to_json(self) -> dict:
        return {"covered": round(self.covered, 4), "exact": round(self.exact, 4)}


def path_ceiling(conn: Connection, uids: list[str], hops: int) -> PathCeiling:
    """The two ceilings (see module doc) of the questions ``uids`` of ``hops`` relations."""
    covered, exact = set(), set()
    for row in conn.read("eval_answer_path_types", uids=uids, hops=hops):
        gold = set(row["gold"])
        per_answer = [{tuple(tuple(step) for step in t) for t in types} for types in row["per_answer"]]
        if not gold or len(per_answer) < len(gold):
            continue
        common = set.intersection(*per_answer)
        if not common:
            continue
        covered.add(row["uid"])
        for steps in sorted(common):
            ends = conn.read("eval_path_ends", root=row["topic"], steps=[list(s) for s in steps])[0]["ends"]
            if set(ends) == gold:
                exact.add(row["uid"])
                break
    n = max(len(uids), 1)
    return PathCeiling(len(uids), len(covered) / n, len(exact) / n)
