"""Composite zoo entries: a composition saved under a name, fusion weights chosen on dev.

Example:
    >>> path = compose_entry("beer-fused", ["beer", "sbert:minilm-l6", "bm25"],
    ...                      data="parsed", forum="beer")  # doctest: +SKIP
    >>> adapter_zoo.load("beer-fused").card["weights"]  # doctest: +SKIP
    [1.0, 0.3, 0.05]
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from adapter_zoo.compose.fusion import fuse
from adapter_zoo.compose.rerank import DEFAULT_TOP_K, merge_scores, top_indices
from adapter_zoo.compose.scoring import score_with
from adapter_zoo.compose.spec import (
    FUSION,
    PRF,
    RERANK,
    Spec,
    build,
    is_spec,
    load_member,
    parse_spec,
)
from adapter_zoo.errors import ZooError
from adapter_zoo.fusion_defaults import NORMALISATION
from adapter_zoo.names import BM25, parse_model_name
from adapter_zoo.registry import kind_for_card
from adapter_zoo.training.selection import DEV_CANDIDATES, forum_dev_lists, positive_first_metrics
from adapter_zoo.zoo.store import (
    check_zoo_writable,
    entry_folder,
    entry_lock,
    entry_path,
    holds_request,
    local_entry,
    read_card,
    save_entry,
)
from stackexchange.errors import unknown_name

logger = logging.getLogger(__name__)

# Weights tried for every member but the first (whose weight is 1).
WEIGHT_GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
_QUESTION_COLUMNS = {"id", "title", "body", "accepted_answer_id", "accepted_answer", "split"}


def dev_lists_of(data, forum: str) -> tuple[str, list[tuple[str, list[str]]]]:
    """The forum's host and its dev ranking lists, positive first (the lists training selects
    on: :func:`adapter_zoo.training.selection.forum_dev_lists`)."""
    # looked up per call: tests monkeypatch training.data.resolve_forums
    from adapter_zoo.training.data import resolve_forums

    hosts = resolve_forums(data, (forum,))
    if len(hosts) != 1:
        raise ZooError(f"{data}: forum {forum!r} names {len(hosts)} forums; give one forum")
    lists = forum_dev_lists(data, hosts)
    if not lists:
        raise ZooError(
            f"{Path(data) / hosts[0] / 'questions'}: no dev question with an accepted answer "
            "to choose on"
        )
    return hosts[0], lists


def _dev_map(score_lists) -> float:
    return positive_first_metrics(score_lists)["dev_map"]


def search_weights(
    member_lists: Sequence[Sequence[np.ndarray]],
    grid: Sequence[float] = WEIGHT_GRID,
    *,
    normalisation: str = NORMALISATION,
) -> tuple[tuple[float, ...], float]:
    """The fusion weights with the best dev MAP, and that MAP, from cached scores.

    Args:
        member_lists: per member, its scores of each dev list (positive first).
        grid: weights tried for every member but the first, whose weight is 1.
        normalisation: the fusion's per-query normalisation (z-scores by default).

    Returns:
        (weights, dev MAP); among equal MAPs the first in ``itertools.product(grid, ...)``
        order wins, i.e. the smallest weights (a grid in ascending order).

    Example:
        >>> lists_a = [np.array([0.0, 1.0])]  # member a ranks the positive second
        >>> lists_b = [np.array([1.0, 0.0])]  # member b ranks it first
        >>> search_weights([lists_a, lists_b], grid=(0.0, 0.5, 2.0))
        ((1.0, 2.0), 1.0)
    """
    best: tuple[tuple[float, ...], float] | None = None
    for rest in itertools.product([float(w) for w in grid], repeat=len(member_lists) - 1):
        weights = (1.0, *rest)
        fused = [fuse(scores, weights, normalisation=normalisation)
                 for scores in zip(*member_lists)]  # fmt: skip
        value = _dev_map(fused)
        if best is None or value > best[1]:
            best = (weights, value)
    return best


def _as_spec(spec_or_members, composition: str, top_k: int) -> Spec:
    if isinstance(spec_or_members, str):
        return parse_spec(spec_or_members)
    members = [str(m) for m in spec_or_members]
    if composition == FUSION:
        return parse_spec(f"{FUSION}:" + "+".join(members))
    if composition == RERANK:
        if len(members) != 2:
            raise ZooError(f"rerank takes a retriever and a reranker, got {len(members)} names")
        return parse_spec(f"{RERANK}:{members[0]}>{members[1]}@{top_k}")
    raise unknown_name("composition", composition, (FUSION, RERANK), ZooError)


def compose_entry(
    name: str,
    spec_or_members,
    *,
    composition: str = FUSION,
    top_k: int = DEFAULT_TOP_K,
    data=None,
    forum: str | None = None,
    grid: Sequence[float] = WEIGHT_GRID,
    overwrite: bool = False,
    device=None,
    card: dict | None = None,
) -> Path:
    """Save a composition as the zoo entry ``name``; with ``data``, chosen and scored on dev.

    With ``data`` and ``forum``, each member scores the forum's dev lists once
    (:func:`dev_lists_of`); a fusion's weights are then chosen by :func:`search_weights`
    on those cached scores (the spec's own weights are ignored), and the card records the dev
    MAP of every member and of the composite. Without them the spec's weights are kept (and
    the members are loaded once, so that a name that does not load is refused here).
    ``adapter_zoo.load(name)`` then loads the members by name and composes them.

    Args:
        name: the zoo entry's name.
        spec_or_members: a ``fusion:``/``rerank:`` spec, or member names (see ``composition``).
        composition: for member names: ``fusion`` (any number) or ``rerank`` (retriever, reranker).
        top_k: for ``rerank`` from member names: how many candidates are reranked.
        data: a parse output folder (``adapter-zoo parse --out``).
        forum: the forum of ``data`` whose dev split chooses and scores.
        grid: fusion weights tried for every member but the first.
        overwrite: replace an existing entry of that name.
        device: torch device for the members while scoring.
        card: more card fields (``adapter_zoo.adapt`` records its plan here).

    Raises:
        ZooError: a bad name or spec, an existing entry (without ``overwrite``), a zoo home
            that cannot be written (before any member loads), a member that does not load.

    Returns:
        The entry's folder. Its card: ``mode`` ``composite``, ``encoder`` ``composite``,
        ``composition``, ``spec`` (canonical, with the chosen weights), ``members`` (as
        given), ``weights`` or ``top_k``, ``forum``, ``dev_map`` (``members`` by name and
        ``composite``), ``scores``, ``training``.

    Example:
        >>> compose_entry("beer-rr", "rerank:sbert:minilm-l6>beer@10")  # doctest: +SKIP
        PosixPath('.../adapter-zoo/beer-rr')
    """

    spec = _as_spec(spec_or_members, composition, top_k)
    if name == BM25 or is_spec(name):
        raise ZooError(f"{name!r} is read as a model spec, not a zoo name; choose another name")
    # what was asked, recorded in the card (a caller's own, adapt's, when it gives one)
    request = (card or {}).get("request") or {
        "command": "compose", "spec": str(spec),
        "data": None if data is None else str(Path(data).resolve()), "forum": forum,
        "grid": [float(w) for w in grid],
    }  # fmt: skip
    # held until the entry is written: a second run to the name is refused before scoring
    with entry_lock(entry_path(name)):
        if entry_path(name).exists() and not overwrite:
            if holds_request(entry_path(name), request):
                logger.info("zoo entry %r already holds this composition (the same arguments); "
                            "nothing to do (--overwrite composes it again)", name)  # fmt: skip
                return entry_path(name)
            raise ZooError(
                f"zoo entry {name!r} already exists at {entry_path(name)}; pass overwrite"
            )
        return _compose(name, spec, data, forum, grid, overwrite, device,
                        {**(card or {}), "request": request})  # fmt: skip


def _compose(name, spec, data, forum, grid, overwrite, device, card) -> Path:
    if name in spec.members:
        raise ZooError(f"composite {name!r} cannot have itself as a member ({spec})")
    refuse_cycle(name, spec)
    if (data is None) != (forum is None):
        raise ZooError("composing on dev needs both data (a parse output folder) and forum")
    # before the members load and score the dev lists: minutes lost to a home that refuses
    check_zoo_writable()
    extra, card = (
        card or {},
        {
            "mode": "composite",
            "encoder": "composite",
            "composition": spec.composition,
            "base_model": "composite",
            "members": list(spec.members),
            "forums": [],
            "forum": None,
        },
    )
    if data is None:
        build(spec, device=device)  # every member must load before the entry names it
    else:
        host, lists = dev_lists_of(data, forum)
        spec, dev_map = _choose_on_dev(spec, lists, grid, device)
        card.update(forums=[host], forum=host, dev_map=dev_map)
        card["scores"] = {"dev_map": dev_map["composite"]}
        card["training"] = {
            "data": str(Path(data).resolve()),
            "forum": host,
            "dev_lists": len(lists),
            "list_size": DEV_CANDIDATES,
            **({"weight_grid": [float(w) for w in grid]} if spec.composition == FUSION else {}),
        }
    card["spec"] = str(spec)
    if spec.composition == FUSION:
        card["weights"] = list(spec.weights)
        card["normalisation"] = spec.normalisation
    elif spec.composition == PRF:
        card["feedback"] = {"k": spec.top_k, "w": spec.weights[0]}
    else:
        card["top_k"] = spec.top_k
    return save_entry(lambda folder: None, name, {**card, **extra}, overwrite=overwrite)


def refuse_cycle(name, spec: Spec) -> None:
    """Refuse a composite ``name`` whose members contain it through other local composite
    entries (``adapter_zoo.load`` of it would never end): their cards are walked.

    Raises:
        ZooError: names the chain, e.g. ``composite 'a' would contain itself: a -> b -> a``.
    """

    target = entry_folder(name).resolve()
    todo = [(member, (str(name), member)) for member in spec.members]
    seen = set()
    while todo:
        member, chain = todo.pop()
        if not parse_model_name(member).is_entry:  # bm25, sbert:: no entry to contain it
            continue
        folder = local_entry(member)
        if folder is None:  # a Hub name: load() guards against a cycle through it
            continue
        folder = folder.resolve()
        if folder == target:
            raise ZooError(f"composite {name!r} would contain itself: {' -> '.join(chain)}")
        if folder in seen:
            continue
        seen.add(folder)
        card = read_card(folder)
        if kind_for_card(card).name == "composite":  # routes and aliases name members
            inner = [str(m) for m in card.get("members") or []]
            inner += list(parse_spec(card["spec"]).members) if "spec" in card else []
            todo += [(member, (*chain, member)) for member in inner]


def _choose_on_dev(spec: Spec, lists, grid, device) -> tuple[Spec, dict]:
    """Score each member once on the dev lists; the (re-weighted) spec and the dev MAPs."""
    pairs = [(query, c) for query, candidates in lists for c in candidates]
    bounds = np.cumsum([len(c) for _, c in lists])[:-1]
    if spec.composition == PRF:  # one member: the feedback model scores, nothing is chosen
        model = build(spec, device=device)
        members = {spec.members[0]: _dev_map(np.split(score_with(model.encoder, pairs), bounds))}
        composite = _dev_map(np.split(score_with(model, pairs), bounds))
        return spec, {"members": members, "composite": composite}
    member_lists = []
    for member_name in spec.members:
        member = load_member(member_name, device=device)
        member_lists.append(np.split(score_with(member, pairs, batch_size=64), bounds))
        del member
    members = {n: _dev_map(s) for n, s in zip(spec.members, member_lists)}
    if spec.composition == FUSION:
        weights, composite = search_weights(member_lists, grid,
                                            normalisation=spec.normalisation)  # fmt: skip
        spec = Spec(FUSION, spec.members, weights, normalisation=spec.normalisation)
    else:
        merged = [
            merge_scores(r, top := top_indices(r, spec.top_k), rr[top])
            for r, rr in zip(*member_lists)
        ]
        composite = _dev_map(merged)
    return spec, {"members": members, "composite": composite}


def dev_table(card: dict) -> str:
    """The card's dev MAP per member and of the composite, as a small text table."""
    dev = card["dev_map"]
    weights = card.get("weights") or [""] * len(card["members"])
    names = [*card["members"], card["name"]]
    width = max(len("model"), *(len(n) for n in names))
    lines = [f"{'model':<{width}}  {'weight':>6}  {'dev MAP':>7}"]
    for member, weight in zip(card["members"], weights):
        lines.append(f"{member:<{width}}  {weight:>6}  {dev['members'][member]:>7.4f}")
    lines.append(f"{card['name']:<{width}}  {'':>6}  {dev['composite']:>7.4f}")
    return "\n".join(lines)
