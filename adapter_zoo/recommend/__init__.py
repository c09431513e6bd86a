"""Recommending zoo adapters for a target domain before running the full sweep.

Example:
    >>> from adapter_zoo.recommend import recommend
    >>> recommend("parsed/", ["beer", "cooking"])[0]["adapter"]  # doctest: +SKIP
    'beer'
"""

from adapter_zoo.recommend.recommend import (
    adapter_questions,
    hit_rate,
    mean_embedding,
    probe_scores,
    rank,
    recommend,
    similarities,
    target_questions,
    top_k_hit,
)

__all__ = [
    "adapter_questions",
    "hit_rate",
    "mean_embedding",
    "probe_scores",
    "rank",
    "recommend",
    "similarities",
    "target_questions",
    "top_k_hit",
]
