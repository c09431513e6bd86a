"""``python -m benchmarks.report``: :func:`benchmarks.report.cli.main`."""

from benchmarks.report.cli import main

raise SystemExit(main())
