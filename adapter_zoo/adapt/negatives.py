"""Decision lists that judge every candidate alike: negatives in equal shares from BM25's
nearest texts and the zero-shot base's nearest embeddings.

A list whose negatives are all BM25's nearest texts is easy for a model that learned the
target's phrasing (BM25's negatives share the query's words, not its meaning) and hard for
BM25 itself, so a decision on such lists overrates the one and underrates the other. Drawing
half the negatives from the base's nearest embeddings gives both kinds of confusion their
share. The base's negatives are filtered as the training's base miner filters them
(:func:`adapter_zoo.training.data.embedding_neighbours`): never a copy of a positive's text,
and only those below :data:`~adapter_zoo.training.data.FALSE_NEGATIVE_MARGIN` of the query's
similarity to its positive (a near-copy is likely a second answer, not a negative).

The base draws from the texts BM25's lists of the same part hold (every list's candidates),
so a list's negatives are texts the decision scores anyway: the base embeds each once, and
the decision's scoring of the base reads the same rows (:class:`CachedEmbedder`).

Example:
    >>> mixed_negatives([5, 6, 7, 8], [6, 9, 3, 4], 4)
    ([5, 6, 7, 9], ['bm25', 'base', 'bm25', 'base'])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from adapter_zoo.training.data import FALSE_NEGATIVE_MARGIN

BM25_SOURCE, BASE_SOURCE = "bm25", "base"


def mixed_negatives(bm25: Sequence, base: Sequence, want: int) -> tuple[list, list[str]]:
    """Up to ``want`` negatives taken in turn from ``bm25`` and ``base`` (each best first),
    so each source gives half (BM25 the odd one), each text once: a text the other source
    chose first is counted to it, and this source's next text is taken instead. A source that runs short leaves its turns to
    the other. Returns the negatives and each one's source."""
    chosen: list = []
    sources: list[str] = []
    taken: set = set()
    queues = {BM25_SOURCE: list(bm25), BASE_SOURCE: list(base)}
    turn = BM25_SOURCE
    while len(chosen) < want and any(queues.values()):
        queue = queues[turn] or queues[BASE_SOURCE if turn == BM25_SOURCE else BM25_SOURCE]
        item = queue.pop(0)
        if item not in taken:
            taken.add(item)
            chosen.append(item)
            sources.append(turn if queue is queues[turn] else _other(turn))
            turn = _other(turn)
    return chosen, sources


def _other(source: str) -> str:
    return BASE_SOURCE if source == BM25_SOURCE else BM25_SOURCE


def base_nearest(
    query: np.ndarray,
    positives: np.ndarray,
    pool: np.ndarray,
    excluded: np.ndarray,
    width: int,
) -> list[int]:
    """Indices of ``pool``'s rows the base ranks nearest to ``query``, best first, at most
    ``width``: none ``excluded`` (a positive or a copy of one's text) and none at or above
    :data:`FALSE_NEGATIVE_MARGIN` of the query's similarity to its nearest positive."""
    sims = pool @ query
    own = float(np.max(positives @ query)) if len(positives) else np.inf
    ceiling = own - (1 - FALSE_NEGATIVE_MARGIN) * abs(own)
    masked = np.where(excluded | (sims >= ceiling), -np.inf, sims)
    order = np.argsort(-masked, kind="stable")[:width]
    return [int(i) for i in order if np.isfinite(masked[i])]


class CachedEmbedder:
    """The zero-shot base's unit embeddings of texts, each text encoded once: the decision
    lists' negatives and the decision's scoring of the base read the same rows.

    Args:
        load_encoder: called once, on the first texts: the base as a bi-encoder (anything
            with ``encode``).

    Attributes:
        seconds: wall time spent encoding.
    """

    def __init__(self, load_encoder: Callable):
        self._load, self._encoder = load_encoder, None
        self.rows: dict[str, np.ndarray] = {}
        self.seconds = 0.0

    @property
    def encoder(self):
        if self._encoder is None:
            self._encoder = self._load()
        return self._encoder

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.rows]
        if new:
            began = time.monotonic()
            self.rows.update(zip(new, np.asarray(self.encoder.encode(new), np.float32)))
            self.seconds += time.monotonic() - began
        if not len(texts):
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.rows[t] for t in texts])


def remix(lists, embed: Callable, rng) -> None:
    """Replace half of each list's negatives by the base's nearest texts, in place.

    ``lists`` holds each list as ``(query, positives, bm25_negatives)`` (texts, BM25's best
    first); each becomes ``(query, candidates, labels, sources)`` after one ``rng.shuffle``
    of its candidates. The base draws from the texts of all the lists (see the module).
    """
    pool_texts = list(dict.fromkeys(t for _, pos, neg in lists for t in (*pos, *neg)))
    queries = list(dict.fromkeys(q for q, _, _ in lists))
    rows = embed([*queries, *pool_texts]) if pool_texts else None
    query_row = {q: rows[i] for i, q in enumerate(queries)} if rows is not None else {}
    pool = rows[len(queries) :] if rows is not None else None
    position = {t: i for i, t in enumerate(pool_texts)}
    out = []
    for query, positives, bm25 in lists:
        want = len(bm25)
        excluded = np.zeros(len(pool_texts), dtype=bool)
        excluded[[position[t] for t in positives]] = True
        # the whole pool in the base's order: BM25 may have taken any of its first texts
        nearest = base_nearest(query_row[query], pool[[position[t] for t in positives]], pool,
                               excluded, len(pool_texts))  # fmt: skip
        base = [pool_texts[i] for i in nearest]
        negatives, sources = mixed_negatives([t for t in bm25 if t not in positives], base, want)
        candidates = [*positives, *negatives]
        labels = [1] * len(positives) + [0] * len(negatives)
        kinds = ["positive"] * len(positives) + sources
        order = list(range(len(candidates)))
        rng.shuffle(order)
        out.append((query, [candidates[i] for i in order], [labels[i] for i in order],
                    [kinds[i] for i in order]))  # fmt: skip
    lists[:] = out
