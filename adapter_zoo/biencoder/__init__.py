"""Bi-encoder rankers: sentence embeddings (sentence-transformers) with per-forum adapters.

Example:
    >>> import adapter_zoo
    >>> encoder = adapter_zoo.load("sbert:minilm-l6")  # doctest: +SKIP
    >>> encoder.search(["flat tyre"], ["How to fix a puncture", "Best stout"], top_k=1)
    ... # doctest: +SKIP
    [[(0, 0.58)]]
"""

from adapter_zoo.biencoder.encoder import BiEncoder, build_sentence_model

__all__ = ["BiEncoder", "build_sentence_model"]
