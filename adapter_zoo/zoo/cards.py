"""The model card of an entry (:func:`render_card`, the one renderer of the local README and
the Hub card) and what every card says about its data: licence, attribution, dev scores.

The parts are shared with the card of an exported sentence-transformers folder. Weights trained on Stack Exchange posts are an adaptation of
CC BY-SA content, so they carry ``cc-by-sa-4.0`` and name the forums; the forums are not Hub
datasets, so no dataset id is claimed; the card's scores were measured on the forums' own dev
split to pick a checkpoint, so they are labelled as such and are not published as benchmark
results (no ``model-index``).
"""

from __future__ import annotations

import json
import numbers

from adapter_zoo.registry import get_kind, kind_for_card
from adapter_zoo.zoo.snippets import hub_base_model, hub_folder, library_lines, local_folder
from stackexchange.catalog import find_forum
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
        >>> stackexchange_sites({"mode": "adapter", "forums": ["beer"]})
        [('beer.stackexchange.com', True)]
    """

    if get_kind("composite").recognises_card(card):
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
        >>> licence_metadata({"mode": "adapter", "forums": ["beer.stackexchange.com"]})
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


def shipped_section(card: dict) -> list[str]:
    """Markdown lines for an entry shipped inside the package: the recipe and commit that
    made it, the dumps it learnt from, and its scores on each forum's held-out test split
    beside the zero-shot base and the base fused with BM25 (95% paired-bootstrap intervals).

    Example:
        >>> card = {"shipped": {"recipe": "r", "commit": "c", "chip": "x"}, "dumps": {},
        ...         "test_scores": {"ai.stackexchange.com": {"questions": 9, "map": 0.8,
        ...         "zero_shot_map": 0.7, "fused_map": 0.75, "gain": {
        ...         "zero_shot": {"delta": 0.1, "interval": [0.0, 0.2]},
        ...         "fused": {"delta": 0.05, "interval": [-0.1, 0.2]}}}}}
        >>> shipped_section(card)[-2]
        '| ai.stackexchange.com | 9 | 0.8000 | 0.7000 | 0.7500 | +0.100 [+0.000, +0.200] | +0.050 [-0.100, +0.200] |'
    """
    made = card.get("shipped")
    if not made:
        return []
    dumps = "; ".join(
        f"{host}: {row['dump']} (`{row['file']}`, sha256 {row['sha256'][:12]}…)"
        for host, row in (card.get("dumps") or {}).items()
    )
    lines = [
        "## Shipped with adapter-zoo",
        "",
        f"Trained by the `{made['recipe']}` recipe (`adapter-zoo run {made['recipe']}`) at "
        f"commit `{made['commit']}` on {made['chip']}." + (f" Data: {dumps}." if dumps else ""),
        "",
        "Held-out test questions of each forum (MAP; gains with 95% paired-bootstrap "
        "intervals over the set's questions):",
        "",
        "| forum | questions | this entry | zero-shot base | base + BM25 | vs zero-shot base "
        "| vs base + BM25 |",
        "|---|---|---|---|---|---|---|",
    ]
    for host, row in (card.get("test_scores") or {}).items():
        gains = [row["gain"][key] for key in ("zero_shot", "fused")]
        shown = [
            f"{g['delta']:+.3f} [{g['interval'][0]:+.3f}, {g['interval'][1]:+.3f}]" for g in gains
        ]
        lines.append(
            f"| {host} | {row['questions']} | {row['map']:.4f} | {row['zero_shot_map']:.4f} | "
            f"{row['fused_map']:.4f} | {shown[0]} | {shown[1]} |"
        )
    return [*lines, ""]


def front_matter(**metadata) -> list[str]:
    """A YAML header (``---`` lines) for a model card; None values are left out."""
    # huggingface_hub on first use: the CLI starts without it
    from huggingface_hub import ModelCardData

    return ["---", ModelCardData(**metadata).to_yaml(), "---", ""]


def adaptation_section(card: dict) -> list[str]:
    """Markdown lines for an entry ``adapter_zoo.adapt`` made: what was chosen and why, and
    the target's similarity to every zoo entry considered."""
    record = card.get("adapt")
    if not record:
        return []
    if record.get("strategy") == "learned":
        return _learned_section(record)
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


def _learned_section(record: dict) -> list[str]:
    """adapt's default: what it trained on, every candidate's held-out score, the decision."""
    target, decision = record.get("target") or {}, record["decision"]
    training = record.get("training") or {}
    lines = [
        "## Adaptation",
        "",
        f"Made by `adapter_zoo.adapt` from the target's own posts ({target.get('kind')}: "
        f"{target.get('threads')} threads, {target.get('answered')} with an answer, "
        f"{target.get('duplicate_links')} duplicate links; never read: "
        f"{record.get('never_read')}). Trained on the pairs {training.get('pairs')}; "
        f"decided on {decision['lists']} held-out lists {record.get('decision_lists')} of "
        "threads no candidate trained or selected on.",
        "",
        f"**Chosen: {decision['chosen']}.** {record['reason']}. Rule: {decision['rule']}.",
        "",
        "| candidate | held-out MAP | vs base | 95% lower bound | model |",
        "|---|---|---|---|---|",
    ]
    ranked = sorted(record["candidates"].items(), key=lambda item: -item[1]["map"])
    for name, row in ranked:
        delta = f"{row['delta']:+.4f}" if "delta" in row else ""
        lower = f"{row['lower']:+.4f}" if "lower" in row else ""
        lines.append(f"| {name} | {row['map']:.4f} | {delta} | {lower} | `{row['model']}` |")
    if record.get("texts_only"):
        lines += ["", f"Texts only: {record['texts_only']}."]
    return [*lines, ""]


LIBRARY_NAME = "adapter-transformers"  # the Hub's library tag for the adapters library


def render_card(
    card: dict,
    *,
    repo_id: str | None = None,
    folder=None,
    head_type: str | None = None,
) -> str:
    """The model card (README.md with YAML metadata) of an entry: its local README, or with
    ``repo_id`` the card pushed to the Hub. Both say the same; they differ only in the name
    the lines load and where the folder comes from.

    Weights trained on Stack Exchange forums carry ``license: cc-by-sa-4.0``, ``language:
    en`` and an attribution line; the forums are tags, not dataset ids; the card's scores
    are shown as dev scores, not as benchmark results. What depends on the kind (the
    description, the lines that open it without adapter-zoo, whether it has a base of its
    own) comes from the entry's kind (:mod:`adapter_zoo.kinds`).

    Args:
        card: the entry's card.
        repo_id: the Hub repository it is pushed to (None: the local README).
        folder: the local entry's folder (None: no lines without adapter-zoo, unless
            ``repo_id`` gives the folder as ``snapshot_download(repo_id)``).
        head_type: the ``head_type`` of the entry's ``head_config.json`` (None: unknown):
            the adapters-only lines register adapter-zoo's heads unless it is another type.

    Example:
        >>> text = render_card({"name": "beer", "mode": "adapter", "base_model":
        ...     "minilm-l6", "forums": ["beer.stackexchange.com"], "scores": {"dev_mrr@10": 0.5},
        ...     "files": {}}, repo_id="me/beer")
        >>> "library_name: adapter-transformers" in text and "license: cc-by-sa-4.0" in text
        True
        >>> 'ranker = adapter_zoo.load("me/beer")' in text
        True
    """

    kind = kind_for_card(card)
    forums = list(card.get("forums") or [])
    lines = front_matter(
        library_name=LIBRARY_NAME,
        # a composition has no base of its own: its members name theirs
        base_model=hub_base_model(card["base_model"]) if kind.name != "composite" else None,
        tags=["adapters", "adapter-transformers", "adapter-zoo", "text-ranking",
              str(card.get("mode")), *forums],
        pipeline_tag="text-ranking",
        **licence_metadata(card),
    )  # fmt: skip
    lines += [f"# {card['name']}", "", kind.describe(card), ""]
    for key in ("base_model", "forums", "pairs", "seed", "cascade"):
        if card.get(key) is not None:
            lines.append(f"- **{key}**: `{json.dumps(card[key], ensure_ascii=False)}`")
    credit = attribution(card)
    lines += ["", *([credit, ""] if credit else [])]
    lines += shipped_section(card)
    name = f'"{repo_id}"' if repo_id is not None else repr(card["name"])
    lines += [
        "## How to load",
        "",
        "```python",
        "import adapter_zoo",
        "",
        f"ranker = adapter_zoo.load({name})",
        'ranker.rank("your question", ["candidate 1", "candidate 2"])',
        "```",
        "",
    ]
    where = hub_folder(repo_id) if repo_id is not None else None
    if where is None and folder is not None:
        where = local_folder(folder)
    if where is not None:
        lines += library_lines(card, where, head_type)
    lines += adaptation_section(card)
    lines += dev_scores_section(card)
    if card.get("training"):
        lines += ["## Training", "", "```json", json.dumps(card["training"], indent=2), "```", ""]
    return "\n".join(lines)
