"""Model spec strings for compositions, resolved in one place.

* ``fusion:A+B*0.2+bm25*0.1``: :class:`ScoreFusion` of members A (weight 1, the default),
  B (0.2) and BM25 (0.1), each member's scores z-normalised per query; ``@minmax`` or
  ``@rrf`` at the end normalises them by min-max or reciprocal rank instead
  (:data:`~adapter_zoo.compose.fusion.NORMALISATIONS`; ``@zscore``, the default, is not
  written).
* ``rerank:RETRIEVER>RERANKER@K``: :class:`Rerank`, the retriever's top K (default 20)
  rescored by the reranker.
* ``prf:MODEL@k=K,w=W``: :class:`~adapter_zoo.compose.prf.DenseFeedback`, the bi-encoder
  MODEL with its query embedding moved by W (0 to 1, default 0.3) towards the mean of its top
  K candidates' (default 3); either option may be left out, in any order.

A member is anything ``adapter_zoo.load`` accepts except another fusion or rerank spec: a zoo
name or entry folder, a Hub name, ``sbert:<base>``, ``bm25`` (:class:`BM25Scorer`), or a
``prf:`` spec (its text holds none of the other specs' separators, so a fusion or rerank can
name it; its own member is no spec). A composition of compositions is made by saving the
inner one as a zoo entry (``adapter-zoo compose``) and naming that entry.

Example:
    >>> parse_spec("fusion:beer+sbert:minilm-l6*0.2+bm25*0.1")
    Spec(composition='fusion', members=('beer', 'sbert:minilm-l6', 'bm25'), weights=(1.0, 0.2, 0.1), top_k=None, normalisation='zscore')
    >>> str(parse_spec("rerank:sbert:minilm-l6>beer"))
    'rerank:sbert:minilm-l6>beer@20'
    >>> str(parse_spec("fusion:sbert:minilm-l6*0.8+bm25*0.2@minmax"))
    'fusion:sbert:minilm-l6*0.8+bm25*0.2@minmax'
    >>> parse_spec("prf:sbert:minilm-l6@w=0.5")
    Spec(composition='prf', members=('sbert:minilm-l6',), weights=(0.5,), top_k=3, normalisation='zscore')
    >>> str(parse_spec("fusion:prf:sbert:minilm-l6@k=5,w=0.2*0.9+bm25*0.1"))
    'fusion:prf:sbert:minilm-l6@k=5,w=0.2*0.9+bm25*0.1'
    >>> parse_spec("prf:sbert:minilm-l6@k=0")
    Traceback (most recent call last):
    ...
    adapter_zoo.errors.ZooError: model spec 'prf:sbert:minilm-l6@k=0': k '0' is not a positive integer
    >>> parse_spec("rerank:bm25")
    Traceback (most recent call last):
    ...
    adapter_zoo.errors.ZooError: model spec 'rerank:bm25': expected rerank:RETRIEVER>RERANKER[@K]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from adapter_zoo.compose.fusion import NORMALISATIONS, ScoreFusion
from adapter_zoo.compose.prf import DEFAULT_K, DEFAULT_WEIGHT, DenseFeedback
from adapter_zoo.compose.rerank import DEFAULT_TOP_K, Rerank
from adapter_zoo.errors import ZooError
from adapter_zoo.fusion_defaults import NORMALISATION
from adapter_zoo.names import FUSION, PRF, RERANK, is_spec

# Composite entries that are no spec string: per-query routing (its members' centroids in
# ROUTE_FILE inside the entry) and an alias (one member under another name, as
# ``adapter_zoo.adapt`` saves its choice of a single model).
ROUTE = "route"
ALIAS = "alias"
ROUTE_FILE = "route.safetensors"
ROUTE_TENSOR = "centroids"
# A weight is a plain decimal (float() also takes "1_0", "inf", "nan", " 1", full-width digits).
_WEIGHT = re.compile(r"[0-9]+(\.[0-9]*)?|\.[0-9]+")
_TOP_K = re.compile(r"[0-9]+")


def _decimal(value: float) -> str:
    return np.format_float_positional(value, trim="-")


@dataclass(frozen=True)
class Spec:
    """A parsed composition: ``composition`` (``fusion``/``rerank``/``prf``), member names as
    written, fusion ``weights`` (one per member) and ``normalisation``, rerank ``top_k``, or
    feedback's ``top_k`` (its k) and ``weights`` (its one weight w)."""

    composition: str
    members: tuple[str, ...]
    weights: tuple[float, ...] = ()
    top_k: int | None = None
    normalisation: str = NORMALISATION

    def __str__(self) -> str:
        """The canonical spec string (weights of 1 and the default normalisation left out, K
        always written)."""
        if self.composition == RERANK:
            return f"{RERANK}:{self.members[0]}>{self.members[1]}@{self.top_k}"
        if self.composition == PRF:
            return f"{PRF}:{self.members[0]}@k={self.top_k},w={_decimal(self.weights[0])}"
        terms = [m if w == 1 else f"{m}*{_decimal(w)}" for m, w in zip(self.members, self.weights)]
        how = "" if self.normalisation == NORMALISATION else f"@{self.normalisation}"
        return f"{FUSION}:" + "+".join(terms) + how


def _member(text: str, name: str, role: str, *, feedback: bool = True) -> str:
    name = name.strip()
    if not name:
        raise ZooError(f"model spec {text!r}: empty {role}")
    if feedback and name.startswith(f"{PRF}:"):
        _prf(name, name[len(PRF) + 1 :])  # refused here, as it would be when loaded
        return name
    if is_spec(name):
        raise ZooError(
            f"model spec {text!r}: {role} {name!r} is itself a composition; save it as a zoo "
            "entry (adapter-zoo compose) and name the entry"
        )
    return name


def _fusion(text: str, body: str) -> Spec:
    rest, at, how = body.rpartition("@")
    normalisation = NORMALISATION
    if at and how in NORMALISATIONS:
        body, normalisation = rest, how
    members, weights = [], []
    for position, term in enumerate(body.split("+"), start=1):
        name, star, weight_text = term.rpartition("*")
        if not star:
            name, weight = term, 1.0
        else:
            if not _WEIGHT.fullmatch(weight_text):
                raise ZooError(
                    f"model spec {text!r}: weight {weight_text!r} of member {position} must be "
                    "a plain decimal number >= 0, such as 0.2"
                )
            weight = float(weight_text)
        name = _member(text, name, f"member {position}")
        if name in members:
            raise ZooError(f"model spec {text!r}: member {name!r} appears twice")
        members.append(name)
        weights.append(weight)
    if len(members) < 2:
        raise ZooError(f"model spec {text!r}: fusion needs at least two members (A+B)")
    if not any(weights):
        raise ZooError(f"model spec {text!r}: every weight is 0")
    return Spec(FUSION, tuple(members), tuple(weights), normalisation=normalisation)


def _rerank(text: str, body: str) -> Spec:
    retriever, arrow, rest = body.partition(">")
    if not arrow or ">" in rest:
        raise ZooError(f"model spec {text!r}: expected {RERANK}:RETRIEVER>RERANKER[@K]")
    reranker, at, k_text = rest.rpartition("@")
    if not at:
        reranker, k_text = rest, str(DEFAULT_TOP_K)
    if not _TOP_K.fullmatch(k_text) or int(k_text) < 1:
        raise ZooError(f"model spec {text!r}: top k {k_text!r} is not a positive integer")
    members = (_member(text, retriever, "retriever"), _member(text, reranker, "reranker"))
    return Spec(RERANK, members, top_k=int(k_text))


def _prf(text: str, body: str) -> Spec:
    model, at, options = body.rpartition("@")
    if not at or "=" not in options:
        model, options = body, ""
    k, weight = DEFAULT_K, DEFAULT_WEIGHT
    seen = set()
    for option in filter(None, options.split(",")):
        key, equals, value = option.partition("=")
        key = key.strip()
        if not equals or key not in ("k", "w") or key in seen:
            raise ZooError(
                f"model spec {text!r}: option {option!r}: expected "
                f"{PRF}:MODEL[@k=K,w=W], each of k and w at most once"
            )
        seen.add(key)
        if key == "k":
            if not _TOP_K.fullmatch(value) or int(value) < 1:
                raise ZooError(f"model spec {text!r}: k {value!r} is not a positive integer")
            k = int(value)
        else:
            if not _WEIGHT.fullmatch(value) or float(value) > 1:
                raise ZooError(
                    f"model spec {text!r}: w {value!r} must be a plain decimal from 0 to 1"
                )
            weight = float(value)
    model = _member(text, model, "model", feedback=False)
    return Spec(PRF, (model,), (weight,), top_k=k)


def parse_spec(text: str) -> Spec:
    """Parse a ``fusion:``, ``rerank:`` or ``prf:`` spec; a :class:`ZooError` names the spec
    and the problem in one line."""
    prefix, _, body = str(text).partition(":")
    if not is_spec(str(text)):
        raise ZooError(f"model spec {text!r}: must start with {FUSION}:, {RERANK}: or {PRF}:")
    parser = {FUSION: _fusion, RERANK: _rerank, PRF: _prf}[prefix]
    return parser(text, body)


def load_member(name: str, *, device=None):
    """A member by name, as ``adapter_zoo.load`` opens it (``bm25`` is :class:`BM25Scorer`),
    in float32: the composition's precision is set on the whole (``set_precision``), so a
    member's weights are cast once, from float32."""
    # Up a floor, on purpose (CONTRIBUTING, "Inside adapter_zoo"): a member is any model name,
    # loaded as load loads it, so composing is recursive through load.
    from adapter_zoo.loading import load

    return load(name, device=device, precision="fp32")


def build(spec: Spec, *, device=None, card: dict | None = None):
    """The composition ``spec`` describes, its members loaded by name.

    Args:
        spec: a parsed spec.
        device: torch device for the members that run a model.
        card: the zoo card when the composition is a zoo entry; by default a small card
            naming the spec.
    """

    card = card or {"name": str(spec), "mode": "composite", "composition": spec.composition}
    members = [load_member(name, device=device) for name in spec.members]
    if spec.composition == FUSION:
        return ScoreFusion(members, spec.weights, spec.members, card=card,
                           normalisation=spec.normalisation)  # fmt: skip
    if spec.composition == PRF:
        return DenseFeedback(members[0], k=spec.top_k, weight=spec.weights[0],
                             name=spec.members[0], card=card)  # fmt: skip
    return Rerank(*members, top_k=spec.top_k, card=card)


def load_spec(text: str, *, device=None):
    """``build(parse_spec(text))``, the composition named ``text`` (its card's ``name``).

    Example:
        >>> load_spec("fusion:bm25+sbert:minilm-l6*0.2").rank("q", ["a", "b"])  # doctest: +SKIP
    """
    spec = parse_spec(text)
    card = {
        "name": str(text),
        "mode": "composite",
        "composition": spec.composition,
        "spec": str(spec),
    }
    return build(spec, device=device, card=card)
