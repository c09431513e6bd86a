"""What a model name means: the one parser of the names ``load``, ``evaluate``, the sweep,
the leaderboard and the recipes accept.

* ``sbert:<base>``: the base as a zero-shot bi-encoder (cosine of its sentence embeddings).
* ``base:<base>``: the untrained base with a fresh, seeded cross-encoder head.
* ``fusion:...``, ``rerank:...`` and ``prf:...``: a composition spec (:mod:`adapter_zoo.compose.spec`
  parses its members and weights when it is loaded).
* ``bm25`` and ``tfidf``: the lexical baselines.
* anything else: an entry, found by :func:`adapter_zoo.loading.resolve_entry`: a local zoo
  name, a folder, a Hub name, a catalog forum, or a published MultiCQA adapter file.

Example:
    >>> parse_model_name("sbert:minilm-l6")
    ModelName(text='sbert:minilm-l6', category='sbert', base='minilm-l6')
    >>> parse_model_name("bm25").category, parse_model_name("beer").category
    ('lexical', 'entry')
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from adapter_zoo.errors import ZooError

# The categories of name (ModelName.category; "kind" is the registry's ModelKind).
ZERO_SHOT = "sbert"
BASE = "base"
COMPOSITION = "composition"
LEXICAL = "lexical"
ENTRY = "entry"

ZERO_SHOT_PREFIX = ZERO_SHOT + ":"
# The default base model (the offline all-MiniLM-L6-v2 weights): training's, build's, the
# cascade's and the scorers' default, and the domain centroids' embedder.
DEFAULT_BASE = "minilm-l6"
# The zero-shot all-MiniLM-L6-v2 bi-encoder: the model a user already has, which adapt falls
# back to, the recommender and the leaderboard measure the zoo against, and routes embed
# queries with.
ZERO_SHOT_MODEL = ZERO_SHOT_PREFIX + DEFAULT_BASE
BASE_PREFIX = BASE + ":"
FUSION = "fusion"
RERANK = "rerank"
PRF = "prf"
SPEC_PREFIXES = (FUSION + ":", RERANK + ":", PRF + ":")
BM25 = "bm25"
TFIDF = "tfidf"
LEXICAL_NAMES = (BM25, TFIDF)


@dataclass(frozen=True)
class ModelName:
    """A parsed model name.

    Attributes:
        text: the name as given (a path as its string).
        category: ``sbert`` (zero-shot bi-encoder), ``base`` (untrained base), ``composition``
            (a ``fusion:``/``rerank:``/``prf:`` spec), ``lexical`` (``bm25``, ``tfidf``) or ``entry``
            (a zoo, Hub or catalog name, or a folder or file).
        base: the base model of ``sbert:`` and ``base:`` names, else None.
    """

    text: str
    category: str
    base: str | None = None

    @property
    def is_entry(self) -> bool:
        """Whether the name is resolved to an entry (zoo, folder, Hub, catalog forum)."""
        return self.category == ENTRY


def is_spec(name) -> bool:
    """Whether ``name`` is a ``fusion:``, ``rerank:`` or ``prf:`` spec string."""
    return isinstance(name, str) and name.startswith(SPEC_PREFIXES)


def parse_model_name(name: str | os.PathLike) -> ModelName:
    """What category of model ``name`` names, from its spelling alone (nothing is read).

    A path object always names a folder or file (``Path("bm25")`` is a folder, not BM25).

    Args:
        name: a model name or path.

    Returns:
        The parsed :class:`ModelName`.

    Raises:
        ZooError: ``sbert:`` or ``base:`` without a base model.
        TypeError: ``name`` is neither a string nor a path.

    Example:
        >>> parse_model_name("base:bert-base")
        ModelName(text='base:bert-base', category='base', base='bert-base')
        >>> parse_model_name("rerank:bm25>beer@10").category
        'composition'
        >>> parse_model_name("./models/beer").category
        'entry'
        >>> parse_model_name("sbert:")
        Traceback (most recent call last):
        ...
        adapter_zoo.errors.ZooError: model name 'sbert:' names no base model: write sbert:<base>, such as sbert:minilm-l6
    """
    if isinstance(name, os.PathLike):
        return ModelName(os.fspath(name), ENTRY)
    if not isinstance(name, str):
        raise TypeError(f"a model name is a string or a path, not {type(name).__name__}")
    if is_spec(name):
        return ModelName(name, COMPOSITION)
    if name in LEXICAL_NAMES:
        return ModelName(name, LEXICAL)
    for category, prefix in ((ZERO_SHOT, ZERO_SHOT_PREFIX), (BASE, BASE_PREFIX)):
        if name.startswith(prefix):
            base = name[len(prefix) :]
            if not base.strip():
                raise ZooError(
                    f"model name {name!r} names no base model: write {prefix}<base>, such as "
                    f"{prefix}minilm-l6"
                )
            return ModelName(name, category, base)
    return ModelName(name, ENTRY)
