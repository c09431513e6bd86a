"""Every marked table of README.md and docs/, from ``benchmarks/results/*.json``.

Each table is a description (``benchmarks/report/descriptions/``) that one renderer
(``benchmarks/report/render.py``) turns into Markdown from the recorded JSON, so the pages
show exactly what was measured.

Usage:
    .venv/bin/python -m benchmarks.report            # rewrite the pages' tables
    .venv/bin/python -m benchmarks.report --check    # exit 1 if a page is stale
    .venv/bin/python -m benchmarks.report --print    # print the performance table only
"""

from __future__ import annotations

import argparse

from benchmarks.report.descriptions.perf import PERF
from benchmarks.report.pages import stale_pages, write_pages
from benchmarks.report.paths import ROOT
from benchmarks.report.render import render


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print", action="store_true", help="print the table, change nothing")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if a page's tables are stale"
    )
    args = parser.parse_args(argv)
    if args.print:
        print(render(PERF))
        return 0
    if args.check:
        stale = stale_pages()
        for path in stale:
            print(f"stale tables: {path.relative_to(ROOT)}")
        return 1 if stale else 0
    for path in write_pages():
        print(f"updated {path.relative_to(ROOT)}")
    return 0
