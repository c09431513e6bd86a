"""The ``Example:`` sections of the four packages' docstrings run, as ``python -m doctest`` would.

One test per module with examples (found by walking the packages with pkgutil: every module
whose source holds ``>>>``); it fails with doctest's report. Examples marked
``# doctest: +SKIP`` are the ones that need the network, files or zoo entries of the user's,
real model weights or minutes of work; every other example must print exactly what its
docstring says. Each module's examples run in an empty working directory with the test's own
zoo (``tests/conftest.py``, which also switches the Hub off), and the environment variables
they set are undone afterwards.
The rooms of ``benchmarks`` (``speed``, ``studies``, ``reliability``, ``report``) are packages
and walked too.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import os
import pkgutil
from pathlib import Path

import pytest

PACKAGES = ("stackexchange", "adapter_zoo", "benchmarks", "recipes")


def _raise(name: str):
    raise ImportError(f"{name}: cannot be imported to look for its docstring examples")


def modules_with_examples() -> list[str]:
    """Every module of ``PACKAGES`` whose source holds ``>>>`` (``__main__`` modules run a
    command when imported: they hold no examples and are skipped)."""
    names = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        names.append(package)
        names += [
            info.name
            for info in pkgutil.walk_packages(module.__path__, f"{package}.", onerror=_raise)
            if info.name.rsplit(".", 1)[-1] != "__main__"
        ]
    found = []
    for name in names:
        origin = importlib.util.find_spec(name).origin
        if ">>>" in Path(origin).read_text(encoding="utf-8"):
            found.append(name)
    return found


MODULES = modules_with_examples()


def test_the_walk_finds_every_package():
    assert {name.split(".")[0] for name in MODULES} == set(PACKAGES)
    assert "adapter_zoo.ranker.inputs" in MODULES  # a subpackage's module, too


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    module = importlib.import_module(name)
    tests = [test for test in doctest.DocTestFinder().find(module, name) if test.examples]
    assert tests, f"{name}: its source holds '>>>' but no docstring example was found"
    monkeypatch.chdir(tmp_path)
    environment = dict(os.environ)
    runner = doctest.DocTestRunner(optionflags=0)
    report: list[str] = []
    try:
        for test in tests:
            runner.run(test, out=report.append)
    finally:
        if dict(os.environ) != environment:
            os.environ.clear()
            os.environ.update(environment)
    assert not runner.failures, (
        f"{runner.failures} of {runner.tries} examples of {name} failed:\n" + "".join(report)
    )
