"""What every scorer accepts: texts that are strings, and token limits its model can read.

The one check of ranking inputs used by every ``score``/``rank``/``encode``/``search`` (the
Ranker, the BiEncoder, the compositions, the cascade): a non-string text would otherwise be
scored as ``str(text)`` ("None", "3.5") and a single string given as the candidate list
ranked character by character.

Example:
    >>> text_pairs([("q", "a")])
    [('q', 'a')]
    >>> check_ranking("q", "abc")
    Traceback (most recent call last):
    ...
    adapter_zoo.errors.ZooError: rank: candidates must be a list of strings, not one str
    >>> check_ranking("q", ["a", None])
    Traceback (most recent call last):
    ...
    adapter_zoo.errors.ZooError: rank: candidate 1 is NoneType, not a string
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from adapter_zoo.errors import ZooError
from stackexchange.numbers import check_number


def _check_text(text, where: str) -> str:
    if not isinstance(text, str):
        raise ZooError(f"{where} is {type(text).__name__}, not a string")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # a lone surrogate: no tokenizer can read it
        raise ZooError(
            f"{where} holds a lone surrogate U+{ord(text[error.start]):04X} at character "
            f"{error.start}; not valid Unicode text"
        ) from None
    return text


def _check_list(texts, what: str, caller: str) -> list:
    if isinstance(texts, (str, bytes)):
        raise ZooError(
            f"{caller}: {what} must be a list of strings, not one {type(texts).__name__}"
        )
    try:
        return list(texts)
    except TypeError:
        raise ZooError(
            f"{caller}: {what} must be a list of strings, not {type(texts).__name__}"
        ) from None


def check_texts(texts: Sequence[str], *, what: str = "texts", caller: str = "encode") -> list[str]:
    """``texts`` as a list after checking each is a string (a single string is refused).

    Example:
        >>> check_texts(["a", 3])
        Traceback (most recent call last):
        ...
        adapter_zoo.errors.ZooError: encode: text 1 is int, not a string
    """
    items = _check_list(texts, what, caller)
    return [_check_text(t, f"{caller}: {what.rstrip('s')} {i}") for i, t in enumerate(items)]


def text_pairs(pairs, *, caller: str = "score") -> list[tuple[str, str]]:
    """``pairs`` as a list of (query, candidate) string tuples, each checked.

    Example:
        >>> text_pairs([("q", 3.5)])
        Traceback (most recent call last):
        ...
        adapter_zoo.errors.ZooError: score: pair 0: candidate is float, not a string
    """
    items = _check_list(pairs, "pairs", caller)
    checked = []
    for i, pair in enumerate(items):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise ZooError(
                f"{caller}: pair {i} must be a (query, candidate) pair, not {type(pair).__name__}"
            )
        query = _check_text(pair[0], f"{caller}: pair {i}: query")
        candidate = _check_text(pair[1], f"{caller}: pair {i}: candidate")
        checked.append((query, candidate))
    return checked


def distinct_texts(pairs: list[tuple[str, str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(texts, left, right)``: each distinct text of ``pairs`` once, in first-seen order,
    and each pair's query and candidate as indices into it (a bi-encoder embeds each text
    once, however many pairs hold it).

    Example:
        >>> texts, left, right = distinct_texts([("q", "a"), ("q", "b")])
        >>> texts, left.tolist(), right.tolist()
        (['q', 'a', 'b'], [0, 0], [1, 2])
    """
    index: dict[str, int] = {}
    for query, candidate in pairs:
        index.setdefault(query, len(index))
        index.setdefault(candidate, len(index))
    left = np.fromiter((index[q] for q, _ in pairs), dtype=np.int64, count=len(pairs))
    right = np.fromiter((index[c] for _, c in pairs), dtype=np.int64, count=len(pairs))
    return list(index), left, right


def check_top_k(top_k, *, caller: str = "rank") -> int | None:
    """``top_k`` if None or a whole number >= 1 (``[:-1]`` would silently drop the last)."""
    if top_k is None:
        return None
    return check_number(f"{caller}: top_k", top_k, integer=True, low=1, error=ZooError)


def check_ranking(query, candidates, top_k=None, *, caller: str = "rank") -> tuple[str, list[str]]:
    """The query and the candidate list of a ``rank`` call, checked; ``top_k`` too."""
    _check_text(query, f"{caller}: the query")
    check_top_k(top_k, caller=caller)
    return query, check_texts(candidates, what="candidates", caller=caller)


def position_limit(config) -> int | None:
    """How many tokens a transformer ``config`` can read (its position embeddings; RoBERTa's
    first two positions are taken by padding), or None when it does not say."""
    limit = getattr(config, "max_position_embeddings", None)
    if not isinstance(limit, int) or limit < 1:
        return None
    if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
        limit -= 2
    return limit


def check_max_length(value, config=None, *, name: str = "max_length", model: str = "") -> int:
    """``value`` if it is a whole number >= 1 that the model of ``config`` can read, else one
    line naming both numbers.

    Example:
        >>> from types import SimpleNamespace
        >>> check_max_length(1000, SimpleNamespace(max_position_embeddings=512), model="bert")
        Traceback (most recent call last):
        ...
        adapter_zoo.errors.ZooError: max_length 1000 is above the 512 positions of bert
    """
    check_number(name, value, integer=True, low=1, error=ZooError)
    limit = position_limit(config) if config is not None else None
    if limit is not None and value > limit:
        where = f" of {model}" if model else " of the model"
        raise ZooError(f"{name} {value} is above the {limit} positions{where}")
    return int(value)
