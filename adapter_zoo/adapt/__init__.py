"""Serving a domain nobody labelled from the zoo.

* :mod:`~adapter_zoo.adapt.domain`: a zoo entry's domain centroid by name (the centroids,
  MultiCQA's similarity, stored in every trained entry, are :mod:`adapter_zoo.zoo.domain`).
* :mod:`~adapter_zoo.adapt.targets`: a target's unlabelled texts.
* :mod:`~adapter_zoo.adapt.plan`: which strategy, members and weights, and why.
* :mod:`~adapter_zoo.adapt.soup`, :mod:`~adapter_zoo.adapt.route`: AdapterSoup and
  per-query routing entries (fusion entries come from ``adapter_zoo.compose``).
* :func:`adapt` (CLI ``adapter-zoo adapt``): all of it, saved as a zoo entry.

Every module here imports torch inside its functions only, so ``import adapter_zoo`` stays
light.

Example:
    >>> import adapter_zoo
    >>> path = adapter_zoo.adapt("questions.txt", name="my-domain")  # doctest: +SKIP
    >>> adapter_zoo.load("my-domain").card["adapt"]["strategy"]  # doctest: +SKIP
    'soup'
"""

from adapter_zoo.adapt.adapt import adapt, alias_entry, zoo_centroids
from adapter_zoo.adapt.domain import entry_centroid
from adapter_zoo.adapt.plan import (
    AUTO_MIN_SIMILARITY,
    AUTO_STRATEGY,
    SIMILARITY_TEMPERATURE,
    STRATEGIES,
    AdaptationPlan,
    plan_adaptation,
)
from adapter_zoo.adapt.route import RoutedRanker, route, route_entry
from adapter_zoo.adapt.soup import soup_entry
from adapter_zoo.adapt.targets import read_target, target_texts
from adapter_zoo.zoo.domain import domain_centroid, load_embedder, mean_embedding

__all__ = [
    "AUTO_MIN_SIMILARITY",
    "AUTO_STRATEGY",
    "AdaptationPlan",
    "RoutedRanker",
    "SIMILARITY_TEMPERATURE",
    "STRATEGIES",
    "adapt",
    "alias_entry",
    "domain_centroid",
    "entry_centroid",
    "load_embedder",
    "mean_embedding",
    "plan_adaptation",
    "read_target",
    "route",
    "route_entry",
    "soup_entry",
    "target_texts",
    "zoo_centroids",
]
