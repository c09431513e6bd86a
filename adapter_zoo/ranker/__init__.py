"""Cross-encoder ranking: one relevance logit per (query, candidate) pair.

Example:
    >>> from adapter_zoo.ranker import Ranker
    >>> ranker = Ranker.from_base("minilm-l6")  # doctest: +SKIP
    >>> ranker.rank("Is stout strong?", ["Not always.", "Hops are flowers."])  # doctest: +SKIP
"""

from adapter_zoo.ranker.model import HEAD_LAYERS, build_model, resolve_base_model
from adapter_zoo.ranker.ranker import Ranker

__all__ = ["HEAD_LAYERS", "Ranker", "build_model", "resolve_base_model"]
