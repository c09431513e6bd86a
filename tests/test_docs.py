"""The documentation site (mkdocs.yml, docs/): generated pages cover everything, build clean.

The command line reference, the recipes and the benchmark registry are generated when the site
is built (docs/hooks/generate.py), from the parsers the entry points register, the recipes'
TOML files and ``benchmarks.names()``; these tests check that each covers what exists, that
generating them loads no model library, and that the site builds in strict mode (any warning:
a broken link or anchor, a docstring griffe cannot read, fails it; .ci/run builds it too).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adapter_zoo.cli import build_parser
from recipes import recipe_dir

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "docs" / "hooks" / "generate.py"
HEAVY = ("torch", "transformers", "adapters", "sentence_transformers", "datasets")


@pytest.fixture(scope="module")
def hook():
    spec = importlib.util.spec_from_file_location("docs_generate", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commands() -> list[str]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(sub.choices)


def test_the_cli_reference_has_every_sub_command_and_its_help(hook):
    text = hook.cli_reference()
    commands = _commands()
    assert len(commands) >= 20
    for command in commands:
        assert f"### adapter-zoo {command}\n" in text, command
        assert f"usage: adapter-zoo {command} " in text, command
    # the help argparse prints, not a copy: an option of train's parser is there
    assert "--drop-lower K" in text


def test_the_recipes_page_has_every_recipe(hook):
    text = hook.recipes_reference()
    for path in recipe_dir().glob("*.toml"):
        assert f"### `{path.stem}`" in text


def test_generating_the_pages_loads_no_model_library():
    """Building the reference imports the CLI's parsers only: no torch, no transformers."""
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('g', {str(HOOK)!r})\n"
        "g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)\n"
        "g.cli_reference(); g.recipes_reference(); g.benchmarks_reference()\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_the_site_builds_in_strict_mode(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs, "mkdocs is missing: pip install -e '.[docs]' (part of the test extra)"
    result = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "WARNING" not in result.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
