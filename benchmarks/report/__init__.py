"""The report: every marked table of README.md and docs/, from the recorded results.

``python -m benchmarks.report`` rewrites the pages' tables, ``--check`` exits 1 when a page
is stale and ``--print`` prints the performance table.
"""
