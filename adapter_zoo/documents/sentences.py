"""Sentences of a text, by sentencex (Wikimedia's rule-based segmenter, in Rust).

Chosen over BlingFire (the segmenter Di Liello et al. used) and pySBD on the project's real
texts: ``benchmarks/speed/sentence_splitters.py`` measures speed and agreement with
hand-checked sentences of forum posts, MedQuAD, ArguAna and InsuranceQA;
``benchmarks/results/sentence_splitters.json`` holds the numbers.

Example:
    >>> split_sentences("Dr. Smith paid $3.50 on Jan. 5. Was it good?  Yes.")
    ['Dr. Smith paid $3.50 on Jan. 5.', 'Was it good?', 'Yes.']
    >>> split_sentences("  ")
    []
"""

from __future__ import annotations

import sentencex

LANGUAGE = "en"  # the base models are English


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order, whitespace inside each collapsed to one space.

    Line breaks count as spaces: a paragraph hard-wrapped in a Markdown file is one run of
    text (paragraphs are split before sentences are).
    """
    flat = " ".join(text.split())
    if not flat:
        return []
    return [s.strip() for s in sentencex.segment(LANGUAGE, flat) if s.strip()]
