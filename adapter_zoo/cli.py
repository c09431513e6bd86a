"""The ``adapter-zoo`` command line.

Each package contributes its sub-commands through a ``register(subparsers)`` function
in the modules below. Those modules import heavy libraries (torch, transformers) only
inside the command functions, so ``adapter-zoo parse`` runs without torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from stackexchange.errors import AdapterZooError

COMMAND_MODULES = (
    "stackexchange.cli",  # parse, forums
    "adapter_zoo.training.cli",  # train
    "adapter_zoo.zoo.cli",  # list, export
    "adapter_zoo.compose.cli",  # compose
    "adapter_zoo.hub.cli",  # push, pull
    "benchmarks.cli",  # evaluate, leaderboard, build-benchmark
    "adapter_zoo.cascade.cli",  # recommend, sweep
    "adapter_zoo.recipes.cli",  # run, quickstart
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="adapter-zoo",
        description="Per-forum adapters and cross-encoder rankers for question answering.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            # A command module not written yet is simply absent; a missing
            # dependency inside an existing one is a real error.
            if error.name is not None and name.startswith(error.name):
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"adapter-zoo {args.command}: interrupted", file=sys.stderr)
        return 130
    except (AdapterZooError, OSError) as error:
        # Bad input (a corrupt archive, an unknown forum, a missing file: the project's own
        # errors and OSError) is reported in one line; anything else, a ValueError from a
        # library included, is a bug and keeps its traceback.
        message = str(error).splitlines()[0] if str(error) else type(error).__name__
        print(f"adapter-zoo {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
