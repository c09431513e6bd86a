"""SSP, spans in the same paragraph (Di Liello et al., EMNLP 2022).

A is 1 to 3 contiguous sentences of a paragraph, B 1 to 5 other contiguous sentences of the
same paragraph (before A or after it); negatives are spans of 1 to 5 sentences from other
paragraphs of A's document (up to 2, hard) and from other documents (easy), 4 in all.

Example:
    >>> from adapter_zoo.documents import read_documents
    >>> corpus = read_documents(["Stouts are dark beers. They taste of roasted barley. "
    ...     "Porters came first.", "Lagers ferment cold and slowly. Pilsner is one of them."])
    >>> first = build(corpus, Draw("ssp", 0), None)[0]
    >>> first.document_id, first.hard, len(first.negatives)
    ('1', 0, 3)
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
    span,
)

LONGEST_A = 3
LONGEST_B = 5


def build(corpus: Corpus, draw: Draw, limit: int | None) -> list[ObjectiveExample]:
    """SSP examples from paragraphs of two sentences or more, in a seeded order."""

    def make(unit: tuple[int, int]):
        d, p = unit
        document = corpus.documents[d]
        sentences = document.paragraphs[p]
        n = len(sentences)
        length_a = draw.between(1, min(LONGEST_A, n - 1))
        start_a = draw.below(n - length_a + 1)
        end_a = start_a + length_a
        before, after = start_a, n - end_a
        sides = [side for side, room in (("before", before), ("after", after)) if room]
        side = sides[draw.below(len(sides))]
        room = before if side == "before" else after
        length_b = draw.between(1, min(LONGEST_B, room))
        start_b = draw.below(before - length_b + 1) if side == "before" else (
            end_a + draw.below(after - length_b + 1))  # fmt: skip
        anchor = paragraph_text(sentences[start_a:end_a])
        positive = paragraph_text(sentences[start_b : start_b + length_b])
        found = negatives(corpus, d, {p}, draw, lambda s: span(s, draw, LONGEST_B),
                          avoid=(anchor, positive))  # fmt: skip
        return example(anchor, positive, found, document.id)

    return collect(draw.shuffled(paragraph_units(corpus, 2)), make, limit)
