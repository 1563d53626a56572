"""Answer metrics with G-Retriever's definitions, plus an automatic hallucination check.

* ``hit_at_1`` (knowledge-graph QA: WebQSP, MetaQA): the prediction and every gold answer are
  normalised (lowercase, punctuation dropped, the articles a/an/the dropped, whitespace collapsed);
  a hit when any normalised gold answer is a substring of the normalised prediction.
* ``explagraphs_correct``: the first ``support`` or ``counter`` in the (lowercased) prediction must
  equal the gold stance; a prediction with neither is wrong.
* ``scene_graph_correct`` (GQA): the normalised gold answer is contained in the normalised prediction.
* ``hallucinated``: the prediction is split into answer items (on ``|``, ``;`` and newlines, and
  on ``,`` unless the part is a known name: "Lust, Caution" is one film when the subgraph or the
  gold answers name it, two items otherwise); an item is *grounded* when, after normalisation, it
  equals a node text of the retrieved subgraph or one contains the other as whole words. A prediction
  hallucinates when at least one non-empty item is not grounded. Only meaningful where answers are
  entities (knowledge-graph QA); an empty prediction names nothing and does not hallucinate.
* ``answer_set_scores`` (knowledge-graph QA): the prediction's answer items against the gold
  answers as sets, after normalisation, exact item equality: precision, recall and F1.
* ``names_outside``: the exact check, an answer item that is not (after normalisation) the text of
  a node of the subgraph; "Robert Zemeckis" inside "the director is Robert Zemeckis" counts as
  outside here, not in ``hallucinated``. Decoding constrained to node texts scores 0 by construction.
* ``hop_group``: "1-hop" ... from a MetaQA sample id, for tables per hop.
* ``percentiles``: p50/p95 of latencies, for retrieval reports and the benchmarks.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .ingest.facts import Answers
from .ingest.source import facts_of

NOT_IN_GRAPH = "not in the graph"  # the answer that names nothing (constrained decoding offers it)
SEPARATOR = "|"  # between the items of an answer (constrained decoding and the graph's answers write it)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_ITEM_SPLIT = re.compile(r"[|;\n]")
_STANCE = re.compile(r"support|counter")


def normalize(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse whitespace (SQuAD-style, as the paper)."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def split_answers(gold: str | Sequence[str]) -> list[str]:
    """Gold answers given as a list or as one ``a|b|c`` string."""
    if isinstance(gold, str):
        return [a for a in gold.split("|") if a.strip()]
    return [a for a in gold if a.strip()]


def hit_at_1(prediction: str, gold: str | Sequence[str]) -> bool:
    """True when any normalised gold answer occurs in the normalised prediction."""
    pred = normalize(prediction)
    return any(norm and norm in pred for norm in (normalize(a) for a in split_answers(gold)))


def first_stance(prediction: str) -> str | None:
    """The first 'support' or 'counter' in the prediction (lowercased), or None."""
    match = _STANCE.search(prediction.lower())
    return match.group(0) if match else None


def explagraphs_correct(prediction: str, gold: str) -> bool:
    return first_stance(prediction) == gold.strip().lower()


def scene_graph_correct(prediction: str, gold: str) -> bool:
    norm = normalize(gold)
    return bool(norm) and norm in normalize(prediction)


def _contains_words(haystack: str, needle: str) -> bool:
    return f" {needle} " in f" {haystack} "


def answer_items(prediction: str, known: Iterable[str] = ()) -> list[str]:
    """The normalised, non-empty answer items of a prediction. A part between ``|``, ``;`` or
    newlines is split on commas too, unless it is (normalised) one of the ``known`` names (node
    texts, gold answers): titles such as "Kiss Me, Guido" hold commas."""
    names = {normalize(k) for k in known}
    items = []
    for part in _ITEM_SPLIT.split(prediction):
        whole = normalize(part)
        items.extend([whole] if whole in names else (normalize(p) for p in part.split(",")))
    return [item for item in items if item]


def hallucinated(prediction: str, node_texts: Iterable[str]) -> bool:
    """True when some answer item of the prediction matches no node text of the subgraph."""
    nodes = {n for n in (normalize(t) for t in node_texts) if n}
    for item in answer_items(prediction, nodes):
        if item in nodes or item == normalize(NOT_IN_GRAPH):
            continue
        if not any(_contains_words(item, n) or _contains_words(n, item) for n in nodes):
            return True
    return False


def names_outside(prediction: str, node_texts: Iterable[str]) -> bool:
    """True when some answer item of the prediction is not exactly (normalised) a node text; the
    explicit :data:`NOT_IN_GRAPH` names nothing."""
    nodes = {n for n in (normalize(t) for t in node_texts) if n} | {normalize(NOT_IN_GRAPH)}
    return any(item not in nodes for item in answer_items(prediction, nodes))


def answer_set_scores(prediction: str, gold: str | Sequence[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of the prediction's answer items against the gold answers as sets."""
    wanted = {n for n in (normalize(a) for a in split_answers(gold)) if n}
    predicted = set(answer_items(prediction, wanted))
    hit = len(predicted & wanted)
    precision = hit / len(predicted) if predicted else 0.0
    recall = hit / len(wanted) if wanted else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hit else 0.0
    return precision, recall, f1


_HOPS = re.compile(r"(?:^|[|/])(\d+)-hop(?:/|$)")


def hop_group(sample_id: str) -> str:
    """``"2-hop"`` for a MetaQA sample id such as ``metaqa|2-hop/dev/5``, else ``"all"``."""
    match = _HOPS.search(sample_id)
    return f"{match.group(1)}-hop" if match else "all"


def metric_name(dataset: str) -> str:
    """The headline metric of a dataset: 'hit@1', 'accuracy' (stance) or 'accuracy' (scene graph)."""
    return "hit@1" if kind_of(dataset) == Answers.ENTITIES else "accuracy"


def kind_of(dataset: str) -> Answers:
    """What the dataset's answers are (its loader's facts; entities for a graph the user named)."""
    return facts_of(dataset).answers


def is_correct(dataset: str, prediction: str, gold: str) -> bool:
    """The paper's per-sample correctness for the dataset's kind."""
    kind = kind_of(dataset)
    if kind == Answers.STANCE:
        return explagraphs_correct(prediction, gold)
    if kind == Answers.SCENE_GRAPH:
        return scene_graph_correct(prediction, gold)
    return hit_at_1(prediction, gold)


@dataclass(frozen=True)
class Scores:
    """Aggregate scores of a list of predictions."""

    metric: str  # 'hit@1' or 'accuracy'
    value: float  # share of correct predictions, in [0, 1]
    correct: int
    total: int
    hallucination_rate: float | None  # None where answers are not entities (stance, scene graph)
    hallucinated: int | None
    # Knowledge-graph QA only (None elsewhere): mean answer-set precision, recall and F1, and the
    # share of predictions with an answer item that is not exactly a node text of the subgraph.
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    outside_rate: float | None = None

    def to_json(self) -> dict:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def score(dataset: str, predictions: Sequence[str], golds: Sequence[str], node_texts: Sequence[Sequence[str]]) -> Scores:
    """Score predictions against gold labels; node_texts[i] are the texts of sample i's subgraph."""
    if not (len(predictions) == len(golds) == len(node_texts)):
        raise ValueError("predictions, golds and node_texts must have the same length")
    correct = sum(is_correct(dataset, p, g) for p, g in zip(predictions, golds))
    total = len(predictions)
    if kind_of(dataset) != Answers.ENTITIES or not total:
        return Scores(metric_name(dataset), correct / total if total else 0.0, correct, total, None if kind_of(dataset) != Answers.ENTITIES else 0.0,
                      None if kind_of(dataset) != Answers.ENTITIES else 0)
    halluc = sum(hallucinated(p, n) for p, n in zip(predictions, node_texts))
    sets = np.array([answer_set_scores(p, g) for p, g in zip(predictions, golds)])
    outside = sum(names_outside(p, n) for p, n in zip(predictions, node_texts))
    return Scores(metric_name(dataset), correct / total, correct, total, halluc / total, halluc,
                  float(sets[:, 0].mean()), float(sets[:, 1].mean()), float(sets[:, 2].mean()), outside / total)


def percentiles(values: Sequence[float], qs: Sequence[int] = (50, 95), ndigits: int = 2) -> dict[str, float | None]:
    """``{"p50": ..., "p95": ...}`` of ``values`` (numpy's linear interpolation), rounded; None
    for each when there are no values (latency reports of retrieval and the benchmarks)."""
    if len(values) == 0:
        return {f"p{q}": None for q in qs}
    return {f"p{q}": round(float(np.percentile(values, q)), ndigits) for q in qs}
