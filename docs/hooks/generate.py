"""MkDocs hook: pages whose content is generated at build time, never copied by hand.

A page holds a marker line, and the build replaces it:

- ``<!-- generated: cli -->``: the ``adapter-zoo`` command line, every sub-command's
  ``--help`` as argparse prints it, from the parsers the installed entry points register
  (``adapter_zoo.cli.build_parser``), grouped by the package that registers them;
- ``<!-- generated: recipes -->``: every recipe of ``recipes/toml/``, read with
  ``recipes.load_recipe`` (what it reproduces, the published scores, the hardware, the steps);
- ``<!-- generated: benchmarks -->``: the benchmark registry (``benchmarks.names()``).

The pages' tables of measured numbers are not generated here but written into the pages by
``python -m benchmarks.report`` from the recorded JSON (``benchmarks/report/``),
so they read the same on GitHub; ``tests/test_readme_numbers.py`` checks them.

Building the parsers imports no torch: the registering modules import heavy libraries inside
their command functions only.
"""

from __future__ import annotations

import argparse
import os
from contextlib import contextmanager
from importlib.metadata import entry_points

# The packages' entry points (pyproject.toml, group adapter_zoo.commands), in the order a
# forum goes: dump -> pairs -> adapters -> zoo -> benchmarks -> recipes.
ENTRY_POINT_ORDER = (
    ("parse", "Forums → pairs", "stackexchange.cli"),
    ("train", "Training", "adapter_zoo.training.cli"),
    ("zoo", "The zoo", "adapter_zoo.zoo_cli"),
    ("compose", "Compositions", "adapter_zoo.compose.cli"),
    ("hub", "The Hugging Face Hub", "adapter_zoo.hub.cli"),
    ("benchmarks", "Benchmarks and the leaderboard", "benchmarks.cli"),
    ("scoring", "Sweeps, cascades and the recommender", "benchmarks.zoo_cli"),
    ("recipes", "Recipes and the quickstart", "recipes.cli"),
)
HELP_COLUMNS = "100"  # argparse wraps help at the terminal's width: fixed, so builds agree


@contextmanager
def _columns(width: str):
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def cli_reference() -> str:
    """Markdown: the top-level help, then each entry point's sub-commands with their help."""
    from adapter_zoo.cli import COMMAND_GROUP, build_parser

    with _columns(HELP_COLUMNS):
        parser = build_parser()
        found = {ep.name: ep for ep in entry_points(group=COMMAND_GROUP)}
        known = [name for name, _, _ in ENTRY_POINT_ORDER]
        missing = sorted(set(found) - set(known))
        if missing:
            raise RuntimeError(f"docs/hooks/generate.py: entry points not in the docs: {missing}")
        summaries = {a.dest: a.help for a in _subparsers(parser)._choices_actions}
        lines = [
            "```text",
            parser.format_help().rstrip(),
            "```",
            "",
        ]
        for name, title, module in ENTRY_POINT_ORDER:
            # which sub-commands this entry point registers: its register() on a fresh parser
            probe = argparse.ArgumentParser(prog="adapter-zoo")
            sub = probe.add_subparsers()
            found[name].load()(sub)
            lines += [f"## {title}", "", f"Registered by `{module}` (entry point `{name}`).", ""]
            for command in sub.choices:
                help_text = _subparsers(parser).choices[command].format_help().rstrip()
                lines += [
                    f"### adapter-zoo {command}",
                    "",
                    f"{summaries.get(command) or ''}".strip(),
                    "",
                    "```text",
                    help_text,
                    "```",
                    "",
                ]
    return "\n".join(lines)


def _value(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {_value(v)}" for k, v in value.items())
    return str(value)


def recipes_reference() -> str:
    """Markdown: one section per shipped recipe, from its TOML file."""
    from recipes import load_recipe, recipe_dir

    lines = []
    for path in sorted(recipe_dir().glob("*.toml")):
        recipe = load_recipe(path)
        published = recipe.published or {}
        lines += [
            f"### `{path.stem}`",
            "",
            f"**Reproduces:** {recipe.paper}",
            "",
            recipe.description,
            "",
            f"**Hardware:** {recipe.hardware}",
            "",
        ]
        if published.get("source"):
            lines += [f"**Published:** {published['source']}", ""]
        scores = published.get("scores") or {}
        if scores:
            lines += ["| benchmark | published |", "|---|---|"]
            lines += [f"| {bench} | {_value(metrics)} |" for bench, metrics in scores.items()]
            lines.append("")
        lines += ["Steps (`adapter-zoo run " + path.stem + " --dry-run` prints them expanded):", ""]
        lines.append("```text")
        for step in recipe.steps:
            prefix = f"[for {step.foreach}] " if step.foreach else ""
            smoke = " (--smoke only)" if step.smoke_only else ""
            lines.append(f"{prefix}adapter-zoo {step.run}{smoke}")
        lines += ["```", ""]
    return "\n".join(lines)


def benchmarks_reference() -> str:
    """Markdown: the benchmark registry (``benchmarks.names()``), one row per benchmark."""
    import benchmarks

    rows = [
        "| name | task | main metric | a query without a relevant candidate | candidates | "
        "defined by |",
        "|---|---|---|---|---|---|",
    ]
    for name in benchmarks.names():
        bench = benchmarks.get(name)
        label = f"`{name}`" + (f" ({bench.title})" if bench.title else "")
        source = f"[{bench.citation}]({bench.homepage})" if bench.homepage else bench.citation
        rule = {"drop": "left out", "zero": "counts 0"}[bench.no_positive]
        rows.append(
            f"| {label} | {bench.task} | {bench.main_metric} | {rule} | "
            f"{bench.candidate_pool} | {source} |"
        )
    return "\n".join(rows)


GENERATORS = {
    "<!-- generated: cli -->": cli_reference,
    "<!-- generated: recipes -->": recipes_reference,
    "<!-- generated: benchmarks -->": benchmarks_reference,
}


def on_page_markdown(markdown: str, page, config, files) -> str:
    for marker, generate in GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
