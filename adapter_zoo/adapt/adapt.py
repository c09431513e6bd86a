"""``adapt``: serve a domain nobody labelled from the zoo, and save the choice as an entry.

By default (``auto``) it learns from the target's own posts and decides on the target's own
decision lists (:mod:`adapter_zoo.adapt.learn`). A named strategy instead works from the
target's unlabelled texts alone: (:func:`~adapter_zoo.adapt.targets.read_target`),
its domain centroid is compared with each zoo entry's (:mod:`adapter_zoo.zoo.domain`), a
plan is made (:func:`~adapter_zoo.adapt.plan.plan_adaptation`) and its model saved:

* ``zero-shot``, ``nearest``, ``multitask``: an alias entry naming that one model;
* ``soup``: a bi-encoder adapter entry, the members' weight average
  (:mod:`adapter_zoo.adapt.soup`);
* ``fusion``: a score-fusion composite with the plan's weights (``adapter_zoo.compose``);
* ``route``: a per-query routing composite (:mod:`adapter_zoo.adapt.route`).

The card's ``adapt`` field (and the README) say what was chosen and why.

Example:
    >>> path = adapt("parsed/ai.stackexchange.com", name="ai")  # doctest: +SKIP
    >>> adapter_zoo.load("ai").card["adapt"]["decision"]["chosen"]  # doctest: +SKIP
    'own'
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from adapter_zoo.adapt import budget, soup
from adapter_zoo.adapt import plan as planning
from adapter_zoo.adapt.route import route_entry
from adapter_zoo.adapt.soup import soup_entry
from adapter_zoo.adapt.zoo_members import (
    CANDIDATE_MARK,
    MULTITASK_KINDS,
    alias_entry,
    zoo_centroids,
)
from adapter_zoo.compose.entry import compose_entry
from adapter_zoo.compose.spec import FUSION, Spec
from adapter_zoo.errors import ZooError
from adapter_zoo.names import DEFAULT_BASE
from adapter_zoo.precision import resolve_precision, scoring_precision
from adapter_zoo.registry import kind_for_card
from adapter_zoo.zoo.store import (
    entry_folder,
    entry_lock,
    holds_request,
    zoo_home,
)

logger = logging.getLogger(__name__)


def adapt(
    target,
    *,
    name: str,
    zoo: Sequence[str] | None = None,
    strategy: str = planning.AUTO,
    top_k: int = 3,
    overwrite: bool = False,
    max_steps: int | None = None,
    precision: str = "auto",
    budget_minutes: float | None = budget.DEFAULT_MINUTES,
    base_model: str = DEFAULT_BASE,
) -> Path:
    """Build the zoo model for an unlabelled target domain and save it as entry ``name``.

    ``auto`` (the default) learns from the target's own posts and decides on its own
    decision lists (:func:`~adapter_zoo.adapt.learn.learn_and_decide`); the other
    strategies build the named strategy from domain similarity alone.

    Args:
        target: the target's texts (a list of strings) or a path: a parsed forum, a parse
            output folder, a dump (``.7z`` or extracted folder), a benchmark folder, or a
            text file with one question or candidate text per line (see
            :func:`~adapter_zoo.adapt.targets.read_target`). No labels are read.
        name: the zoo entry to write.
        zoo: entry names to choose from (default: every local adapter/multitask entry with a
            domain centroid).
        strategy: ``auto`` or one of :data:`~adapter_zoo.adapt.plan.STRATEGIES`.
        top_k: members of soup, fusion and route.
        overwrite: replace an existing entry of that name.
        max_steps: ``auto``: steps of each training run (default: from the target's size).
        precision: ``auto``: the dtype the candidates score in on the decision lists and
            the frozen base trains in (``auto``, ``fp32``, ``bf16``;
            :mod:`adapter_zoo.precision`); trained weights stay fp32.
        budget_minutes: ``auto``: the run's time budget; its stages are planned from this
            machine's measured speed to fit (:mod:`~adapter_zoo.adapt.budget`; None: no
            budget). The card records the plan and what it cut.
        base_model: ``auto``: the base of the adapters it trains and of the zero-shot
            candidate (the zoo entries it continues must share it).

    Returns:
        The entry's folder; ``adapter_zoo.load(name)`` scores with it. Its card's ``adapt``:
        ``strategy``, ``requested``, ``members``, ``weights``, ``similarities`` (every
        entry), ``reason``, ``target`` (kind and number of texts, no local path).

    Raises:
        ZooError: an empty or unreadable target, an unknown strategy, no usable entry.
    """
    if strategy not in (*planning.STRATEGIES, planning.AUTO):
        raise ZooError(
            f"unknown strategy {strategy!r}: use one of "
            f"{', '.join((planning.AUTO, *planning.STRATEGIES))}"
        )
    request = {
        "command": "adapt", "target": requested_target(target),
        "zoo": None if zoo is None else [str(z) for z in zoo], "strategy": strategy,
        "top_k": top_k, "max_steps": max_steps, "precision": precision,
        "budget_minutes": budget_minutes,
    }  # fmt: skip
    if base_model != DEFAULT_BASE:  # the default unrecorded: earlier entries' requests hold
        request["base_model"] = base_model
    final = entry_folder(name)
    # held until the entry is written: a second run to the name is refused before any work
    with entry_lock(final):
        if final.exists() and not overwrite and holds_request(final, request):
            remove_candidates(final.name)  # what that run, killed at its end, had left
            logger.info("zoo entry %r already holds this adaptation (the same arguments); "
                        "nothing to do (--overwrite adapts again)", name)  # fmt: skip
            return final
        if strategy == planning.AUTO:
            # looked up per call: tests monkeypatch adapt.learn.learn_and_decide
            from adapter_zoo.adapt.learn import learn_and_decide

            resolve_precision(precision)  # a refused bf16 before any work
            budget.check_budget(budget_minutes)
            with scoring_precision(precision):
                return learn_and_decide(
                    target, name=name, zoo=zoo, top_k=top_k, overwrite=overwrite,
                    max_steps=max_steps, budget_minutes=budget_minutes, request=request,
                    base_model=base_model,
                )  # fmt: skip
        return _adapt_by_similarity(target, name, zoo, strategy, top_k, overwrite, request)


def _adapt_by_similarity(target, name, zoo, strategy, top_k, overwrite, request) -> Path:
    # looked up per call: tests monkeypatch read_target and domain_centroid
    from adapter_zoo.adapt.targets import read_target
    from adapter_zoo.zoo.domain import domain_centroid

    final = entry_folder(name)
    if final.exists() and not overwrite:
        raise ZooError(f"zoo entry {name!r} already exists at {final}; pass overwrite")
    texts, about = read_target(target)
    centroids, cards = zoo_centroids(zoo)
    centroids.pop(final.name, None)  # an entry never serves as its own member
    if not centroids and strategy != planning.ZERO_SHOT:
        raise ZooError(
            "adapt: no zoo entry with a domain centroid to choose from (train adapters "
            "first, or use --strategy zero-shot)"
        )
    target_centroid = domain_centroid(texts)
    multitask = {
        n: c for n, c in centroids.items() if kind_for_card(cards[n]).name in MULTITASK_KINDS
    }
    single = {n: c for n, c in centroids.items() if n not in multitask}
    best_multitask = None
    if multitask:
        ranked = planning.plan_adaptation(target_centroid, multitask, planning.NEAREST)
        best_multitask = ranked.members[0]
    if strategy == planning.MULTITASK and best_multitask is None:
        raise ZooError("adapt: strategy multitask, but the zoo has no multitask entry")
    if strategy == planning.SOUP:
        single = _soup_candidates(single, cards)
    chosen = planning.plan_adaptation(
        target_centroid, single, strategy, top_k=top_k, multitask=best_multitask
    )
    if chosen.strategy == planning.SOUP and strategy == planning.CENTROID:
        usable = _soup_candidates(single, cards)
        if set(chosen.members) - set(usable):
            chosen = planning.plan_adaptation(
                target_centroid, usable, planning.SOUP, top_k=top_k, multitask=best_multitask
            )
            chosen = planning.AdaptationPlan(
                chosen.strategy, chosen.members, chosen.weights, chosen.similarities,
                "centroid: " + chosen.reason,
            )  # fmt: skip
    similarities = {n: planning.cosine(target_centroid, c) for n, c in centroids.items()}
    record = {
        "strategy": chosen.strategy,
        "requested": strategy,
        "members": list(chosen.members),
        "weights": list(chosen.weights),
        "similarities": dict(sorted(similarities.items(), key=lambda item: -item[1])),
        "reason": chosen.reason,
        "target": about,
        "top_k": top_k,
        "embedder": "all-MiniLM-L6-v2",
    }
    logger.info("adapt %s: %s", name, chosen.reason)
    return _save(name, chosen, {"adapt": record, "request": request}, overwrite)


def _soup_candidates(entries: dict, cards: dict) -> dict:
    usable = {
        n: c for n, c in entries.items()
        if kind_for_card(cards[n]).name in soup.SOUP_KINDS
    }  # fmt: skip
    for skipped in set(entries) - set(usable):
        logger.info("adapt: %s is not a bi-encoder adapter entry; left out of the soup", skipped)
    return usable


def _save(name: str, chosen, extra: dict, overwrite: bool) -> Path:
    if chosen.strategy == planning.SOUP:
        return soup_entry(name, chosen.members, chosen.weights, card=extra, overwrite=overwrite)
    if chosen.strategy == planning.ROUTE:
        return route_entry(name, chosen.members, card=extra, overwrite=overwrite)
    if chosen.strategy == planning.FUSION and len(chosen.members) > 1:
        spec = Spec(FUSION, chosen.members, chosen.weights)
        return compose_entry(name, str(spec), card=extra, overwrite=overwrite)
    return alias_entry(name, chosen.members[0], card=extra, overwrite=overwrite)


def requested_target(target) -> str:
    """How a run's ``request`` names its target: a path made absolute, texts by their hash."""
    if isinstance(target, str | os.PathLike):
        return str(Path(target).expanduser().resolve())
    texts = json.dumps([str(text) for text in target], ensure_ascii=False)
    return "texts:sha256:" + hashlib.sha256(texts.encode("utf-8")).hexdigest()


def remove_candidates(name: str) -> None:
    """Remove the candidate entries (``<name>--<candidate>``) an ``auto`` run of ``name``
    trained: only those names, which no other writer uses."""
    home = zoo_home()
    for folder in sorted(home.glob(f"{name}{CANDIDATE_MARK}*")) if home.is_dir() else []:
        shutil.rmtree(folder, ignore_errors=True)
