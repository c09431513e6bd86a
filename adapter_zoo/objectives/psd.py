"""PSD, paragraphs in the same document (Di Liello et al., EMNLP 2022).

A is a paragraph, B another paragraph of the same document; negatives are paragraphs of
other documents (easy, 4; none is hard: every other paragraph of A's document is a
positive).

Example:
    >>> from adapter_zoo.documents import read_documents
    >>> corpus = read_documents(["Stouts are dark beers.\\n\\nPorters came first, in London.",
    ...                          "Lagers ferment cold and slowly."])
    >>> [(e.anchor, e.positive, e.negatives) for e in build(corpus, Draw("psd", 0), None)][0]
    ('Porters came first, in London.', 'Stouts are dark beers.', ('Lagers ferment cold and slowly.',))
"""

from __future__ import annotations

from adapter_zoo.documents import Corpus
from adapter_zoo.objectives.examples import (
    Draw,
    ObjectiveExample,
    collect,
    example,
    negatives,
    paragraph_text,
)


def build(corpus: Corpus, draw: Draw, limit: int | None) -> list[ObjectiveExample]:
    """PSD examples, one per paragraph of documents of two paragraphs or more."""
    units = [(d, p) for d, document in enumerate(corpus.documents)
             if len(document.paragraphs) > 1 for p in range(len(document.paragraphs))]  # fmt: skip

    def make(unit: tuple[int, int]):
        d, p = unit
        document = corpus.documents[d]
        other = draw.below(len(document.paragraphs) - 1)
        other += other >= p
        anchor = paragraph_text(document.paragraphs[p])
        positive = paragraph_text(document.paragraphs[other])
        found = negatives(corpus, d, set(range(len(document.paragraphs))), draw,
                          paragraph_text, hard=0, avoid=(anchor, positive))  # fmt: skip
        return example(anchor, positive, found, document.id)

    return collect(draw.shuffled(units), make, limit)
