"""Compositions of rankers: score fusion, retrieve-then-rerank, and BM25 as a ranker.

Anything with ``score(pairs) -> numpy array`` is a member: a cross-encoder
:class:`~adapter_zoo.Ranker`, a bi-encoder, :class:`BM25Scorer`, or another composition. Every
composition has the same ``score(pairs)`` and ``rank(query, candidates, top_k=None)``.

* :class:`ScoreFusion`: per query, each member's scores z-normalised over that query's
  candidates, then a weighted sum.
* :class:`Rerank`: per query, the retriever's top k rescored by the reranker and placed above
  the rest (only those k pairs reach the reranker).
* :class:`DenseFeedback`: a bi-encoder's query embedding moved towards its top candidates'
  (dense pseudo-relevance feedback, Rocchio), for ranked lists and for ``search``.
* Spec strings, accepted wherever a model name is (``adapter_zoo.load``, so ``evaluate`` and
  the rest): ``fusion:A+B*0.2+bm25*0.1`` (``@minmax`` or ``@rrf`` at the end for another
  normalisation), ``rerank:RETRIEVER>RERANKER@K`` and ``prf:MODEL@k=3,w=0.3``.
* :func:`compose_entry` (CLI ``adapter-zoo compose``) saves a composition as a zoo entry,
  fusion weights chosen by MAP on a forum's dev split.

Example:
    >>> import adapter_zoo
    >>> fused = adapter_zoo.load("fusion:beer+sbert:minilm-l6*0.2+bm25*0.1")  # doctest: +SKIP
    >>> fused.rank("Which glass for a stout?", ["A nonic pint.", "Any bicycle."])  # doctest: +SKIP
    >>> rr = adapter_zoo.load("rerank:sbert:minilm-l6>beer@20")  # doctest: +SKIP
"""

from adapter_zoo.compose.bm25 import BM25Scorer
from adapter_zoo.compose.entry import compose_entry, search_weights
from adapter_zoo.compose.fusion import ScoreFusion
from adapter_zoo.compose.prf import DenseFeedback
from adapter_zoo.compose.rerank import Rerank
from adapter_zoo.compose.spec import Spec, is_spec, load_spec, parse_spec

__all__ = [
    "BM25Scorer",
    "DenseFeedback",
    "Rerank",
    "ScoreFusion",
    "Spec",
    "compose_entry",
    "is_spec",
    "load_spec",
    "parse_spec",
    "search_weights",
]
