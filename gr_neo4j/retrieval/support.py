"""Why an answer: the path inside the retrieved subgraph from a topic entity to each answer entity.

An answer held to the graph (constrained decoding) is a list of node texts joined by ``|``; each
item is matched to the subgraph's nodes (normalised text, as the metrics compare), and the shortest
walk from any topic entity to it over the chosen relationships, in either direction, is its
support; when a second topic entity reaches it too, the path runs on to it: "Tom Hanks
<-starred actors- Forrest Gump -directed by-> Robert Zemeckis". Items that
name no node (free decoding, ``not in the graph``) are kept with no node and no path.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from ..metrics import NOT_IN_GRAPH, SEPARATOR, normalize
from .result import RetrievalResult


@dataclass(frozen=True)
class Step:
    """One relationship of a support path, as stored: ``head -relation-> tail`` (texts);
    ``forward``: the path walks it from head to tail."""

    head: str
    relation: str
    tail: str
    forward: bool = True


@dataclass(frozen=True)
class SupportedAnswer:
    """An answer item, the subgraph node it names (None when it names none) and the relationships
    from a topic entity to that node (empty when it is a topic entity, or no path exists).
    ``score``: how likely the graph makes that node an answer (the ``paths`` selection's answer
    score, see :class:`~.result.RetrievalResult`); None when the selection does not take it for one."""

    text: str
    key: str | None
    path: tuple[Step, ...] = ()
    score: float | None = None

    def line(self) -> str:
        """The path for people: ``Tom Hanks <-starred actors- Forrest Gump``."""
        if not self.path:
            return self.text if self.key is not None else f"{self.text} (names no node of the subgraph)"
        first = self.path[0]
        out = [first.head if first.forward else first.tail]
        out += [f"-{s.relation}-> {s.tail}" if s.forward else f"<-{s.relation}- {s.head}" for s in self.path]
        return " ".join(out)


def supported_answers(result: RetrievalResult, answer: str) -> list[SupportedAnswer]:
    """Each answer item of ``answer`` with its node and its shortest path from a topic entity; when
    two topic entities reach it (a question naming both), the path runs on to the second one."""
    by_text: dict[str, list[int]] = {}
    for i, n in enumerate(result.nodes):
        by_text.setdefault(normalize(n.text), []).append(i)
    adjacent: dict[int, list[tuple[int, int]]] = {}
    for k, e in enumerate(result.edges):
        adjacent.setdefault(e.src, []).append((e.dst, k))
        adjacent.setdefault(e.dst, []).append((e.src, k))
    trees = [_bfs(adjacent, t) for t, n in enumerate(result.nodes) if n.topic]
    likely = dict(zip(result.graph_answers, result.graph_answer_scores))
    out = []
    for item in dict.fromkeys(p.strip() for p in answer.split(SEPARATOR) if p.strip()):
        norm = normalize(item)  # one item already: a title's comma ("Lust, Caution") must not split it
        nodes = by_text.get(norm, []) if norm != normalize(NOT_IN_GRAPH) else []
        if not nodes:
            out.append(SupportedAnswer(item, None))
            continue
        # Of the nodes with this text (MetaQA's genre "Action" and tag "action"), the one the graph
        # answered with, then the nearest.
        node = min(nodes, key=lambda i: (i not in likely, min((tree[i][2] for tree in trees if i in tree), default=1 << 30)))
        reaching = sorted((tree for tree in trees if node in tree), key=lambda tree: tree[node][2])
        path = _path_to(result, reaching[0], node) if reaching else ()
        if len(reaching) > 1 and path and _nodes_on(reaching[0], node) & _nodes_on(reaching[1], node) == {node}:
            # the answer is where two named entities meet (their paths share only it): run on to the second
            back = _path_to(result, reaching[1], node)
            path += tuple(Step(st.head, st.relation, st.tail, not st.forward) for st in reversed(back))
        out.append(SupportedAnswer(item, result.nodes[node].key, path, likely.get(node)))
    return out


def _bfs(adjacent: dict[int, list[tuple[int, int]]], root: int) -> dict[int, tuple[int, int, int]]:
    """Breadth-first from ``root`` over ``adjacent`` (node -> [(neighbour, edge index)], both
    directions): node -> (previous node, edge index, distance); the root maps to (-1, -1, 0)."""
    parent = {root: (-1, -1, 0)}
    queue = deque([root])
    while queue:
        v = queue.popleft()
        for w, k in adjacent.get(v, []):
            if w not in parent:
                parent[w] = (v, k, parent[v][2] + 1)
                queue.append(w)
    return parent


def _nodes_on(parent: dict[int, tuple[int, int, int]], node: int) -> set[int]:
    """The nodes of the tree path from ``node`` back to the root, both included."""
    seen = {node}
    while parent[node][0] != -1:
        node = parent[node][0]
        seen.add(node)
    return seen


def _path_to(result: RetrievalResult, parent: dict[int, tuple[int, int, int]], node: int) -> tuple[Step, ...]:
    steps = []
    while node in parent and parent[node][0] != -1:
        prev, k, _ = parent[node]
        e = result.edges[k]
        steps.append(Step(result.nodes[e.src].text, e.text, result.nodes[e.dst].text, e.src == prev))
        node = prev
    return tuple(reversed(steps))
