"""The fuzz tests' shared pieces: ``fuzz_readers`` (the readers, their seeds and the rule),
which ``benchmarks/reliability/fuzz_campaign.py`` loads too."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# pytest imports test files by path (--import-mode=importlib): the folder goes on sys.path
# so the tests import the one harness module the campaign script imports too
sys.path.insert(0, str(Path(__file__).parent))

import fuzz_readers  # noqa: E402


@pytest.fixture
def seeds(shared_file):
    """``seeds(reader)``: the reader's seeds, its real files required (CI fails without)."""

    def load(reader: fuzz_readers.Reader) -> list[bytes]:
        for relative in reader.shared:
            shared_file(relative)
        return reader.seeds()

    return load
