"""`gr-neo4j train-paths`: train a dataset's relation-path ranker (:mod:`.path_ranker`) on its questions.

Each training question is retrieved as a user types it (brackets removed, topic entities linked)
and its candidate graph walked from the roots exactly as the ``paths`` mode walks it. Every relation
path up to the question's hop count is labelled by how well the set of its ends matches the gold
answers (F1); the paths of the best F1, when it is above zero, are the positives. The ranker is
trained with a listwise loss: the softmax over a question's paths should put its mass on the
positives. A seeded fifth of the questions is held out, and the share of them whose top-ranked
path is a positive (top-1) is reported before (cosine only) and after training, per hop count.

Which questions: ``skip`` then ``limit`` per hop count, in uid order, so the default slice
(1000-1999) stays disjoint from ``eval-retrieval``'s (the first 300).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..progress import NO_PROGRESS, Progress
from ..settings import Settings
from .batch import Question, questions_of
from .linking import unbracketed
from .modes import path_roots
from .params import PathTraining, RetrievalError, RetrievalParams
from .path_ranker import PathRanker, save_ranker
from .paths import path_text, walks_of
from .retriever import Retriever

SCALE = 20.0  # logits = SCALE * score: cosines live in [-1, 1], too flat for a softmax
HELD_OUT = 0.2


@dataclass(frozen=True)
class PathExample:
    """One question's relation paths: ``texts`` and ``lengths`` ``[P]``, ``positive`` ``[P]`` bool."""

    q: np.ndarray
    hops: int
    texts: list[str]
    lengths: np.ndarray
    positive: np.ndarray


@dataclass(frozen=True)
class PathRankerReport:
    """What ``train_path_ranker`` did: questions used per hop count (with a positive path), the
    held-out top-1 before and after training per hop count, and the seconds it took."""

    dataset: str
    questions: dict[str, int]
    examples: dict[str, int]
    held_out: dict[str, int]
    top1_cosine: dict[str, float]
    top1_trained: dict[str, float]
    seconds: float
    saved: bool

    def to_json(self) -> dict:
        return dict(self.__dict__)


def path_f1(c, roots: np.ndarray, hops: int, gold: set[str]) -> tuple[list[tuple], np.ndarray]:
    """Every relation path of the walks from ``roots`` (as :class:`~.paths.Walks` steps) and the F1
    of its set of end nodes against the ``gold`` node keys ``[P]``."""
    w = walks_of(c, roots, hops)
    is_gold = np.array([k in gold for k in c.node_keys], dtype=bool)
    steps, f1 = [], []
    for L in range(len(w.path)):
        pairs = np.unique(np.stack([w.path[L], w.node[L]], 1), axis=0)
        for pid in np.unique(pairs[:, 0]).tolist():
            ends = pairs[pairs[:, 0] == pid, 1]
            hit = int(is_gold[ends].sum())
            steps.append(w.steps[pid])
            f1.append(2.0 * hit / (len(ends) + len(gold)) if gold else 0.0)
    return steps, np.asarray(f1, dtype=np.float32)


def examples_of(r: Retriever, dataset: str, questions: Sequence[Question], params: RetrievalParams, progress: Progress = NO_PROGRESS) -> list[PathExample]:
    """The labelled relation paths of each question that has a path reaching a gold answer."""
    out = []
    with progress.phase(f"{params.hops}-hop questions", total=len(questions), unit="questions") as advance:
        for question in questions:
            f = r.fetch(unbracketed(question.text), dataset, params=params)
            c = f.candidates
            steps, f1 = path_f1(c, path_roots(c, f.scored, params), params.hops, set(question.answer_keys))
            advance(1)
            if len(f1) == 0 or f1.max() <= 0:
                continue
            texts = [path_text(s, c.rel_texts) for s in steps]
            r.paths.vectors(texts)  # embedded once, kept in the retriever's cache
            out.append(PathExample(f.scored.q, params.hops, texts, np.array([len(s) for s in steps]), f1 == f1.max()))
    return out


def top1(examples: Sequence[PathExample], ranker: PathRanker | None, vectors: dict[str, np.ndarray]) -> float:
    """Share of ``examples`` whose best-scored path (shorter first on ties, as the selection ranks)
    is a positive; ``ranker`` None: the cosine alone."""
    if not examples:
        return 0.0
    hits = 0
    for ex in examples:
        v = np.stack([vectors[t] for t in ex.texts])
        s = ranker.scores(ex.q, v, ex.lengths) if ranker is not None else v @ ex.q
        best = min(range(len(s)), key=lambda i: (-float(s[i]), int(ex.lengths[i])))
        hits += bool(ex.positive[best])
    return hits / len(examples)


def fit(
    examples: Sequence[PathExample], vectors: dict[str, np.ndarray], embedder: str, max_hops: int,
    epochs: int = 30, lr: float = 1e-3, batch_size: int = 32, seed: int = 0,
) -> PathRanker:
    """Train W ``[D, D]`` (from zero) and the length bias ``[max_hops]`` with Adam on the listwise loss."""
    import torch

    texts = sorted({t for ex in examples for t in ex.texts})
    row = {t: i for i, t in enumerate(texts)}
    table = torch.from_numpy(np.stack([vectors[t] for t in texts]).astype(np.float32))  # [T, D]
    width = max(len(ex.texts) for ex in examples)
    n, d = len(examples), table.shape[1]
    idx = torch.zeros(n, width, dtype=torch.long)
    length = torch.ones(n, width, dtype=torch.long)
    valid = torch.zeros(n, width, dtype=torch.bool)
    positive = torch.zeros(n, width, dtype=torch.bool)
    for i, ex in enumerate(examples):
        k = len(ex.texts)
        idx[i, :k] = torch.tensor([row[t] for t in ex.texts])
        length[i, :k] = torch.from_numpy(np.clip(ex.lengths, 1, max_hops))
        valid[i, :k] = True
        positive[i, :k] = torch.from_numpy(ex.positive)
    q = torch.from_numpy(np.stack([ex.q for ex in examples]).astype(np.float32))
    gen = torch.Generator().manual_seed(seed)
    weight = torch.zeros(d, d, requires_grad=True)
    bias = torch.zeros(max_hops, requires_grad=True)
    opt = torch.optim.Adam([weight, bias], lr=lr)
    for _ in range(epochs):
        for batch in torch.randperm(n, generator=gen).split(batch_size):
            qb = q[batch]
            score = ((qb + qb @ weight) @ table.T).gather(1, idx[batch]) + bias[length[batch] - 1]
            logits = (SCALE * score).masked_fill(~valid[batch], float("-inf"))
            loss = (torch.logsumexp(logits, 1) - torch.logsumexp(logits.masked_fill(~positive[batch], float("-inf")), 1)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return PathRanker(weight.detach().numpy().copy(), bias.detach().numpy().copy(), embedder)


def train_path_ranker(
    settings: Settings,
    dataset: str,
    config: PathTraining = PathTraining(),
    split: str | None = None,
    save: bool = True,
    progress: Progress | None = None,
    retriever: Retriever | None = None,
) -> PathRankerReport:
    """Train ``dataset``'s ranker as ``config`` says (questions of ``split`` only, when given),
    report its held-out top-1 against the cosine's, and store it unless ``save`` is False."""
    config.check()
    hops = sorted(set(config.hops))
    began = time.perf_counter()
    progress = progress or NO_PROGRESS
    own = retriever is None
    r = retriever or Retriever(settings)
    try:
        info = r.knowledge_graph(dataset, "train-paths")
        r.warm(info.name, max(hops))
        rng = np.random.default_rng(config.seed)
        train, held, counts = [], {}, {}
        for h in hops:
            qs = questions_of(r, info.name, split, hops=h, limit=config.limit, skip=config.skip)
            if not qs:
                raise RetrievalError(f"dataset '{dataset}' has no questions with hops = {h} after the first {config.skip}")
            counts[str(h)] = len(qs)
            ex = examples_of(r, info.name, qs, replace(RetrievalParams(), hops=h), progress)
            order = rng.permutation(len(ex))
            cut = round(len(ex) * HELD_OUT)
            held[str(h)] = [ex[i] for i in order[:cut]]
            train += [ex[i] for i in order[cut:]]
        if not train:
            raise RetrievalError(f"no question of '{dataset}' has a relation path reaching its answers: nothing to train on")
        vectors = r.paths.cache
        ranker = fit(train, vectors, r.embedder.name, max(hops), config.epochs, config.lr, seed=config.seed)
        report = PathRankerReport(
            dataset=info.name,
            questions=counts,
            examples={h: sum(ex.hops == int(h) for ex in train) + len(held[h]) for h in held},
            held_out={h: len(v) for h, v in held.items()},
            top1_cosine={h: round(top1(v, None, vectors), 4) for h, v in held.items()},
            top1_trained={h: round(top1(v, ranker, vectors), 4) for h, v in held.items()},
            seconds=round(time.perf_counter() - began, 1),
            saved=save,
        )
        if save:
            save_ranker(r.conn, info.name, replace(ranker, report={**report.to_json(), **asdict(config), "split": split}))
            r.rankers.pop(info.name, None)
        return report
    finally:
        if own:
            r.close()
