"""What every objective shares: the example, the seeded draws, the negatives' sampler.

Draws come from :meth:`random.Random.random` alone, seeded by a string: Python guarantees
those two to give the same numbers on every version and machine (its ``randrange``,
``choice`` and ``shuffle`` may change between versions), so the same seed gives the same
examples anywhere; the few integer draws on top of it are written here for that reason.

Example:
    >>> Draw("ssp", 0).between(1, 3) == Draw("ssp", 0).between(1, 3)
    True
    >>> sorted(Draw("ssp", 7).shuffled([1, 2, 3, 4]))
    [1, 2, 3, 4]
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from adapter_zoo.documents import Corpus

NEGATIVES = 4  # negatives an example carries (Di Liello et al.'s SSP: 4 in all)
HARD_NEGATIVES = 2  # of them at most this many from the same document
# An example's parts must carry meaning (the floors of stackexchange.assemble's pairs).
MIN_ANCHOR_CHARS = 10
MIN_POSITIVE_CHARS = 20
_TRIES = 4  # draws per negative wanted before an example keeps fewer


@dataclass(frozen=True)
class ObjectiveExample:
    """One pair an objective built, with its negatives.

    Attributes:
        anchor: A (the query side).
        positive: B, what A is paired with.
        negatives: texts B is told apart from: the hard ones (from A's own document)
            first, then the easy ones (from other documents).
        hard: how many of ``negatives`` are hard.
        document_id: the id of A's document.
    """

    anchor: str
    positive: str
    negatives: tuple[str, ...]
    hard: int
    document_id: str


class Draw:
    """Seeded draws, the same for the same ``(objective, seed)`` on any machine."""

    def __init__(self, objective: str, seed: int):
        self._random = random.Random(f"{objective}:{seed}").random

    def below(self, n: int) -> int:
        """A whole number in ``[0, n)``."""
        return min(int(self._random() * n), n - 1)

    def between(self, low: int, high: int) -> int:
        """A whole number in ``[low, high]``."""
        return low + self.below(high - low + 1)

    def shuffled(self, items: Iterable) -> list:
        """``items`` in a random order (Fisher–Yates)."""
        items = list(items)
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
        return items

    def unit(self) -> float:
        """A number in ``[0, 1)``."""
        return self._random()


def paragraph_text(sentences) -> str:
    return " ".join(sentences)


def span(sentences: tuple[str, ...], draw: Draw, longest: int) -> str:
    """1 to ``longest`` contiguous sentences of a paragraph, at a random place."""
    length = draw.between(1, min(longest, len(sentences)))
    start = draw.below(len(sentences) - length + 1)
    return paragraph_text(sentences[start : start + length])


def without_span(sentences: tuple[str, ...], draw: Draw, longest: int) -> tuple[str, str]:
    """``(removed, rest)``: 1 to ``longest`` contiguous sentences taken out of a paragraph
    of two sentences or more, and the paragraph without them."""
    length = draw.between(1, min(longest, len(sentences) - 1))
    start = draw.below(len(sentences) - length + 1)
    removed = sentences[start : start + length]
    return paragraph_text(removed), paragraph_text(sentences[:start] + sentences[start + length :])


def negatives(
    corpus: Corpus,
    document: int,
    skip: set[int],
    draw: Draw,
    make: Callable[[tuple[str, ...]], str],
    *,
    hard: int = HARD_NEGATIVES,
    total: int = NEGATIVES,
    avoid: Iterable[str] = (),
) -> tuple[tuple[str, ...], int]:
    """``(negatives, how many are hard)``: up to ``hard`` made (``make``) from other
    paragraphs of ``document`` (its paragraphs ``skip`` left out), then easy ones from
    paragraphs of other documents, ``total`` in all where the corpus has them; no text twice
    and none of ``avoid`` (the example's own A and B)."""
    documents = corpus.documents
    seen = set(avoid)
    found: list[str] = []
    own = [i for i in range(len(documents[document].paragraphs)) if i not in skip]
    for index in draw.shuffled(own)[:hard]:
        text = make(documents[document].paragraphs[index])
        if text not in seen:
            seen.add(text)
            found.append(text)
    hard_found = len(found)
    if len(documents) > 1:
        for _ in range(_TRIES * (total - hard_found)):
            if len(found) == total:
                break
            other = draw.below(len(documents) - 1)
            other += other >= document  # any document but A's
            paragraphs = documents[other].paragraphs
            text = make(paragraphs[draw.below(len(paragraphs))])
            if text not in seen:
                seen.add(text)
                found.append(text)
    return tuple(found), hard_found


def example(anchor: str, positive: str, found: tuple[tuple[str, ...], int], document_id: str):
    """The :class:`ObjectiveExample`, or None when A or B is too short to carry meaning."""
    if len(anchor) < MIN_ANCHOR_CHARS or len(positive) < MIN_POSITIVE_CHARS:
        return None
    return ObjectiveExample(anchor, positive, found[0], found[1], document_id)


def paragraph_units(corpus: Corpus, least_sentences: int) -> list[tuple[int, int]]:
    """``(document, paragraph)`` of every paragraph of at least ``least_sentences``."""
    return [(d, p) for d, document in enumerate(corpus.documents)
            for p, paragraph in enumerate(document.paragraphs)
            if len(paragraph) >= least_sentences]  # fmt: skip


def collect(units, make, limit: int | None) -> list[ObjectiveExample]:
    """``make(unit)`` for each unit in turn, those that give an example, up to ``limit``."""
    built = []
    for unit in units:
        if limit is not None and len(built) >= limit:
            break
        made = make(unit)
        if made is not None:
            built.append(made)
    return built
