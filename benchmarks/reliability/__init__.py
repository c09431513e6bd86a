"""Reliability campaigns, too long for CI: every writing command SIGKILLed at seeded moments
and rerun (``crash_campaign.py`` with its commands, checks and in-process hooks), and the
coverage-guided fuzzing of every reader (``fuzz_campaign.py``). CI runs a few of the same
checks (``tests/faults``, ``tests/fuzz``); each campaign runs from the checkout's root
(``python benchmarks/reliability/<name>.py --help``), outside the wheel, and saves one JSON
under ``benchmarks/results/`` naming the chip (:mod:`benchmarks.machine`).
"""
