"""Quality studies: scripts that score the zoo's models and ``adapt`` on held-out test questions
(the shipped forums left out one at a time, sets from outside the base's home ground,
InsuranceQA, ArguAna as BEIR, the answer stage, the sentence objectives, the recommender)
beside the zero-shot MiniLM and MiniLM fused with BM25, with paired bootstrap intervals. Each
runs from the checkout's root (``python benchmarks/studies/<name>.py --help``), outside the
wheel, and saves one JSON under ``benchmarks/results/`` naming the chip
(:mod:`benchmarks.machine`).
"""
