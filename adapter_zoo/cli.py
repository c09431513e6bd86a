"""The ``adapter-zoo`` command line.

Each package contributes its sub-commands through a ``register(subparsers)`` function that it
names as an entry point of group ``adapter_zoo.commands`` in ``pyproject.toml``. The command
line reads that group instead of importing the packages above ``adapter_zoo`` (``benchmarks``,
``recipes``), so no import runs up a floor. The registering modules import heavy libraries
(torch, transformers) only inside the command functions, so ``adapter-zoo parse`` runs
without torch.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import warnings
from importlib.metadata import PackageNotFoundError, entry_points, version

from adapter_zoo.errors import ZooWarning
from stackexchange.errors import one_line, run_reported
from stackexchange.paths import output_folder_option

COMMAND_GROUP = "adapter_zoo.commands"
# Its first sentence is the README's first line and the package docstring's
# (tests/test_first_words.py); written as it is shown, lines kept.
DESCRIPTION = """\
A zoo of small domain adapters inside a sentence-embedding model: rank answers
and find duplicate questions in a domain nobody labelled.

  train     a forum's adapter inside all-MiniLM-L6-v2, a bi-encoder (the default),
            or inside BERT or RoBERTa, a cross-encoder (the papers' model)
  adapt     a model for a domain nobody labelled, from its own posts
  evaluate  any model against the one a user already has (the zero-shot base)
  push      an entry to the Hugging Face Hub (pull fetches one)
  export    an entry as ONNX (any bi- or cross-encoder), to use without adapter-zoo

Start with: adapter-zoo quickstart (about 5 minutes on 2 CPU cores)."""
# The packages whose progress the command line shows (library code logs, never prints).
LOGGED_PACKAGES = ("stackexchange", "adapter_zoo", "benchmarks", "recipes")
_progress: logging.Handler | None = None


def show_progress(command: str) -> None:
    """Show the project's log records of level INFO and up on stderr as
    ``adapter-zoo COMMAND: message``; a library user's own logging setup is left alone."""
    global _progress
    # A new handler on the sys.stderr of this call (tests and recipe steps replace it),
    # instead of the last call's, which main() may run once per step of a recipe.
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"adapter-zoo {command}: %(message)s"))
    for name in LOGGED_PACKAGES:
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        if _progress is not None:
            logger.removeHandler(_progress)
        logger.addHandler(handler)
    _progress = handler


@contextlib.contextmanager
def one_line_warnings(prog: str):
    """While a command runs, show the project's warnings (:class:`ZooWarning`) on stderr as
    ``PROG: warning: message``, one line; other libraries' warnings keep Python's format
    (their source line helps whoever reports them), and a Python caller's are untouched."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, ZooWarning):
            print(f"{prog}: warning: {one_line(str(message))}", file=file or sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


def package_version() -> str:
    """The installed distribution's version (its metadata), as ``pip show`` reports it."""
    try:
        return version("adapter-zoo")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adapter-zoo",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"adapter-zoo {package_version()}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands = entry_points(group=COMMAND_GROUP)
    if not commands:
        raise RuntimeError(
            f"no {COMMAND_GROUP} entry points: install adapter-zoo (pip install -e .) so that "
            "its metadata lists the commands"
        )
    for command in commands:
        command.load()(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    # export NAME --format onnx OUT: argparse has taken its positionals before the option
    late_out = len(extra) == 1 and not extra[0].startswith("-")
    if getattr(args, "command", None) == "export" and late_out and args.out_dir is None:
        args.out_dir, extra = output_folder_option(extra[0]), []
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    show_progress(args.command)
    prog = f"adapter-zoo {args.command}"
    with one_line_warnings(prog):
        return run_reported(prog, lambda: args.func(args))


if __name__ == "__main__":
    sys.exit(main())
