"""Training examples from documents alone: the sentence-level objectives of Di Liello et
al. (EMNLP 2022: ``ssp``, ``sp``, ``psd``) and generator-free pseudo-queries (``keywords``,
``title``, ``ict``), each an (A, B) pair with its hard and easy negatives.

Torch-free; seeded: the same seed gives the same examples on any machine.

Example:
    >>> from adapter_zoo.documents import read_documents
    >>> corpus = read_documents(["Stouts are dark beers. They taste of roasted barley.",
    ...                          "Lagers ferment cold and slowly. Pilsner is one of them."])
    >>> examples = build_examples("ict", corpus, seed=0)
    >>> len(examples), examples[0].hard, len(examples[0].negatives)
    (2, 0, 1)
    >>> build_examples("ict", corpus, seed=0) == examples
    True
"""

from adapter_zoo.objectives.examples import ObjectiveExample
from adapter_zoo.objectives.registry import (
    OBJECTIVES,
    ObjectiveSpec,
    build_examples,
    get_objective,
    objective_names,
)

__all__ = [
    "OBJECTIVES",
    "ObjectiveExample",
    "ObjectiveSpec",
    "build_examples",
    "get_objective",
    "objective_names",
]
