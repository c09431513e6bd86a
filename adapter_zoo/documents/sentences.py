"""Sentences of a text, by BlingFire's sentence breaker.

BlingFire (a finite-state machine in C++, the segmenter Di Liello et al. used to cut
documents into sentences) against pySBD and sentencex on the project's real texts:
``benchmarks/perf/sentence_splitters.py`` measures speed and agreement with hand-checked
sentences, ``benchmarks/perf/results/sentence_splitters.json`` holds the numbers.

Example:
    >>> split_sentences("Dr. Smith paid $3.50 on Jan. 5. Was it good?  Yes.")
    ['Dr. Smith paid $3.50 on Jan. 5.', 'Was it good?', 'Yes.']
    >>> split_sentences("  ")
    []
"""

from __future__ import annotations

import blingfire


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, in order, whitespace inside each collapsed to one space.

    Line breaks count as spaces: a paragraph hard-wrapped in a Markdown file is one run of
    text (paragraphs are split before sentences are).
    """
    flat = " ".join(text.split())
    if not flat:
        return []
    return [s for s in blingfire.text_to_sentences(flat).split("\n") if s.strip()]
