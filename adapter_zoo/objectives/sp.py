"""SP, a span in its paragraph (Di Liello et al., EMNLP 2022).

A is 1 to 3 contiguous sentences taken out of a paragraph, B the paragraph without them;
negatives are other paragraphs (of A's document first, up to 2, hard; then of other
documents, easy; 4 in all), each with a random span of 1 to 3 sentences taken out too, so
that a clipped paragraph is not itself the cue.

Example:
    >>> from adapter_zoo.documents import read_documents
    >>> corpus = read_documents(["Stouts are dark beers. They taste of roasted barley.\\n\\n"
    ...     "Porters came first. They were brewed in London."])
    >>> [(e.anchor, e.positive, e.hard) for e in build(corpus, Draw("sp", 0), None)][0]
    ('Porters came first.', 'They were brewed in London.', 1)
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
    without_span,
)

LONGEST_A = 3


def build(corpus: Corpus, draw: Draw, limit: int | None) -> list[ObjectiveExample]:
    """SP examples from paragraphs of two sentences or more, in a seeded order."""

    def clipped(sentences: tuple[str, ...]) -> str:
        if len(sentences) < 2:
            return paragraph_text(sentences)
        return without_span(sentences, draw, LONGEST_A)[1]

    def make(unit: tuple[int, int]):
        d, p = unit
        document = corpus.documents[d]
        anchor, positive = without_span(document.paragraphs[p], draw, LONGEST_A)
        found = negatives(corpus, d, {p}, draw, clipped, avoid=(anchor, positive))
        return example(anchor, positive, found, document.id)

    return collect(draw.shuffled(paragraph_units(corpus, 2)), make, limit)
