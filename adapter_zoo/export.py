"""``adapter-zoo export``: a ``full`` cross-encoder entry as a sentence-transformers CrossEncoder.

A full entry on a BERT base with the CLS classification head (two layers with tanh: BERT's
pooler and a linear classifier) maps one-to-one onto ``BertForSequenceClassification``:
the head's first linear layer becomes the pooler, its last the classifier. The folder is
written by sentence-transformers itself (``CrossEncoder.save_pretrained``) with the identity
activation and the entry's ``max_length``, so ``CrossEncoder(folder).predict(pairs)`` gives
the Ranker's logits. Everything else is refused with the reason: adapters (an adapter,
fusion or multitask entry), bi-encoders (the reason says how to open one in
sentence-transformers), composites, cascades, and heads a CrossEncoder has no equivalent for
(the pair-cosine head of sentence-encoder bases).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from adapter_zoo.errors import ZooError

EXPORT_FILE = "adapter_zoo_export.json"  # what was exported; marks the folder as ours
EXPORTABLE_TYPES = ("bert",)
# Checked after writing: the folder must reproduce the Ranker on these before it is kept.
PROBE_PAIRS = [
    ("which glass for a stout", "a nonic pint, or a tulip for an imperial stout"),
    ("why is my beer flat", "the yeast was dead, so nothing carbonated it in the bottle"),
    ("what are hops", "flowers"),
]
PROBE_TOLERANCE = 1e-5


def card_refusal(card: dict, path: Path | None = None) -> str | None:
    """Why the entry of ``card`` (at ``path``) cannot be a CrossEncoder, judged by its card;
    None if it may. A bi-encoder's reason says how to open it in sentence-transformers."""
    kind, layout = card.get("kind"), card.get("layout", "adapter")
    if kind == "cascade":
        return "it is a cascade (early exits); load it with adapter_zoo.cascade"
    if kind == "composite":
        return f"it is a composite ({card.get('spec')}); export its members instead"
    if card.get("encoder") == "bi":
        return _bi_encoder_refusal(layout, path)
    if layout == "fusion":
        return "it is an AdapterFusion entry, and a CrossEncoder runs no adapters"
    if layout == "adapter":
        return (
            f"it is an adapter entry ({kind}), and a CrossEncoder runs no adapters; "
            "load it with the adapters library (see its model card)"
        )
    if layout != "full":
        return f"its layout {layout!r} is unknown"
    return None


def _bi_encoder_refusal(layout: str, path: Path | None) -> str:
    where = "the entry" if path is None else str(path)
    if layout == "full":
        return (
            "it is a bi-encoder, and its model/ folder already is a sentence-transformers "
            f"folder: SentenceTransformer({str(Path(where) / 'model')!r})"
        )
    # Bottleneck adapters (a ReLU between two projections) do not fold into the weights: the
    # adapters library's merge_adapter merges LoRA only, so no plain folder reproduces them.
    return (
        "it is a bi-encoder with bottleneck adapters, which do not merge into the base's "
        "weights, so no plain sentence-transformers folder reproduces it; open it with "
        "sentence-transformers and the adapters library as the lines in "
        f"{Path(where) / 'README.md'} show, or with adapter_zoo.load"
    )


def model_refusal(model, head: str) -> str | None:
    """Why ``model`` with head ``head`` cannot be a CrossEncoder; None when it can."""
    model_type = model.config.model_type
    if model_type not in EXPORTABLE_TYPES:
        return f"its base is a {model_type!r} model; only BERT's pooler + classifier maps over"
    if model.adapters_config.adapters:
        return f"it holds adapters ({', '.join(model.adapters_config.adapters)})"
    if head not in model.heads:
        return f"it has no head {head!r}"
    config = dict(model.heads[head].config)
    head_type = config.get("head_type")
    if head_type == "pair_cosine":
        return (
            "its pair_cosine head (a scaled cosine of the two texts' mean token states) has "
            "no CrossEncoder equivalent"
        )
    if head_type != "classification":
        return f"its {head_type} head has no CrossEncoder equivalent"
    shape = (config.get("num_labels"), config.get("layers"), config.get("activation_function"))
    if shape != (1, 2, "tanh") or config.get("use_pooler") or not config.get("bias", True):
        return (
            f"its classification head ({shape[0]} labels, {shape[1]} layers, {shape[2]}) is "
            "not BERT's pooler + one-logit classifier"
        )
    return None


def write_cross_encoder(model, tokenizer, head: str, folder: Path, *, max_length: int) -> None:
    """Write ``model`` (an adapters BERT model) with its head ``head`` into ``folder`` as a
    sentence-transformers CrossEncoder (one logit, identity activation, ``max_length``).

    Raises:
        ZooError: the model or head does not map onto a CrossEncoder (see :func:`model_refusal`).
    """
    import torch
    from sentence_transformers.cross_encoder import CrossEncoder
    from transformers import BertConfig, BertForSequenceClassification

    reason = model_refusal(model, head)
    if reason:
        raise ZooError(f"cannot export as a CrossEncoder: {reason}")
    target = BertForSequenceClassification(
        BertConfig(**{**model.config.to_dict(), "num_labels": 1})
    )
    ours = model.state_dict()
    wanted = set(target.state_dict())  # adapters adds e.g. prompt_tuning's embedding alias
    state = {key: value for key, value in ours.items() if key in wanted}
    for source, destination in (("1", "bert.pooler.dense"), ("4", "classifier")):
        for part in ("weight", "bias"):
            state[f"{destination}.{part}"] = ours[f"heads.{head}.{source}.{part}"]
    missing, unexpected = target.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ZooError(f"cannot export as a CrossEncoder: weights {(missing + unexpected)[:3]}")
    with tempfile.TemporaryDirectory(prefix="adapter-zoo-export-") as scratch:
        target.save_pretrained(scratch, safe_serialization=True)
        tokenizer.save_pretrained(scratch)
        cross_encoder = CrossEncoder(
            scratch,
            num_labels=1,
            max_length=max_length,
            activation_fn=torch.nn.Identity(),
            device="cpu",
            trust_remote_code=False,
            local_files_only=True,
        )
        cross_encoder.save_pretrained(str(folder), create_model_card=False)


def export_cross_encoder(
    name_or_path: str | os.PathLike, out: str | os.PathLike, *, overwrite: bool = False
) -> Path:
    """Write the ``full`` cross-encoder entry ``name_or_path`` as a CrossEncoder folder ``out``.

    The folder appears complete or not at all (written through ``atomic_directory``) and only
    after it reproduced the entry's scores on a few probe pairs. It holds a model card
    (licence and attribution as the entry's) and ``adapter_zoo_export.json`` (the entry).

    Args:
        name_or_path: a zoo name, an entry folder or a Hub name (as :func:`adapter_zoo.load`).
        out: the folder to write; an existing one is replaced only when it is an earlier
            export or empty, or with ``overwrite``.
        overwrite: replace whatever ``out`` holds.

    Returns:
        ``out``.

    Raises:
        ZooError: the entry cannot be a CrossEncoder; the message names it and says why.

    Example:
        >>> export_cross_encoder("beer-full", "beer-ce")  # doctest: +SKIP
        >>> from sentence_transformers import CrossEncoder
        >>> CrossEncoder("beer-ce").predict([("a question", "an answer")])  # doctest: +SKIP
    """
    from stackexchange.io import (
        atomic_directory,
        atomic_write_json,
        check_replaceable,
        refuse_input_inside_output,
    )

    name = str(name_or_path)
    card, path = _exportable_entry(name)
    out = Path(out)
    refuse_input_inside_output([path], out, ZooError)
    check_replaceable(
        out, ours=lambda f: (f / EXPORT_FILE).is_file(), overwrite=overwrite, error=ZooError,
        what="a CrossEncoder export",
    )  # fmt: skip
    from adapter_zoo.loading import load

    ranker = load(str(path), device="cpu")
    head = ranker.model.active_head
    reason = model_refusal(ranker.model, head)
    if reason:
        raise ZooError(f"cannot export {name!r} as a CrossEncoder: {reason}")
    with atomic_directory(out, overwrite=True) as tmp:
        write_cross_encoder(ranker.model, ranker.tokenizer, head, tmp, max_length=ranker.max_length)
        _check_reproduces(ranker, tmp, name)
        (tmp / "README.md").write_text(_readme(card, name), encoding="utf-8")
        atomic_write_json(tmp / EXPORT_FILE, {"entry": card["name"], "source": str(path)})
    return out


def _exportable_entry(name: str) -> tuple[dict, Path]:
    """The verified card and folder of ``name``, refused before anything is written."""
    from adapter_zoo.compose import spec as compose
    from adapter_zoo.loading import ZERO_SHOT_BI, resolve_entry
    from adapter_zoo.zoo.store import verify_entry

    if name.startswith(ZERO_SHOT_BI):
        raise ZooError(f"cannot export {name!r} as a CrossEncoder: it is a bi-encoder")
    if compose.is_spec(name) or name == compose.BM25:
        raise ZooError(f"cannot export {name!r} as a CrossEncoder: it is a composition")
    path = resolve_entry(name)
    card = verify_entry(path)
    reason = card_refusal(card, path)
    if reason:
        raise ZooError(f"cannot export {name!r} as a CrossEncoder: {reason}")
    return card, path


def _check_reproduces(ranker, folder: Path, name: str) -> None:
    import numpy as np
    from sentence_transformers.cross_encoder import CrossEncoder

    exported = CrossEncoder(str(folder), device="cpu", trust_remote_code=False)
    theirs = exported.predict(PROBE_PAIRS, show_progress_bar=False)
    difference = float(np.max(np.abs(ranker.score(PROBE_PAIRS) - theirs)))
    if not difference <= PROBE_TOLERANCE:
        raise ZooError(
            f"cannot export {name!r} as a CrossEncoder: the export scores differ from the "
            f"entry's by {difference:.2e}"
        )


def _readme(card: dict, name: str) -> str:
    from adapter_zoo.hub.model_card import hub_base_model
    from adapter_zoo.zoo.cards import attribution, dev_scores_section, front_matter
    from adapter_zoo.zoo.cards import licence_metadata as licence

    lines = front_matter(
        library_name="sentence-transformers",
        base_model=hub_base_model(card["base_model"]),
        tags=["sentence-transformers", "cross-encoder", "text-ranking", "adapter-zoo"],
        pipeline_tag="text-ranking",
        **licence(card),
    )
    credit = attribution(card)
    lines += [f"# {card['name']}", "", f"The adapter-zoo entry `{name}` as a CrossEncoder.", ""]
    lines += [credit, ""] if credit else []
    lines += [
        "```python",
        "from sentence_transformers import CrossEncoder",
        "",
        'model = CrossEncoder("path/to/this/folder")',
        'model.predict([("your question", "candidate 1"), ("your question", "candidate 2")])',
        "```",
        "",
        "The scores are the entry's logits (identity activation), as `Ranker.score` gives.",
        "",
    ]
    return "\n".join(lines + dev_scores_section(card))


__all__ = ["card_refusal", "export_cross_encoder", "model_refusal", "write_cross_encoder"]
