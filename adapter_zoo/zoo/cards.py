"""What every model card of an entry says about its data: licence, attribution, dev scores.

Shared by the local card (``README.md`` of an entry), the Hub card and the card of an
exported CrossEncoder folder. Weights trained on Stack Exchange posts are an adaptation of
CC BY-SA content, so they carry ``cc-by-sa-4.0`` and name the forums; the forums are not Hub
datasets, so no dataset id is claimed; the card's scores were measured on the forums' own dev
split to pick a checkpoint, so they are labelled as such and are not published as benchmark
results (no ``model-index``).
"""

from __future__ import annotations

import numbers

from stackexchange.errors import DumpError

FORUM_LICENSE = "cc-by-sa-4.0"
DEV_SCORES_NOTE = (
    "Measured while training on the dev split of its own training data (held-out questions, "
    "never a test set) to pick the checkpoint: dev scores, not benchmark results."
)


def stackexchange_sites(card: dict) -> list[tuple[str, bool]]:
    """(host, English) of each Stack Exchange site whose posts trained the entry's weights.

    Its ``forums`` and, for TANDA, its transfer forums, when the shipped catalog knows them
    (hosts or short names; other ``*.stackexchange.com`` hosts count as English). Benchmark
    names are not sites, and a composite has no weights of its own.

    Example:
        >>> stackexchange_sites({"kind": "adapter", "forums": ["beer"]})
        [('beer.stackexchange.com', True)]
    """
    from stackexchange.catalog import find_forum

    if card.get("kind") == "composite":
        return []
    names = list(card.get("forums") or []) + list((card.get("transfer") or {}).get("forums") or [])
    sites: dict[str, bool] = {}
    for name in map(str, names):
        try:
            forum = find_forum(name)
            sites[forum.host] = forum.english
        except DumpError:
            if name.endswith(".stackexchange.com"):
                sites[name] = True
    return list(sites.items())


def licence_metadata(card: dict) -> dict:
    """``license`` and ``language`` for the card's YAML header (empty when not forum-trained).

    Example:
        >>> licence_metadata({"kind": "adapter", "forums": ["beer.stackexchange.com"]})
        {'license': 'cc-by-sa-4.0', 'language': 'en'}
    """
    sites = stackexchange_sites(card)
    if not sites:
        return {}
    english = all(is_english for _, is_english in sites)
    return {"license": FORUM_LICENSE, **({"language": "en"} if english else {})}


def attribution(card: dict) -> str | None:
    """One line naming the Stack Exchange sites the weights learnt from and their licence."""
    sites = [host for host, _ in stackexchange_sites(card)]
    if not sites:
        return None
    return (
        f"Trained on user contributions to {', '.join(sites)} from the Stack Exchange data "
        "dump (archive.org), licensed under CC BY-SA 4.0 (older posts CC BY-SA 2.5 or 3.0); "
        "these weights are shared under CC BY-SA 4.0. Attribution: Stack Exchange, the site, "
        "each post (`https://<site>/q/<id>`) and its author."
    )


def numeric_scores(card: dict) -> dict[str, float]:
    """The card's ``scores`` that are numbers (booleans and text left out)."""
    scores = card.get("scores") or {}
    return {
        key: float(value)
        for key, value in scores.items()
        if isinstance(value, numbers.Real) and not isinstance(value, bool)
    }


def dev_scores_section(card: dict) -> list[str]:
    """Markdown lines: the dev scores as a table under a heading that says what they are."""
    scores = numeric_scores(card)
    if not scores:
        return []
    lines = ["## Dev scores", "", DEV_SCORES_NOTE, "", "| metric | value |", "|---|---|"]
    return lines + [f"| {key} | {value:.4f} |" for key, value in sorted(scores.items())] + [""]


def front_matter(**metadata) -> list[str]:
    """A YAML header (``---`` lines) for a model card; None values are left out."""
    from huggingface_hub import ModelCardData

    return ["---", ModelCardData(**metadata).to_yaml(), "---", ""]


def adaptation_section(card: dict) -> list[str]:
    """Markdown lines for an entry ``adapter_zoo.adapt`` made: what was chosen and why, and
    the target's similarity to every zoo entry considered."""
    record = card.get("adapt")
    if not record:
        return []
    target = record.get("target") or {}
    lines = [
        "## Adaptation",
        "",
        f"Made by `adapter_zoo.adapt` for an unlabelled target ({target.get('kind')}, "
        f"{target.get('texts')} texts): strategy **{record['strategy']}** "
        f"(asked: {record.get('requested')}).",
        "",
        record["reason"],
        "",
        "| member | weight |",
        "|---|---|",
        *(f"| {m} | {w:.4f} |" for m, w in zip(record["members"], record["weights"])),
        "",
    ]
    if record.get("similarities"):
        lines += [
            f"Domain similarity to the target (cosine of {record.get('embedder')} centroids):",
            "",
            "| entry | similarity |",
            "|---|---|",
            *(f"| {n} | {s:.4f} |" for n, s in record["similarities"].items()),
            "",
        ]
    return lines
