"""Speed and memory against a peer: scripts that time a step of the project (parsing, training,
scoring, pulling from the Hub, the quickstart, adapt, CI) beside the library, path or earlier
code it replaced, or choose a library on speed and agreement (the HTML and sentence splitters).
Each runs from the checkout's root (``python benchmarks/speed/<name>.py --help``), outside the
wheel, and saves one JSON under ``benchmarks/results/`` naming the chip
(:mod:`benchmarks.machine`).
"""
