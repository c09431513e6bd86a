"""Fault tests: a command killed at a seeded moment, then run again.

This folder mirrors no package (CONTRIBUTING's rule that ``tests/`` mirrors the packages
has this exception): its tests kill the commands of every floor (parse, train, adapt,
build-benchmark, evaluate, compose, push, pull, a recipe's run) the same way, so they sit
together. They are the CI's few seeded kills of what ``benchmarks/reliability/crash_campaign.py``
does by the hundred.

A command runs in a process forked from the test's (its libraries already imported, so a
run takes what its work takes), through the campaign's hooks
(``benchmarks/reliability/crash_hooks.py``): the process kills itself with SIGKILL right after its
k-th change to the file system. The forked process keeps torch to one thread: OpenMP's
thread pool does not survive a fork, and one thread also keeps the numbers of every run
alike.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sys
import time
import traceback
import types
from pathlib import Path

import pytest

_RUNNING: set[int] = set()  # forked runs not waited for yet


@pytest.fixture(autouse=True)
def _no_run_outlives_its_test():
    """A forked run still going when its test ends (a failed assertion left one paused) is
    killed: it would wait for ever and hold the test session's output open."""
    yield
    for pid in list(_RUNNING):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        _RUNNING.discard(pid)


class Forked:
    """``adapter-zoo argv`` running in a forked process through the campaign's hooks
    (``crash_hooks.main``: ``push`` writes to olah's repositories when ``CRASH_GIT_UPLOAD``
    is set), killed after its ``kill_at``-th change to the file system (0: never) or paused
    after its ``pause_at``-th until :meth:`go`. ``prepare()`` runs in the child first (a
    file-size limit, another user). Its stderr goes to ``log``."""

    def __init__(self, argv: list[str], log: Path, *, kill_at: int = 0, pause_at: int = 0,
                 prepare=None):  # fmt: skip
        self.log, self.pause = log, str(log.with_suffix(".pause"))
        self.changes = log.with_suffix(".changes")
        self.changes.unlink(missing_ok=True)
        self.pid = os.fork()
        if self.pid:
            _RUNNING.add(self.pid)
        else:  # the child: never returns into pytest
            code = 70
            try:
                os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
                # pytest's capture replaced sys.stdout and sys.stderr: the files again
                sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 (until os._exit)
                sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
                # imported by the parent before it forked
                import torch

                from benchmarks.reliability import crash_hooks

                torch.set_num_threads(1)
                os.environ.update({
                    crash_hooks.KILL_AT_ENV: str(kill_at), crash_hooks.PAUSE_AT_ENV: str(pause_at),
                    crash_hooks.PAUSE_FILE_ENV: self.pause,
                    crash_hooks.OPS_FILE_ENV: str(self.changes),
                })  # fmt: skip
                if prepare is not None:
                    prepare()
                code = crash_hooks.main(argv)
            except BaseException:  # a bug: its traceback in the log (a SystemExit's code too)
                traceback.print_exc()
            finally:
                os._exit(code)

    def paused(self) -> None:
        """Wait until the run pauses (or ends: then it never reached the change)."""
        while not os.path.exists(self.pause + ".paused"):
            finished, _ = os.waitpid(self.pid, os.WNOHANG)
            assert not finished, f"ended before it paused: {self.log.read_text()[-2000:]}"
            time.sleep(0.02)

    def go(self) -> None:
        Path(self.pause + ".go").touch()

    def wait(self) -> tuple[int, int]:
        """Its exit status (-9: killed) and how many changes it made to the file system."""
        _, status = os.waitpid(self.pid, 0)
        _RUNNING.discard(self.pid)
        done = int(self.changes.read_text()) if self.changes.exists() else 0
        return os.waitstatus_to_exitcode(status), done


def fork_cli(argv: list[str], log: Path, **options) -> tuple[int, int]:
    """:class:`Forked` run to its end: its exit status and its number of changes."""
    return Forked(argv, log, **options).wait()


class Kills:
    """A command's reference run and its seeded kills, each followed by a rerun."""

    def __init__(self, argv: list[str], tmp: Path):
        self.argv, self.tmp = argv, tmp

    def reference(self) -> int:
        """Run once uninterrupted; return its number of file-system changes."""
        code, changes = fork_cli(self.argv, self.tmp / "reference.log")
        assert code == 0, (self.tmp / "reference.log").read_text()[-2000:]
        return changes

    def moments(self, changes: int, count: int, seed: str) -> list[int]:
        """``count`` seeded moments (change numbers) spread over ``changes``: one drawn in
        each of ``count`` equal parts."""
        rng = random.Random(seed)
        edges = [round(changes * i / count) for i in range(count + 1)]
        return [rng.randint(edges[i] + 1, max(edges[i] + 1, edges[i + 1])) for i in range(count)]

    def kill(self, at: int) -> None:
        """Run, killed right after change ``at``."""
        code, _ = fork_cli(self.argv, self.tmp / f"kill-{at}.log", kill_at=at)
        assert code == -signal.SIGKILL, f"not killed at change {at}: exit {code}"

    def rerun(self) -> None:
        """The same command again, to the end."""
        code, _ = fork_cli(self.argv, self.tmp / "rerun.log")
        assert code == 0, (self.tmp / "rerun.log").read_text()[-2000:]


@pytest.fixture
def survives(tmp_path):
    """``survives(argv, out, seed, problems, keep=(), count=2)``: ``adapter-zoo argv`` is
    killed at ``count`` seeded moments; after each kill ``problems(out)`` finds nothing, and
    the rerun leaves ``out`` as the uninterrupted run did (``outputs()``, by default
    ``crash_checks.fingerprint`` of ``out``). ``out`` is emptied before each run; ``keep``:
    its folders that are inputs, put back."""
    from benchmarks.reliability.crash_checks import fingerprint

    def check(argv, out: Path, seed: str, problems, *, keep=(), count: int = 2,
              outputs=None) -> None:  # fmt: skip
        outputs = outputs or (lambda: fingerprint(out, out))
        saved = {name: tmp_path / f"saved-{name}" for name in keep}
        for name, copy in saved.items():
            shutil.copytree(out / name, copy)
        run = Kills(argv, tmp_path)
        changes = run.reference()
        want = outputs()
        for at in run.moments(changes, count, seed):
            shutil.rmtree(out)
            out.mkdir()
            for name, copy in saved.items():
                shutil.copytree(copy, out / name)
            run.kill(at)
            assert problems(out) == [], f"after a kill at change {at} of {changes}"
            run.rerun()
            assert outputs() == want, f"rerun after a kill at change {at} of {changes}"

    return check


@pytest.fixture(scope="session")
def warm_embedder():
    """all-MiniLM-L6-v2 (the domain centroids' embedder) loaded before the tests fork, so
    each forked run does not load it again."""
    from adapter_zoo.zoo.domain import default_embedder

    return default_embedder()


@pytest.fixture(scope="session")
def parsed_augur(tmp_path_factory) -> Path:
    """The smallest shipped forum (augur: 258 questions), parsed: training on it takes the
    fewest seconds of a real parse output. Its domain centroid is computed here, once: the
    forked runs find it in the process's cache (``zoo.domain._cached_centroid``) instead of
    embedding its titles again each time."""
    from adapter_zoo.zoo.domain import training_domain
    from stackexchange import parse_forum
    from stackexchange.catalog import shipped_data

    out = tmp_path_factory.mktemp("parsed-augur")
    parse_forum(shipped_data() / "augur.stackexchange.com.7z", out)
    training_domain(out, ["augur.stackexchange.com"])
    return out


@pytest.fixture(scope="session")
def faults_kit():
    """The campaign's checks, for the test modules (conftest is not importable)."""
    from benchmarks.reliability import crash_checks

    return types.SimpleNamespace(checks=crash_checks, fork_cli=fork_cli, Forked=Forked)
