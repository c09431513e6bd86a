"""The first words a newcomer meets say the same thing: the README's first line, the docs'
index, ``adapter-zoo --help``, the package docstring and the package index's summary share one
sentence, and no command's help describes an earlier project."""

from __future__ import annotations

import tomllib
from pathlib import Path

import adapter_zoo
from adapter_zoo.cli import DESCRIPTION, build_parser

ROOT = Path(__file__).resolve().parents[1]


def _summary(page: Path) -> str:
    """The first line of ``page`` after its title."""
    lines = [line for line in page.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert lines[0] == "# adapter-zoo"
    return lines[1]


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def test_the_readme_the_docs_the_cli_and_the_package_open_with_one_summary():
    summary = _summary(ROOT / "README.md")
    assert summary.startswith("A zoo of small domain adapters inside a sentence-embedding model")
    assert "nobody labelled" in summary
    assert _summary(ROOT / "docs" / "index.md") == summary
    assert _first_paragraph(DESCRIPTION) == summary
    assert _first_paragraph(adapter_zoo.__doc__) == summary
    # the package index's one-line summary (pip show, PyPI)
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["description"] == summary
    assert build_parser().format_help().split("\n\n")[1].startswith(DESCRIPTION.split("\n")[0])


def test_the_summary_check_fails_on_a_changed_word():
    summary = _summary(ROOT / "README.md")
    assert _first_paragraph(DESCRIPTION.replace("domain adapters", "forum adapters")) != summary


def _commands() -> dict:
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.dest == "command"]
    helps = {a.dest: a.help for a in subparsers._choices_actions}
    return {name: (helps[name], p.description or "") for name, p in subparsers.choices.items()}


def test_the_help_says_what_the_project_is_now():
    commands = _commands()
    # bi-encoder adapters are the default; adapt, the Hub and ONNX are named up front
    for word in ("bi-encoder (the default)", "adapt ", "Hugging Face Hub", "ONNX"):
        assert word in DESCRIPTION, word
    export_help, export_description = commands["export"]
    assert "ONNX" in export_help and "any bi- or cross-encoder entry" in export_help
    assert not export_description.startswith("Write the full cross-encoder entry")
    quickstart_help, _ = commands["quickstart"]
    assert "adapt" in quickstart_help
    assert "nobody labelled" in commands["adapt"][0]
