"""Composite entries (card ``mode: composite``): a saved fusion or rerank spec, a per-query
route, or an alias; their members are other models, loaded by zoo or Hub name."""

from __future__ import annotations

import contextvars
import math
from pathlib import Path

from adapter_zoo.compose import spec as compose
from adapter_zoo.compose.composite import load_composite
from adapter_zoo.errors import ZooError
from adapter_zoo.names import PRF, ZERO_SHOT, parse_model_name
from adapter_zoo.registry import ModelKind, register_kind
from adapter_zoo.zoo.store import CARD_FILE, field_error
from adapter_zoo.zoo.untrusted import UnsafeEntryError, is_local_path

# The composite entries being loaded, outermost first (their folders and names): a composite
# that contains itself through others is refused instead of recursing without end.
_COMPOSITES: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "composites_loading", default=()
)
# Composites nest at most this deep (a guard also for chains through Hub names).
MAX_COMPOSITE_DEPTH = 16


@register_kind
class Composite(ModelKind):
    """A composition saved as a zoo entry (``adapter-zoo compose``, ``adapt``)."""

    name = "composite"
    card_modes = ("composite",)
    summary = "composite ranker"

    def check_card(self, card: dict, card_file) -> None:
        if card.get("composition") in ("route", "alias"):
            return  # members, no spec
        if not isinstance(card.get("spec"), str):
            raise field_error(
                card_file, "spec", card.get("spec"), "a fusion: or rerank: spec string"
            )
        weights = card.get("weights", [])
        numbers = weights if isinstance(weights, list) else [None]
        if not all(
            isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w)
            for w in numbers
        ):
            raise field_error(card_file, "weights", weights, "a list of finite numbers")

    def load_entry(self, path, card: dict, *, device=None):
        return load_composite_entry(path, card, device)

    def export_refusal(self, card, path=None):
        return f"it is a composite ({card.get('spec')}); export its members instead"

    def describe(self, card: dict) -> str:
        forums = list(card.get("forums") or [])
        return (
            f"A composite ranker from the adapter zoo, `{card.get('spec')}`: its members are "
            "loaded by name (local zoo, then the zoo index), so push them too"
            + (f"; weights chosen on the dev split of {', '.join(forums)}." if forums else ".")
        )


def _refuse_local_member(member: str, path: Path) -> None:
    """A composite entry names its members by zoo or Hub name: a path of the machine it was
    made on (absolute, in a home, climbing with ``..``) would make it read outside itself."""

    if member.startswith(f"{PRF}:"):  # a feedback member names its encoder inside
        _refuse_local_member(compose.parse_spec(member).members[0], path)
        return
    name = parse_model_name(member)
    text = name.base if name.category == ZERO_SHOT else member
    if is_local_path(text) or text.startswith(".") or "\\" in text or ".." in text.split("/"):
        raise UnsafeEntryError(
            f"{path / CARD_FILE}: composite member {member!r} is a path outside the entry; "
            "a composite names its members by zoo or Hub name, refused"
        )


def load_composite_entry(path: Path, card: dict, device):
    """The composition of the verified composite entry at ``path``, its members checked to
    be zoo or Hub names and its nesting to end (see :mod:`adapter_zoo.kinds.composite`)."""

    chain = _COMPOSITES.get()
    here = (str(path.resolve()), str(card["name"]))
    names = " -> ".join([name for _, name in chain] + [here[1]])
    if here[0] in (folder for folder, _ in chain):
        raise ZooError(f"{path}: composite entry {card['name']!r} contains itself ({names})")
    if len(chain) >= MAX_COMPOSITE_DEPTH:
        raise ZooError(f"{path}: composites nested more than {MAX_COMPOSITE_DEPTH} deep ({names})")
    members = [str(m) for m in card.get("members") or []]
    if card.get("composition") not in (compose.ROUTE, compose.ALIAS) and "spec" in card:
        members += list(compose.parse_spec(card["spec"]).members)
    for member in members:
        _refuse_local_member(member, path)
    token = _COMPOSITES.set((*chain, here))
    try:
        return load_composite(path, card, device=device)
    finally:
        _COMPOSITES.reset(token)
