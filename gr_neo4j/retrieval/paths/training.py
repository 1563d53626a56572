"""`gr-neo4j train-paths`: train a dataset's relation-path ranker (:mod:`.ranker`) on its questions.

Each training question is retrieved as a user types it (brackets removed, topic entities linked)
and its candidate graph walked from the roots exactly as the ``paths`` mode walks it. Every relation
path up to the question's hop count is labelled by how well the set of its ends matches the gold
answers (F1); the paths of the best F1, when it is above zero, are the positives. The ranker is
trained with a listwise loss: the softmax over a question's paths should put its mass on the
positives. A seeded fifth of the questions is held out, and the share of them whose top-ranked
path is a positive (top-1) is reported before (cosine only) and after training, per hop count
(and per hop count walked deeper than it needs, see :class:`~.params.PathTraining`).

Which questions: ``limit`` per hop count, spread evenly over those after the first ``skip`` in
uid order (MetaQA's files group questions by template, so a contiguous slice misses whole
templates), so they stay disjoint from ``eval-retrieval``'s (the first 300).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ...errors import NotFound, NotReady
from ...progress import NO_PROGRESS, Progress
from ...settings import Settings
from ..batch import Question, questions_of, spread
from ..candidates import DatasetInfo
from ..linking import masked, masked_names, unbracketed
from ..modes import path_roots
from ..params import PathTraining, RetrievalParams
from ..retriever import Retriever, borrowed
from .hops import fit_hop_model
from .plan import STRENGTHS, fit_path_plan, plan_term
from .ranker import SCALE, PathRanker, Step, save_ranker, step_arrays
from .scoring import path_steps, walks_of

HELD_OUT = 0.2
# Of the held-out questions' best path scores: a path scoring below this, and asked for by no word
# of the question, is not an answer. Low, so that few answerable questions fall under it.
ANSWER_FLOOR_QUANTILE = 0.05
STEP_RANK = 32  # K of the step term: 9 relations x 2 directions x 3 places need few dimensions


@dataclass(frozen=True)
class PathExample:
    """One question's relation ``paths`` ``[P]`` (each its (relation text, backwards) steps) and
    which are ``positive`` ``[P]`` bool; ``q`` ``[D]`` the question vector; ``hops``: how deep
    it was walked."""

    q: np.ndarray
    hops: int
    paths: list[tuple[Step, ...]]
    positive: np.ndarray
    asked: int = 0  # the hop count the question is tagged with (0: unknown)
    masked: str = ""  # the question with the entities it names masked (:func:`~..linking.masked`)
    uid: str = ""  # the Question's

    @property
    def texts(self) -> list[str]:
        return [" ".join(rel for rel, _ in p) for p in self.paths]

    @property
    def lengths(self) -> np.ndarray:
        return np.array([len(p) for p in self.paths])


@dataclass(frozen=True)
class PathRankerReport:
    """What ``train_path_ranker`` did: questions used per hop count (with a positive path), the
    held-out top-1 before and after training per hop count (and with the path plan, at the
    strength tuned on them), the hop model's held-out accuracy per hop count, and the seconds it
    took."""

    dataset: str
    questions: dict[str, int]
    examples: dict[str, int]
    held_out: dict[str, int]
    top1_cosine: dict[str, float]
    top1_trained: dict[str, float]
    hop_accuracy: dict[str, float]
    seconds: float
    saved: bool
    top1_planned: dict[str, float] = field(default_factory=dict)
    plan_strength: float = 0.0
    answer_floor: float | None = None

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


def examples_of(
    r: Retriever, dataset: str, questions: Sequence[Question], params: RetrievalParams, progress: Progress = NO_PROGRESS, label: str = "",
    hops: int | None = None,
) -> list[PathExample]:
    """The labelled relation paths of each question that has a path reaching a gold answer.

    ``hops``: the hop count the questions are tagged with. The positives are then the best paths
    of that many relations when one of them reaches a gold answer: "who wrote the films that share
    writers with X" means three relations, even where the writer of X alone matches the answers as
    well (it often does, and labelling it would teach the ranker to stop short)."""
    out = []
    with progress.phase(label or f"{params.hops}-hop questions", total=len(questions), unit="questions") as advance:
        for question in questions:
            f = r.fetch(unbracketed(question.text), dataset, params=params)
            c = f.candidates
            steps, f1 = path_f1(c, path_roots(c, f.scored, params), params.hops, set(question.answer_keys))
            advance(1)
            if len(f1) == 0 or f1.max() <= 0:
                continue
            paths = [path_steps(s, c.rel_texts) for s in steps]
            own = np.array([len(p) == hops for p in paths])
            if own.any() and f1[own].max() > 0:
                f1 = np.where(own, f1, -1.0)
            ex = PathExample(f.scored.q, params.hops, paths, f1 == f1.max(), hops or 0, masked(f.question, f.linked), question.uid)
            r.paths.vectors(ex.texts + list(c.rel_texts))  # embedded once, kept in the retriever's cache
            out.append(ex)
    return out


def example_scores(examples: Sequence[PathExample], ranker: PathRanker | None, vectors: dict[str, np.ndarray]) -> Iterator[np.ndarray]:
    """``[P]`` the scores of each example's paths as retrieval scores them: ``ranker`` None, the
    cosine alone; else the ranker, with its path plan when it has one (``vectors`` then holds the
    masked questions too)."""
    rels = sorted({rel for ex in examples for p in ex.paths for rel, _ in p})
    rel_row = {t: i for i, t in enumerate(rels)}
    projection = ranker.step_projection(np.stack([vectors[t] for t in rels])) if ranker is not None and rels else None
    plan = ranker.plan if ranker is not None and ranker.plan is not None and ranker.plan.strength > 0 else None
    for ex in examples:
        v = np.stack([vectors[t] for t in ex.texts])
        if ranker is None:
            s = v @ ex.q
        else:
            s = ranker.scores(ex.q, v, ex.lengths, *step_arrays(ex.paths, rel_row), projection)
        if plan is not None:
            s = s + plan.strength * plan_term(plan.log_probabilities(vectors[ex.masked], ex.masked), ex.paths)
        yield s


def top1(examples: Sequence[PathExample], ranker: PathRanker | None, vectors: dict[str, np.ndarray]) -> float:
    """Share of ``examples`` whose best-scored path (shorter first on ties, as the selection ranks)
    is a positive (see :func:`example_scores`)."""
    if not examples:
        return 0.0
    hits = 0
    for ex, s in zip(examples, example_scores(examples, ranker, vectors)):
        best = min(range(len(s)), key=lambda i: (-float(s[i]), int(ex.lengths[i])))
        hits += bool(ex.positive[best])
    return hits / len(examples)


def answer_floor(examples: Sequence[PathExample], ranker: PathRanker, vectors: dict[str, np.ndarray]) -> float | None:
    """The :data:`ANSWER_FLOOR_QUANTILE` quantile of the best path score of held-out ``examples``
    (questions the graph answers): a question whose best path scores below it, and which no word
    asks for by the zero-shot reading, is not in the graph (:func:`~.retriever.not_in_graph`)."""
    best = [float(s.max()) for s in example_scores(examples, ranker, vectors) if len(s)]
    return round(float(np.quantile(best, ANSWER_FLOOR_QUANTILE)), 4) if best else None


def fit(
    examples: Sequence[PathExample], vectors: dict[str, np.ndarray], embedder: str, max_hops: int,
    epochs: int = 30, lr: float = 1e-3, batch_size: int = 32, seed: int = 0, rank: int = STEP_RANK,
) -> PathRanker:
    """Train the ranker's W, B, U and bias (from zero; A from a seeded random draw) with Adam on
    the listwise loss. ``vectors`` holds every path text and every relation text."""
    import torch

    torch.manual_seed(seed)
    texts = sorted({t for ex in examples for t in ex.texts})
    rels = sorted({rel for ex in examples for p in ex.paths for rel, _ in p})
    row = {t: i for i, t in enumerate(texts)}
    rel_row = {t: i for i, t in enumerate(rels)}
    table = torch.from_numpy(np.stack([vectors[t] for t in texts]).astype(np.float32))  # [T, D]
    rel_table = torch.from_numpy(np.stack([vectors[t] for t in rels]).astype(np.float32))  # [R, D]
    width = max(len(ex.paths) for ex in examples)
    n, d, h = len(examples), table.shape[1], max_hops
    idx = torch.zeros(n, width, dtype=torch.long)
    length = torch.ones(n, width, dtype=torch.long)
    valid = torch.zeros(n, width, dtype=torch.bool)
    positive = torch.zeros(n, width, dtype=torch.bool)
    step_rel = torch.zeros(n, width, h, dtype=torch.long)
    step_back = torch.zeros(n, width, h, dtype=torch.long)
    step_on = torch.zeros(n, width, h, 1)
    for i, ex in enumerate(examples):
        k = len(ex.paths)
        idx[i, :k] = torch.tensor([row[t] for t in ex.texts])
        length[i, :k] = torch.from_numpy(np.clip(ex.lengths, 1, max_hops))
        valid[i, :k] = True
        positive[i, :k] = torch.from_numpy(ex.positive)
        for j, path in enumerate(ex.paths):
            for t, (rel, back) in enumerate(path[:h]):
                step_rel[i, j, t], step_back[i, j, t], step_on[i, j, t] = rel_row[rel], int(back), 1.0
    q = torch.from_numpy(np.stack([ex.q for ex in examples]).astype(np.float32))
    gen = torch.Generator().manual_seed(seed)
    weight = torch.zeros(d, d, requires_grad=True)
    bias = torch.zeros(h, requires_grad=True)
    length_q = torch.zeros(h, d, requires_grad=True)
    step_q = (torch.randn(d, rank, generator=gen) / d**0.5).requires_grad_()
    step_w = torch.zeros(h, 2, d, rank, requires_grad=True)
    opt = torch.optim.Adam([weight, bias, length_q, step_q, step_w], lr=lr)
    for _ in range(epochs):
        for batch in torch.randperm(n, generator=gen).split(batch_size):
            qb = q[batch]
            at = length[batch] - 1
            score = ((qb + qb @ weight) @ table.T).gather(1, idx[batch]) + bias[at] + (qb @ length_q.T).gather(1, at)
            proj = torch.einsum("rd,hbdk->hbrk", rel_table, step_w)  # [H, 2, R, K]
            z = sum(proj[t][step_back[batch][..., t], step_rel[batch][..., t]] * step_on[batch][..., t, :] for t in range(h))
            score = score + (z * (qb @ step_q)[:, None, :]).sum(-1)
            logits = (SCALE * score).masked_fill(~valid[batch], float("-inf"))
            loss = (torch.logsumexp(logits, 1) - torch.logsumexp(logits.masked_fill(~positive[batch], float("-inf")), 1)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()

    def out(t):
        return t.detach().numpy().copy()

    return PathRanker(out(weight), out(bias), embedder, step_q=out(step_q), step_rel=out(step_w), length_q=out(length_q))


def fit_plan(ranker: PathRanker, train: Sequence[PathExample], held: dict[str, list[PathExample]], vectors: dict[str, np.ndarray], seed: int = 0) -> PathRanker:
    """``ranker`` with a path plan (:mod:`.plan`) fitted on the ``train`` examples walked as
    deep as asked, its strength the one of :data:`~.plan.STRENGTHS` under which most
    ``held`` examples rank a positive first (``vectors`` holds their masked questions)."""
    own = [ex for ex in train if ex.hops == ex.asked and ex.positive.any()]
    if not own:
        return ranker
    plan = fit_path_plan(
        np.stack([vectors[ex.masked] for ex in own]), [ex.masked for ex in own],
        [[p for p, pos in zip(ex.paths, ex.positive) if pos] for ex in own], seed=seed,
    )
    held_out = [ex for v in held.values() for ex in v]
    best = max(STRENGTHS, key=lambda k: (top1(held_out, replace(ranker, plan=replace(plan, strength=k)), vectors), -k))
    return replace(ranker, plan=replace(plan, strength=best))


def hop_questions(
    r: Retriever, dataset: str, split: str | None, hops: Sequence[int], skip: int, unseen: set[str] = frozenset(),
) -> tuple[list[str], list[str], np.ndarray]:
    """What the hop model learns from: every question of ``dataset`` (and ``split``) with a hop
    count in ``hops`` after the first ``skip`` of each, but those in ``unseen`` (held out), masked
    by its topic entities' texts (by the linker when none of them occurs in it), and ``[N]`` the
    hop counts. All of them, not only those fetched for the ranker: it costs no retrieval, and
    templates missing from the ranker's sample are where the hop model errs."""
    uids, texts, labels = [], [], []
    for h in hops:
        for row in r.conn.read("path_training_hop_questions", dataset=dataset, split=split, hops=h, skip=skip):
            if row["uid"] in unseen:
                continue
            text = unbracketed(row["text"])
            m = masked_names(text, row["topics"])
            uids.append(row["uid"])
            texts.append(m if m != text else masked(text, r.link(text, dataset)))
            labels.append(h)
    return uids, texts, np.array(labels, dtype=np.int64)


def held_out_split(examples: Sequence[PathExample], rng: np.random.Generator) -> tuple[list[PathExample], list[PathExample]]:
    """A seeded :data:`HELD_OUT` share of ``examples`` and the rest: (held out, train)."""
    order = rng.permutation(len(examples))
    cut = round(len(examples) * HELD_OUT)
    return [examples[i] for i in order[:cut]], [examples[i] for i in order[cut:]]


def stored_ranker(r: Retriever, dataset: str, part: str) -> tuple[DatasetInfo, PathRanker]:
    """``dataset`` (a knowledge graph) and its stored ranker, which a refit of ``part`` goes into."""
    info = r.knowledge_graph(dataset, "train-paths")
    ranker = r.path_scorer(info.name).ranker
    if ranker is None:
        raise NotReady(f"dataset '{dataset}' has no trained ranker to hold a {part}: run `gr-neo4j train-paths -d {dataset}` first")
    return info, ranker


def hop_accuracy(examples: Sequence[PathExample], ranker: PathRanker, vectors: dict[str, np.ndarray]) -> float:
    """Share of ``examples`` whose hop count the ranker's hop model predicts (``vectors`` holds
    their masked questions)."""
    if not examples:
        return 0.0
    return sum(int(np.argmax(ranker.hop_probabilities(vectors[ex.masked], ex.masked))) + 1 == ex.asked for ex in examples) / len(examples)


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
    with borrowed(settings, retriever) as r:
        info = r.knowledge_graph(dataset, "train-paths")
        r.warm(info.name, max(hops))
        rng = np.random.default_rng(config.seed)
        train, held, counts, examples = [], {}, {}, {}
        deepest = max(hops)
        for h in hops:
            qs = spread(questions_of(r, info.name, split, hops=h, skip=config.skip), config.limit)
            if not qs:
                raise NotFound(f"dataset '{dataset}' has no questions with hops = {h} after the first {config.skip}")
            runs = [(str(h), qs, h)]
            if h < deepest and config.deep:
                # Walked deeper than it needs; spread over the slice, as uid order groups question templates.
                runs.append((f"{h} in {deepest}", spread(qs, config.deep), deepest))
            for key, asked, depth in runs:
                counts[key] = len(asked)
                ex = examples_of(r, info.name, asked, replace(RetrievalParams(), hops=depth), progress, f"{h}-hop questions, {depth} deep", hops=h)
                examples[key] = len(ex)
                held[key], rest = held_out_split(ex, rng)
                train += rest
        if not train:
            raise NotFound(f"no question of '{dataset}' has a relation path reaching its answers: nothing to train on")
        vectors = r.paths.cache
        ranker = fit(train, vectors, r.embedder.name, max(hops), config.epochs, config.lr, seed=config.seed)
        held_out = [ex for v in held.values() for ex in v]
        _, texts, labels = hop_questions(r, info.name, split, hops, config.skip, {ex.uid for ex in held_out})
        r.paths.vectors(sorted(set(texts) | {ex.masked for ex in train + held_out}))
        hops_q, hops_bias = fit_hop_model(np.stack([vectors[t] for t in texts]), texts, labels, max(hops), seed=config.seed)
        trained = replace(ranker, hops_q=hops_q, hops_bias=hops_bias)
        ranker = fit_plan(trained, train, held, vectors, seed=config.seed)
        report = PathRankerReport(
            dataset=info.name,
            questions=counts,
            examples=examples,
            held_out={h: len(v) for h, v in held.items()},
            top1_cosine={h: round(top1(v, None, vectors), 4) for h, v in held.items()},
            top1_trained={h: round(top1(v, trained, vectors), 4) for h, v in held.items()},
            top1_planned={h: round(top1(v, ranker, vectors), 4) for h, v in held.items()},
            plan_strength=ranker.plan.strength if ranker.plan is not None else 0.0,
            answer_floor=answer_floor(held_out, ranker, vectors),
            hop_accuracy={h: round(hop_accuracy(v, ranker, vectors), 4) for h, v in held.items()},
            seconds=round(time.perf_counter() - began, 1),
            saved=save,
        )
        if save:
            save_ranker(r.conn, info.name, replace(ranker, report={**report.to_json(), **asdict(config), "split": split}))
            r.rankers.pop(info.name, None)
        return report


@dataclass(frozen=True)
class HopModelReport:
    """What ``refit_hop_model`` did: questions per hop count, held out per hop count, the held-out
    accuracy per hop count, and the seconds it took."""

    dataset: str
    questions: dict[str, int]
    held_out: dict[str, int]
    hop_accuracy: dict[str, float]
    seconds: float
    saved: bool

    def to_json(self) -> dict:
        return dict(self.__dict__)


def refit_hop_model(
    settings: Settings, dataset: str, config: PathTraining = PathTraining(), split: str | None = None, save: bool = True,
    progress: Progress | None = None, retriever: Retriever | None = None,
) -> HopModelReport:
    """Fit ``dataset``'s hop model anew on its questions (:func:`hop_questions`) and store it in
    its trained ranker, the relation-path weights untouched: no retrieval, so minutes where
    ``train_path_ranker`` takes an hour. A seeded fifth of the questions is held out for the
    report (and left out of the fit)."""
    config.check()
    hops = sorted(set(config.hops))
    began = time.perf_counter()
    with borrowed(settings, retriever) as r:
        info, ranker = stored_ranker(r, dataset, "hop model")
        with (progress or NO_PROGRESS).phase("questions read and masked", total=1, unit="steps") as advance:
            _, texts, labels = hop_questions(r, info.name, split, hops, config.skip)
            advance(1)
        if not texts:
            raise NotFound(f"dataset '{dataset}' has no questions with hops in {hops} after the first {config.skip}")
        held = np.random.default_rng(config.seed).random(len(texts)) < HELD_OUT
        unique = sorted(set(texts))
        row = dict(zip(unique, range(len(unique))))
        x = r.paths.vectors(unique)[[row[t] for t in texts]]
        fit_rows = np.flatnonzero(~held)
        hops_q, hops_bias = fit_hop_model(x[fit_rows], [texts[i] for i in fit_rows], labels[fit_rows], max(hops), seed=config.seed)
        ranker = replace(ranker, hops_q=hops_q, hops_bias=hops_bias)
        right = {h: [int(np.argmax(ranker.hop_probabilities(x[i], texts[i]))) + 1 == h for i in np.flatnonzero(held & (labels == h))] for h in hops}
        report = HopModelReport(
            dataset=info.name,
            questions={str(h): int((labels == h).sum()) for h in hops},
            held_out={str(h): len(v) for h, v in right.items()},
            hop_accuracy={str(h): round(float(np.mean(v)), 4) if v else 0.0 for h, v in right.items()},
            seconds=round(time.perf_counter() - began, 1),
            saved=save,
        )
        if save:
            save_ranker(r.conn, info.name, replace(ranker, report={**ranker.report, "hop_model": report.to_json()}))
            r.rankers.pop(info.name, None)
        return report


@dataclass(frozen=True)
class PathPlanReport:
    """What ``refit_path_plan`` did: questions fetched and examples per hop count, held out per hop
    count, their top-1 under the stored ranker alone and with the new plan, its strength, the
    seconds it took."""

    dataset: str
    questions: dict[str, int]
    examples: dict[str, int]
    held_out: dict[str, int]
    top1_trained: dict[str, float]
    top1_planned: dict[str, float]
    plan_strength: float
    seconds: float
    saved: bool

    def to_json(self) -> dict:
        return dict(self.__dict__)


def refit_path_plan(
    settings: Settings, dataset: str, config: PathTraining = PathTraining(), split: str | None = None, save: bool = True,
    progress: Progress | None = None, retriever: Retriever | None = None,
) -> PathPlanReport:
    """Fit ``dataset``'s path plan anew into its stored ranker, the path weights and hop model
    untouched: ``config.limit`` questions per hop count (spread after ``config.skip``) are
    retrieved as deep as asked, a seeded fifth held out to tune the plan's strength and report."""
    config.check()
    began = time.perf_counter()
    progress = progress or NO_PROGRESS
    with borrowed(settings, retriever) as r:
        try:
            info, stored = stored_ranker(r, dataset, "path plan")
            base = replace(stored, plan=None)
            r.rankers[info.name] = base  # examples are fetched as the ranker alone would rank them
            r.warm(info.name, max(config.hops))
            rng = np.random.default_rng(config.seed)
            train, held, counts, examples = [], {}, {}, {}
            for h in sorted(set(config.hops)):
                qs = spread(questions_of(r, info.name, split, hops=h, skip=config.skip), config.limit)
                if not qs:
                    raise NotFound(f"dataset '{dataset}' has no questions with hops = {h} after the first {config.skip}")
                ex = examples_of(r, info.name, qs, replace(RetrievalParams(), hops=h), progress, f"{h}-hop questions", hops=h)
                counts[str(h)], examples[str(h)] = len(qs), len(ex)
                held[str(h)], rest = held_out_split(ex, rng)
                train += rest
            if not any(ex.positive.any() for ex in train):
                raise NotFound(f"no question of '{dataset}' has a relation path reaching its answers: nothing to fit the path plan on")
            vectors = r.paths.cache
            r.paths.vectors(sorted({ex.masked for ex in train} | {ex.masked for v in held.values() for ex in v}))
            ranker = fit_plan(base, train, held, vectors, seed=config.seed)
            report = PathPlanReport(
                dataset=info.name,
                questions=counts,
                examples=examples,
                held_out={h: len(v) for h, v in held.items()},
                top1_trained={h: round(top1(v, base, vectors), 4) for h, v in held.items()},
                top1_planned={h: round(top1(v, ranker, vectors), 4) for h, v in held.items()},
                plan_strength=ranker.plan.strength if ranker.plan is not None else 0.0,
                seconds=round(time.perf_counter() - began, 1),
                saved=save,
            )
            if save:
                # The plan moves the scores, so the floor under which an unasked path is not an answer moves too.
                floor = answer_floor([ex for v in held.values() for ex in v], ranker, vectors)
                save_ranker(r.conn, info.name, replace(ranker, report={**stored.report, "path_plan": report.to_json(), "answer_floor": floor}))
            return report
        finally:  # a caller's retriever reads the stored ranker again on its next retrieval
            r.rankers.clear()
