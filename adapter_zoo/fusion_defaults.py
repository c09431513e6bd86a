"""The default score fusions with BM25, one copy for every floor that names them.

What a user has without training is the zero-shot base fused with BM25 (per-query z-scores,
BM25 a tenth); ``adapt`` fuses its best candidate with the base and BM25 the same way, and
its decision may replace these shares by the domain's own (:mod:`adapter_zoo.adapt.fusion_choice`)
only when the held-out lists show the change beyond their noise. BM25's tenth was the quality
probes' best BM25 weight on beer; the members' halves of the rest keep the base's share of the
ranking beside the learned model's.

Nothing is imported here (no torch, no numpy): the losses, ``adapt``, the benchmarks and the
recipes all read these numbers.

Example:
    >>> BASE_FUSION_WEIGHTS, FUSION_WEIGHTS
    ((0.9, 0.1), (0.45, 0.45, 0.1))
    >>> base_fused_spec("sbert:minilm-l6")
    'fusion:sbert:minilm-l6*0.9+bm25*0.1'
    >>> base_fused_spec("sbert:minilm-l6", bm25_share=0.25)
    'fusion:sbert:minilm-l6*0.75+bm25*0.25'
    >>> base_fused_spec("sbert:minilm-l6", bm25_share=0.05, normalisation="minmax")
    'fusion:sbert:minilm-l6*0.95+bm25*0.05@minmax'
"""

from __future__ import annotations

# BM25's share of a fusion with it (of the weights' sum)
BM25_SHARE = 0.1
# the zero-shot base and BM25
BASE_FUSION_WEIGHTS = (round(1 - BM25_SHARE, 10), BM25_SHARE)
# the best candidate, the base and BM25: the members share the rest equally
FUSION_WEIGHTS = (round((1 - BM25_SHARE) / 2, 10), round((1 - BM25_SHARE) / 2, 10), BM25_SHARE)
# adapt's candidate names for the two fusions (the card's keys)
BASE_FUSED = "fusion:base+bm25"
FUSED = "fusion:best+base+bm25"
# the per-query normalisation of every member's scores before they are weighed
NORMALISATION = "zscore"


def _weight(value: float) -> str:
    """A weight as the spec grammar writes it: a plain decimal, no exponent, no trailing 0."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text or "0"


def base_fused_spec(
    zero_shot: str, *, bm25_share: float = BM25_SHARE, normalisation: str = NORMALISATION
) -> str:
    """The spec of the base ``zero_shot`` fused with BM25 at ``bm25_share`` (default the
    tenth), its scores normalised by ``normalisation`` (the spec names it only when it is
    not the default): ``fusion:<base>*<1 - share>+bm25*<share>[@<normalisation>]``."""
    how = "" if normalisation == NORMALISATION else f"@{normalisation}"
    return f"fusion:{zero_shot}*{_weight(1 - bm25_share)}+bm25*{_weight(bm25_share)}{how}"
