"""The training tests' shared pieces: ``training_helpers`` (the fixture run's config, its CLI
argv, its loss), which the test files of this folder import."""

from __future__ import annotations

import sys
from pathlib import Path

# pytest imports test files by path (--import-mode=importlib): the folder goes on sys.path
# so the tests import the one helpers module they share
sys.path.insert(0, str(Path(__file__).parent))
