"""ICT, the Inverse Cloze Task (Lee et al., ACL 2019): a sentence against its passage
without it, SP's unsupervised ancestor.

A is one sentence of a paragraph, B the paragraph without it; negatives are whole other
paragraphs (of A's document first, up to 2, hard; then of other documents, easy; 4 in all).

Example:
    >>> from adapter_zoo.documents import read_documents
    >>> corpus = read_documents(["Stouts are dark beers. They taste of roasted barley."])
    >>> [(e.anchor, e.positive) for e in build(corpus, Draw("ict", 0), None)]
    [('They taste of roasted barley.', 'Stouts are dark beers.')]
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
    paragraph_units,
)


def build(corpus: Corpus, draw: Draw, limit: int | None) -> list[ObjectiveExample]:
    """ICT examples from paragraphs of two sentences or more, in a seeded order."""

    def make(unit: tuple[int, int]):
        d, p = unit
        document = corpus.documents[d]
        sentences = document.paragraphs[p]
        i = draw.below(len(sentences))
        anchor, positive = sentences[i], paragraph_text(sentences[:i] + sentences[i + 1 :])
        found = negatives(corpus, d, {p}, draw, paragraph_text, avoid=(anchor, positive))
        return example(anchor, positive, found, document.id)

    return collect(draw.shuffled(paragraph_units(corpus, 2)), make, limit)
