"""Opening a composite zoo entry (card ``mode: composite``) by its ``composition``: a fusion
or rerank from its spec, a route from its members and their centroids, an alias as its one
member."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file

from adapter_zoo.compose.route import RoutedRanker
from adapter_zoo.compose.spec import (
    ALIAS,
    FUSION,
    PRF,
    RERANK,
    ROUTE,
    ROUTE_FILE,
    ROUTE_TENSOR,
    build,
    load_member,
    parse_spec,
)
from adapter_zoo.errors import ZooError


def load_composite(path, card: dict, *, device=None):
    """The composition of the verified composite entry at ``path`` (card ``mode:
    composite``): a fusion or rerank from its ``spec``, a route from its members and
    ``route.safetensors``, an alias as its one member (with the alias's card).

    Raises:
        ZooError: an unknown ``composition`` or a damaged route file.
    """

    composition = card.get("composition")
    members = [str(m) for m in card.get("members") or []]
    if composition == ALIAS:
        if len(members) != 1:
            raise ZooError(f"{path}: alias entry {card['name']!r} must name exactly one member")
        if card.get("max_length") is not None:
            from adapter_zoo.loading import load  # up a floor: see load_member

            length = int(card["max_length"])
            model = load(members[0], device=device, max_length=length, precision="fp32")
        else:
            model = load_member(members[0], device=device)
        model.card = card
        return model
    if composition == ROUTE:
        centroids = _route_centroids(Path(path) / ROUTE_FILE, len(members))
        return RoutedRanker(members, centroids, members, card=card, device=device)
    if composition in (FUSION, RERANK, PRF):
        return build(parse_spec(card["spec"]), device=device, card=card)
    raise ZooError(f"{path}: unknown composition {composition!r} in the card of {card['name']!r}")


def _route_centroids(file, members: int):
    try:
        centroids = load_file(str(file)).get(ROUTE_TENSOR)
    except (SafetensorError, OSError) as error:
        raise ZooError(f"{file}: not a readable safetensors file ({error})") from None
    if centroids is None or centroids.ndim != 2 or len(centroids) != members:
        raise ZooError(f"{file}: expected a tensor {ROUTE_TENSOR!r} with one row per member")
    if not np.all(np.isfinite(centroids)):
        raise ZooError(f"{file}: the centroids are not all finite")
    return centroids
