"""The one error type of the benchmarks package."""

from __future__ import annotations

from stackexchange.errors import AdapterZooError


class BenchmarkError(AdapterZooError):
    """Bad or missing benchmark input; the message names the file or record and what was wrong."""
