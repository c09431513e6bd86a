"""Per-query routing (RouterRetriever, 2024): each query is scored by one member, the one
whose domain centroid is nearest to the query's embedding.

Example:
    >>> import numpy as np
    >>> route(np.array([[1.0, 0.1], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])).tolist()
    [0, 1]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapter_zoo.compose.scoring import Composite, query_groups, score_with
from adapter_zoo.compose.spec import load_member
from adapter_zoo.errors import ZooError
from adapter_zoo.names import ZERO_SHOT_MODEL
from adapter_zoo.precision import apply_precision

# Queries are embedded by the zero-shot all-MiniLM-L6-v2 bi-encoder (ZERO_SHOT_MODEL): the
# embedder the domain centroids were made with (adapter_zoo.zoo.domain).


def route(query_vectors: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """For each query vector, the index of the centroid with the highest cosine (ties: the
    lowest index).

    Args:
        query_vectors: ``[queries, dim]``.
        centroids: ``[members, dim]``.

    Returns:
        int64 ``[queries]``.
    """
    queries = np.atleast_2d(np.asarray(query_vectors, dtype=np.float64))
    centres = np.atleast_2d(np.asarray(centroids, dtype=np.float64))
    if not len(centres):
        raise ZooError("routing needs at least one member centroid")
    if queries.shape[1] != centres.shape[1]:
        raise ZooError(
            f"query vectors have {queries.shape[1]} dimensions, centroids {centres.shape[1]}"
        )

    def unit(rows):
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms > 0, norms, 1.0)

    return np.argmax(unit(queries) @ unit(centres).T, axis=1).astype(np.int64)


class RoutedRanker(Composite):
    """Scores each query's pairs with the single member nearest to that query.

    Members are zoo names (loaded on first use, each once) or loaded scorers.

    Args:
        members: one per centroid: names for ``adapter_zoo.load`` or objects with ``score``.
        centroids: ``[members, dim]`` domain centroids.
        names: member names for the card and ``repr`` (default: the members if names).
        embedder: anything with ``encode(texts) -> unit vectors`` (default: the zero-shot
            all-MiniLM-L6-v2 bi-encoder, loaded on first use).
        card: the zoo card when loaded from a zoo entry.
        device: torch device for members loaded by name.

    Example:
        >>> ranker = adapter_zoo.load("beer-routed")  # doctest: +SKIP
        >>> ranker.rank("Which glass for a stout?", ["A nonic pint.", "Any bicycle."])  # doctest: +SKIP
    """

    def __init__(
        self,
        members: Sequence,
        centroids: np.ndarray,
        names: Sequence[str] | None = None,
        *,
        embedder=None,
        card: dict | None = None,
        device=None,
    ):
        self.members = list(members)
        self.centroids = np.atleast_2d(np.asarray(centroids, dtype=np.float32))
        self.names = [str(m) for m in self.members] if names is None else list(names)
        if not self.members:
            raise ZooError("routing needs at least one member")
        if not len(self.members) == len(self.names) == len(self.centroids):
            raise ZooError(
                f"routing: {len(self.members)} members, {len(self.centroids)} centroids, "
                f"{len(self.names)} names"
            )
        self.embedder = embedder
        self.card = card
        self.device = device

    def member(self, index: int):
        """Member ``index``, loaded (once) if it was given by name."""
        if isinstance(self.members[index], str):
            self.members[index] = self._at_precision(
                load_member(self.members[index], device=self.device)
            )
        return self.members[index]

    def routes(self, queries: Sequence[str]) -> np.ndarray:
        """The member index each query goes to."""
        if self.embedder is None:
            self.embedder = self._at_precision(load_member(ZERO_SHOT_MODEL, device=self.device))
        return route(self.embedder.encode(list(queries)), self.centroids)

    def _at_precision(self, member):
        """A member loaded after :meth:`set_precision` put at that precision too."""
        if self.precision_dtype is not None:
            apply_precision(member, self.precision_dtype)
        return member

    def score(self, pairs, *, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Scores of ``pairs`` in input order, each query's from its routed member."""
        pairs = [(str(q), str(c)) for q, c in pairs]
        scores = np.zeros(len(pairs), dtype=np.float32)
        if not pairs:
            return scores
        groups = query_groups(pairs)
        chosen = self.routes([pairs[g[0]][0] for g in groups])
        for index in np.unique(chosen):
            rows = np.concatenate([g for g, c in zip(groups, chosen) if c == index])
            member_pairs = [pairs[i] for i in rows]
            scores[rows] = score_with(
                self.member(int(index)), member_pairs, batch_size=batch_size, progress=progress
            )
        return scores

    def __repr__(self) -> str:
        return f"RoutedRanker({', '.join(self.names)})"
