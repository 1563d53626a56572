"""The fetch plan: the relation paths a question asks for, read before the candidates are fetched.

Without a trained hop model the zero-shot reading (:mod:`.zero_shot`) lets relation paths of every
length up to :data:`~.params.MAX_HOPS` compete; with one, the paths up to the depth it predicts
compete under the trained ranker. Fetched blindly, that is the whole neighbourhood of the named
entity to that depth: about 900 nodes on MetaQA three hops deep, capped, for an answer that lies
along one path. So the paths are scored first, by the scorer the selection will use, on the
graph's *step schema* instead of its nodes: which relation steps can follow which (read once per
dataset, :class:`StepSchema`), starting from the steps the named entity actually has. The fetch
then expands only along the relation texts of the best path the schema trusts to have walks, of
every path ranked above it, and of the next ones no longer than those (:data:`PLAN_PATHS` in all
at least), each hop its own texts, from the named entity only, and only as deep as the longest
path; the selection scores the walks it gets, and answers along the best of them, as it would have.

The schema is coarse, a superset of what the graph walks: a step follows another when some node
ends the one and starts the other. On a graph whose nodes are names a few coincidences let
nonsense through, so a step taken from fewer than :data:`TRUSTED` of the nodes it could be is
followed but not trusted to have walks. When the schema allows more than :data:`MAX_PLAN_PATHS`
paths (a graph with hundreds of relation texts), nothing is planned and the fetch expands every
relation, as deep as the depth read or predicted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

Step = tuple[str, bool]  # (relation text, walked backwards), as in :mod:`.zero_shot`
Path = tuple[Step, ...]

# Paths the fetch follows. The selection's answers come from the best path (and any end the next
# ones make as likely); a few more keep the runners-up the zero-shot reading may put second.
PLAN_PATHS = 4
MAX_PLAN_PATHS = 5000  # schema paths scored per question at most (MetaQA: about 900 from a person)
# A step taken from fewer than this share of the nodes the step before arrives at is the graph's
# noise, not its schema: on MetaQA, where a node is a name, the few films named like a person
# (0.13 % of the directors at most) let "directed by > has genre" through, ahead of the films'
# real "directed by > ~directed by > has genre"; its real rare steps start at 0.7 %.
TRUSTED = 0.005
MAX_UNTRUSTED = 16  # paths ranked above the first trusted one that a plan follows at most


@dataclass(frozen=True)
class StepSchema:
    """Which relation steps can follow which: ``follows[a][b]`` is the share of the nodes that
    step ``a`` arrives at that step ``b`` leaves (absent: none). Steps are (relation text, walked
    backwards)."""

    follows: Mapping[Step, Mapping[Step, float]]

    @classmethod
    def of(cls, signatures: Iterable[tuple[Sequence[str], Sequence[str], int]]) -> StepSchema:
        """From the distinct (incoming relation texts, outgoing relation texts, how many nodes)
        of the graph's nodes: a node with incoming ``t`` is arrived at along ``t`` forwards and
        left along ``t`` backwards; with outgoing ``t``, the other way round."""
        arrivals: dict[Step, int] = {}
        both: dict[Step, dict[Step, int]] = {}
        for ins, outs, nodes in signatures:
            leave = [(t, False) for t in outs] + [(t, True) for t in ins]
            for a in [(t, False) for t in ins] + [(t, True) for t in outs]:
                arrivals[a] = arrivals.get(a, 0) + nodes
                row = both.setdefault(a, {})
                for b in leave:
                    row[b] = row.get(b, 0) + nodes
        return cls({a: {b: n / arrivals[a] for b, n in row.items()} for a, row in both.items()})

    def trusted(self, path: Path) -> bool:
        """Whether every step of ``path`` after the first is taken from at least :data:`TRUSTED`
        of the nodes the step before arrives at."""
        return all(self.follows.get(a, {}).get(b, 0.0) >= TRUSTED for a, b in pairwise(path))

    def to_json(self) -> list:
        return [[a[0], a[1], sorted([b[0], b[1], share] for b, share in row.items())] for a, row in sorted(self.follows.items())]

    @classmethod
    def from_json(cls, rows: list) -> StepSchema:
        return cls({(t, bool(back)): {(u, bool(b)): float(share) for u, b, share in row} for t, back, row in rows})


def schema_paths(starts: Iterable[Step], schema: StepSchema, max_len: int, cap: int = MAX_PLAN_PATHS) -> list[Path] | None:
    """Every relation path of 1..``max_len`` steps that begins with one of ``starts`` and whose
    steps the schema lets follow each other, shortest first; None when there are more than ``cap``."""
    layer: list[Path] = [(s,) for s in sorted(set(starts))]
    out: list[Path] = []
    for depth in range(max_len):
        out += layer
        if len(out) > cap:
            return None
        if depth + 1 < max_len:
            layer = [p + (s,) for p in layer for s in sorted(schema.follows.get(p[-1], {}))]
    return out


@dataclass(frozen=True)
class FetchPlan:
    """``paths`` the relation paths the fetch follows, best first; ``allowed[d]`` the relation texts
    hop ``d`` walks (every path's step ``d``); ``depth`` hops in all (the longest path)."""

    paths: tuple[Path, ...]
    allowed: tuple[tuple[str, ...], ...]

    @property
    def depth(self) -> int:
        return len(self.allowed)

    @classmethod
    def of(cls, paths: Sequence[Path]) -> FetchPlan:
        depth = max((len(p) for p in paths), default=0)
        return cls(tuple(paths), tuple(tuple(sorted({p[d][0] for p in paths if len(p) > d})) for d in range(depth)))


def plan_fetch(paths: Sequence[Path], scores: np.ndarray, schema: StepSchema, keep: int = PLAN_PATHS) -> FetchPlan | None:
    """The plan of ``paths`` ranked by their ``scores`` ``[P]`` (shorter first on ties, as the
    selection ranks them): the best path the schema trusts to have walks
    (:meth:`StepSchema.trusted`; a first step always has, being the named entity's own), every
    path ranked above it (the selection answers along one of them where it has walks, as it
    would without a plan), and the next ones no longer than those, ``keep`` in all at least.
    None without a trusted path, or with more than :data:`MAX_UNTRUSTED` above the first one."""
    if not paths:
        return None
    ranked = [paths[i] for i in sorted(range(len(paths)), key=lambda i: (-float(scores[i]), len(paths[i]), paths[i]))]
    first = next((i for i, p in enumerate(ranked) if schema.trusted(p)), None)  # one-step paths always are
    if first is None or first > MAX_UNTRUSTED:
        return None
    depth = max(len(p) for p in ranked[: first + 1])
    runners_up = [p for p in ranked[first + 1 :] if len(p) <= depth][: max(keep - first - 1, 0)]
    return FetchPlan.of(ranked[: first + 1] + runners_up)
