"""Keywords as pseudo-queries (AugTriever's extracted terms): a few of a passage's terms,
sampled by their IDF, against the passage.

Terms are a paragraph's distinct words of three letters or more, lower-cased; each is
drawn with a weight of its BM25 IDF over the corpus's paragraphs, so rare, topical words
make the query and common ones seldom do; 3 to 6 of them, in the order the passage has
them. Negatives are whole other paragraphs (of the passage's document first, up to 2,
hard; then of other documents, easy; 4 in all).

Example:
    >>> from adapter_zoo.documents import read_documents
    >>> corpus = read_documents(["Stouts taste of roasted barley and chocolate malt.",
    ...                          "Lagers ferment cold and slowly, like pilsner."])
    >>> [e.anchor for e in build(corpus, Draw("keywords", 0), None)]
    ['barley and chocolate', 'lagers ferment cold slowly like pilsner']
"""

from __future__ import annotations

import math
import re
from collections import Counter

from adapter_zoo.documents import Corpus
from adapter_zoo.objectives.examples import (
    Draw,
    ObjectiveExample,
    collect,
    example,
    negatives,
    paragraph_text,
)

FEWEST_TERMS = 3
MOST_TERMS = 6
# Words, not numbers or punctuation: a query of "2019 3.5" finds nothing a user would ask.
_TERM = re.compile(r"[^\W\d_]{3,}")


def terms(text: str) -> list[str]:
    """The distinct terms of ``text``, lower-cased, in the order they first appear.

    Example:
        >>> terms("Stouts, stouts and 2 ales")
        ['stouts', 'and', 'ales']
    """
    return list(dict.fromkeys(t.lower() for t in _TERM.findall(text)))


def build(corpus: Corpus, draw: Draw, limit: int | None) -> list[ObjectiveExample]:
    """Keyword examples, one per paragraph of three terms or more, in a seeded order."""
    passages = [(d, p, terms(paragraph_text(paragraph)))
                for d, document in enumerate(corpus.documents)
                for p, paragraph in enumerate(document.paragraphs)]  # fmt: skip
    frequency = Counter(t for _, _, found in passages for t in found)
    n = len(passages)
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def make(unit: tuple[int, int, list[str]]):
        d, p, found = unit
        k = draw.between(FEWEST_TERMS, min(MOST_TERMS, len(found)))
        # Efraimidis–Spirakis: k draws without replacement, each by its weight
        keys = sorted(range(len(found)), key=lambda i: -(draw.unit() ** (1 / idf[found[i]])))
        anchor = " ".join(found[i] for i in sorted(keys[:k]))
        document = corpus.documents[d]
        positive = paragraph_text(document.paragraphs[p])
        found_negatives = negatives(corpus, d, {p}, draw, paragraph_text,
                                    avoid=(anchor, positive))  # fmt: skip
        return example(anchor, positive, found_negatives, document.id)

    units = [unit for unit in passages if len(unit[2]) >= FEWEST_TERMS]
    return collect(draw.shuffled(units), make, limit)
