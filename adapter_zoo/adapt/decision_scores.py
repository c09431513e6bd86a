"""``adapt``'s decision scorer: every candidate's per-list AP on the decision lists
(:class:`DecisionScorer`), and the zoo's centroid strategies planned (:func:`zoo_strategies`)
and scored (:func:`score_zoo`) as candidates beside the base and the trained adapters."""

from __future__ import annotations

import logging
import time

import numpy as np

from adapter_zoo.adapt import plan as planning
from adapter_zoo.adapt.decide import list_average_precisions
from adapter_zoo.adapt.zoo_members import MULTITASK_KINDS
from adapter_zoo.compose.fusion import fuse
from adapter_zoo.loading import load
from adapter_zoo.precision import current_precision
from adapter_zoo.registry import kind_for_card
from stackexchange.lists import bm25_candidate_scores

logger = logging.getLogger(__name__)

# the zero-shot base's candidates: at its own length and at LONG_LENGTH tokens
LONG_LENGTH = 512
BASE = "base"
BASE_LONG = f"{BASE}@{LONG_LENGTH}"


def fusion_spec(models, weights) -> str:
    """The spec of ``models`` fused with BM25 (z-scores), ``weights`` theirs and BM25's last.

    Example:
        >>> fusion_spec(["beer", "sbert:minilm-l6"], (0.45, 0.45, 0.1))
        'fusion:beer*0.45+sbert:minilm-l6*0.45+bm25*0.1'
    """
    spec = "fusion:" + "+".join(f"{m}*{w:g}" for m, w in zip(models, weights))
    return spec + f"+bm25*{weights[-1]:g}"


class DecisionScorer:
    """Each candidate's per-list AP on the decision lists, its member scores kept for
    fusions."""

    def __init__(self, lists):
        self.lists = lists
        self.pairs = lists.pairs()
        self.scores: dict[str, np.ndarray] = {}
        self.aps: dict[str, np.ndarray] = {}
        self.models: dict[str, str] = {}
        self.seconds: dict[str, float] = {}  # each scoring's wall time (the budget's rate)
        self.fused_members: dict[str, tuple] = {}  # fusion with BM25 -> (members, weights)
        self.bm25: np.ndarray | None = None  # BM25's scores of the lists' pairs, once
        self.vectors: tuple | None = None  # the base's (query, candidate) rows of each pair

    def _record(self, candidate: str, scores, model: str) -> None:
        self.scores[candidate] = np.asarray(scores, dtype=np.float64)
        self.aps[candidate] = list_average_precisions(scores, self.lists.labels)
        self.models[candidate] = model
        logger.info("adapt: %s MAP %.4f on the decision lists", candidate,
                    self.aps[candidate].mean())  # fmt: skip

    def record(self, candidate: str, scores, model: str) -> None:
        """Record ``candidate``'s flat scores over the lists' pairs, computed elsewhere."""
        self._record(candidate, scores, model)

    def add(self, candidate: str, model: str, *, max_length: int | None = None,
            embedder=None) -> None:  # fmt: skip
        """Score ``candidate`` (the model ``model``) on the lists; with ``embedder`` (the
        base's :class:`~adapter_zoo.adapt.negatives.CachedEmbedder`), from its embeddings of
        each pair's texts, kept (``vectors``: the query feedback's grid reuses them), its
        cosines computed as a bi-encoder's ``score`` computes them, and its time the
        embedder's."""
        if model in self.models.values() and max_length is None:
            known = next(c for c, m in self.models.items() if m == model)
            self._record(candidate, self.scores[known], model)
            return
        if embedder is not None:
            scores = self._embedded(embedder)
            self.seconds[candidate] = embedder.seconds
            self._record(candidate, scores, model)
            return
        began = time.monotonic()
        ranker = load(model, max_length=max_length, precision=current_precision())
        scores = ranker.score(self.pairs, progress=True)
        self.seconds[candidate] = time.monotonic() - began
        label = model if max_length is None else f"{model}@{max_length}"
        self._record(candidate, scores, label)

    def _embedded(self, embed) -> np.ndarray:
        texts: dict[str, int] = {}
        for query, candidate in self.pairs:
            texts.setdefault(query, len(texts))
            texts.setdefault(candidate, len(texts))
        rows = np.asarray(embed(list(texts)), dtype=np.float32)
        self.vectors = (rows[[texts[q] for q, _ in self.pairs]],
                        rows[[texts[c] for _, c in self.pairs]])  # fmt: skip
        return np.einsum("ij,ij->i", *self.vectors)

    def member_scores(self, model: str) -> np.ndarray:
        known = next((c for c, m in self.models.items() if m == model), None)
        if known is None:
            self.add(model, model)
            known = model
        return self.scores[known]

    def fuse(self, candidate: str, members, weights) -> None:
        """A fusion of candidates and ``bm25`` (z-scores); ``members`` name candidates, BM25
        is added last."""
        if self.bm25 is None:
            bm25 = bm25_candidate_scores(self.lists.queries, self.lists.candidates)
            self.bm25 = np.concatenate(bm25)
        parts = [self.scores[m] for m in members] + [self.bm25]
        spec = fusion_spec([self.models[m] for m in members], weights)
        self.fuse_scores(candidate, parts, weights, spec)
        self.fused_members[candidate] = (tuple(members), tuple(weights))

    def fuse_scores(self, candidate: str, parts, weights, spec: str) -> None:
        """Record ``candidate``: the per-list fusion (:func:`adapter_zoo.compose.fusion.fuse`)
        of ``parts``, flat score arrays over the decision lists' pairs."""
        fused, start = [], 0
        for candidates in self.lists.candidates:
            stop = start + len(candidates)
            fused.append(fuse([p[start:stop] for p in parts], weights))
            start = stop
        self._record(candidate, np.concatenate(fused), spec)

    def single_models(self) -> list[str]:
        """Candidates that are one model by name (a fusion can name them as members)."""
        return [c for c, model in self.models.items() if ":" not in model or
                model.startswith(("sbert:", "prf:"))]  # fmt: skip

    def map_by_kind(self, candidate: str) -> dict[str, float]:
        kinds = np.asarray(self.lists.kinds)
        return {
            kind: round(float(self.aps[candidate][kinds == kind].mean()), 4)
            for kind in sorted(set(self.lists.kinds))
        }


def zoo_strategies(target_data, centroids, cards, top_k, zero_shot) -> dict:
    """The zoo's centroid strategies for the target (no scoring yet): what they choose, for
    the card, the scorings and the entries the training candidates continue."""
    # looked up per call: tests monkeypatch zoo.domain.domain_centroid
    from adapter_zoo.zoo.domain import domain_centroid

    if not centroids:
        return {"entries": 0}
    target_centroid = domain_centroid(target_data.texts())
    multitask = {n: c for n, c in centroids.items()
                 if kind_for_card(cards[n]).name in MULTITASK_KINDS}  # fmt: skip
    single = {n: c for n, c in centroids.items() if n not in multitask}
    info: dict = {"entries": len(centroids), "plans": {}}
    if single:
        nearest = planning.plan_adaptation(target_centroid, single, planning.NEAREST)
        info["similarities"] = {n: round(s, 4) for n, s in nearest.similarities.items()}
        info["plans"]["nearest"] = nearest
        info["plans"]["fusion"] = planning.plan_adaptation(
            target_centroid, single, planning.FUSION, top_k=top_k
        )
        rule = planning.plan_adaptation(target_centroid, single, planning.CENTROID, top_k=top_k,
                                        base=zero_shot)  # fmt: skip
        info["plans"]["rule"] = rule
        info["centroid_rule"] = rule.reason
    if multitask:
        best = planning.plan_adaptation(target_centroid, multitask, planning.NEAREST)
        info["plans"]["multitask"] = best
    return info


def score_zoo(scorer, zoo_plans: dict, *, extra: bool) -> None:
    """Score the zoo's nearest adapter, and with ``extra`` its fusion, the centroid rule and
    its multi-task adapter, on the decision lists."""
    plans = zoo_plans.get("plans", {})
    if "nearest" in plans:
        scorer.add("zoo:nearest", plans["nearest"].members[0])
    if not extra:
        return
    if "fusion" in plans:
        fusion, rule = plans["fusion"], plans["rule"]
        _fuse_members(scorer, "zoo:fusion", fusion.members, fusion.weights)
        if rule.strategy == planning.FUSION:
            _fuse_members(scorer, "zoo:centroid-rule", rule.members, rule.weights)
        else:
            scorer.add("zoo:centroid-rule", rule.members[0])
    if "multitask" in plans:
        scorer.add("zoo:multitask", plans["multitask"].members[0])


def _fuse_members(scorer, candidate, members, weights) -> None:
    """Record ``candidate``: the fusion of the zoo entries ``members`` (no BM25)."""
    parts = [scorer.member_scores(m) for m in members]
    spec = "fusion:" + "+".join(f"{m}*{w:.4f}" for m, w in zip(members, weights))
    scorer.fuse_scores(candidate, parts, weights, spec)
