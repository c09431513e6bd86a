"""The crash campaign's commands and the inputs they share (:class:`World`).

The world is made once: the tiny random BERTs (``adapter_zoo.tiny.build_tiny_bert``), three
small shipped forums parsed (augur, bicycles.meta, raspberrypi.meta), a zoo of two bi-encoder
adapters and a cross-encoder adapter trained on them, a benchmark built from bicycles.meta, and an olah
serving the bi-encoder adapter pushed to ``crash/bm-bi``. Each trial gets a folder of its
own (``root``): the commands write only there (their zoo, Hugging Face cache, results, ...),
and read the world.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.reliability import crash_checks as checks
from benchmarks.reliability.crash_hooks import GIT_UPLOAD_ENV

ROOT = Path(__file__).resolve().parents[2]
FORUMS = ("augur", "bicycles.meta", "raspberrypi.meta")
HOSTS = {name: f"{name}.stackexchange.com" for name in FORUMS}
PUSHED = "crash/bm-bi"


@dataclasses.dataclass
class World:
    """The shared inputs under ``folder`` and the olah serving ``folder/hub``."""

    folder: Path
    hub_url: str = ""
    server: object = None

    @classmethod
    def make(cls, folder: Path) -> World:
        # torch (the tiny BERTs) on first use: the campaign's --help starts without it
        from adapter_zoo.tiny import build_tiny_bert
        from stackexchange.catalog import shipped_data

        world = cls(folder)
        folder.mkdir(parents=True, exist_ok=True)
        dump = folder / "dump"
        if not dump.exists():
            (folder / ".dump").mkdir(exist_ok=True)
            for host in HOSTS.values():
                shutil.copy(shipped_data() / f"{host}.7z", folder / ".dump")
            os.replace(folder / ".dump", dump)
        for name, sentence in (("tiny", False), ("tiny-st", True)):
            build_tiny_bert(folder / name, sentence_encoder=sentence)
        world.cli(["parse", str(dump), "--out", str(world.parsed)])
        bench = folder / "bench"
        if not bench.exists():
            world.cli(["build-benchmark", str(world.forum("bicycles.meta")), "--out", str(bench),
                       "--candidates", "10"])  # fmt: skip
        for name in ("bm-bi", "au-bi", "bm-cross"):
            if not (world.zoo / name).exists():
                world.cli(TRAINING[name](world, name))
        world.start_hub()
        try:
            if not (world.hub / "models" / PUSHED).exists():
                env = {**world.hub_env(folder / "pushed"), GIT_UPLOAD_ENV: str(world.hub),
                       "ADAPTER_ZOO_HOME": str(world.zoo)}  # fmt: skip
                world.cli(["push", "bm-bi", PUSHED], env=env, hooks=True)
        except BaseException:
            world.close()  # the olah goes with a world that could not be made
            raise
        return world

    @property
    def parsed(self) -> Path:
        return self.folder / "parsed"

    @property
    def zoo(self) -> Path:
        return self.folder / "zoo"

    @property
    def hub(self) -> Path:
        return self.folder / "hub"

    def forum(self, name: str) -> Path:
        return self.parsed / HOSTS[name]

    def env(self, zoo: Path | None = None) -> dict:
        """Offline, tokenizers quiet, this checkout first on the path, ``zoo`` the zoo."""
        return {
            **os.environ, "PYTHONPATH": str(ROOT), "ADAPTER_ZOO_HOME": str(zoo or self.zoo),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        }  # fmt: skip

    def hub_env(self, root: Path) -> dict:
        """Online against the olah, with ``root``'s own Hugging Face cache and index."""
        return {**self.env(root / "zoo"), "HF_HUB_OFFLINE": "0", "HF_ENDPOINT": self.hub_url,
                "HF_HUB_CACHE": str(root / "hf"), "ADAPTER_ZOO_INDEX": "crash/index"}  # fmt: skip

    def cli(self, argv: list[str], *, env: dict | None = None, hooks: bool = False) -> None:
        module = "benchmarks.reliability.crash_hooks" if hooks else "adapter_zoo"
        subprocess.run([sys.executable, "-m", module, *argv], check=True, cwd=ROOT,
                       env=env or self.env(), stdout=subprocess.DEVNULL)  # fmt: skip

    def start_hub(self) -> None:
        from benchmarks.olah import start_olah

        olah = self.folder / "olah"
        (olah / "mirrors").mkdir(parents=True, exist_ok=True)
        if not self.hub.exists():
            self.hub.symlink_to(olah / "mirrors")
        self.server, self.hub_url = start_olah(olah, moving=True)

    def close(self) -> None:
        if self.server is not None:
            self.server.terminate()
            self.server.wait(timeout=30)


def _bi(world: World, name: str, forum: str) -> list[str]:
    return ["train", "--mode", "adapter", "--encoder", "bi", "--data", str(world.parsed),
            "--forums", forum, "--name", name, "--base", str(world.folder / "tiny-st"),
            "--max-steps", "6", "--eval-steps", "2", "--batch-size", "16"]  # fmt: skip


def _cross(world: World, name: str) -> list[str]:
    return ["train", "--mode", "adapter", "--encoder", "cross", "--data", str(world.parsed),
            "--forums", "bicycles.meta", "--name", name, "--base", str(world.folder / "tiny"),
            "--pairs", "title_answer", "--epochs", "2", "--batch-size", "32"]  # fmt: skip


TRAINING = {
    "bm-bi": lambda world, name: _bi(world, name, "bicycles.meta"),
    "au-bi": lambda world, name: _bi(world, name, "augur"),
    "bm-cross": _cross,
}


@dataclasses.dataclass(frozen=True)
class Command:
    """A command of the campaign: its arguments, inputs, outputs and checks in a trial
    folder ``root``."""

    name: str
    kills: int  # trials in a full campaign
    arguments: Callable[[World, Path], list[str]]
    outputs: tuple[str, ...]  # folders of root compared with the uninterrupted run's
    with_zoo: bool = False  # the trial's zoo starts as a copy of the world's
    hub: bool = False

    def prepare(self, world: World, root: Path) -> None:
        if self.with_zoo:
            shutil.copytree(world.zoo, root / "zoo", ignore=shutil.ignore_patterns(".*"))
        else:
            (root / "zoo").mkdir()

    def argv(self, world: World, root: Path) -> list[str]:
        return self.arguments(world, root)

    def env(self, world: World, root: Path) -> dict:
        if not self.hub:
            return world.env(root / "zoo")
        return {**world.hub_env(root), GIT_UPLOAD_ENV: str(world.hub)}

    def problems(self, world: World, root: Path) -> list[str]:
        found = checks.zoo_problems(root / "zoo")
        found += checks.forum_problems(root / "parsed")
        found += checks.benchmark_problems(root / "bench")
        found += checks.results_problems(root / "results")
        if self.name == "run":
            work = root / "run"
            found += checks.zoo_problems(work / "zoo") + checks.forum_problems(work / "parsed")
            found += checks.benchmark_problems(work / "bench" / "heldout")
            found += checks.results_problems(work / "results")
        if self.hub:
            found += checks.snapshot_problems(root / "hf", _pushed_files(world))
            found += checks.hub_problems(world.hub / "models" / _repo(root))
        return found

    def fingerprint(self, world: World, root: Path) -> dict[str, str]:
        found = {}
        for output in self.outputs:
            if output == "hub":
                digests = checks.hub_fingerprint(world.hub / "models" / _repo(root))
            else:
                digests = checks.fingerprint(root / output, root)
            found.update({f"{output}/{key}": digest for key, digest in digests.items()})
        return found


def _repo(root: Path) -> str:
    """The repository a push trial writes (a new one per trial)."""
    return f"crash/push-{root.name}"


def _pushed_files(world: World) -> dict[str, str]:
    """The pushed repository's files: push writes its own card (where the entry came from),
    so the local entry's bytes are not what a pull must bring."""
    return checks.hub_fingerprint(world.hub / "models" / PUSHED)


def _parse(workers: str) -> Callable[[World, Path], list[str]]:
    return lambda w, r: ["parse", str(w.folder / "dump"), "--out", str(r / "parsed"),
                         "--workers", workers]  # fmt: skip


def _adapt(world: World, root: Path) -> list[str]:
    return ["adapt", "--target", str(world.forum("raspberrypi.meta")), "--name", "ad",
            "--strategy", "soup", "--top-k", "2", "--zoo", "bm-bi", "au-bi"]  # fmt: skip


def _build(world: World, root: Path) -> list[str]:
    dump = world.folder / "dump" / f"{HOSTS['bicycles.meta']}.7z"
    return ["build", "bicycles.meta", "--dump", str(dump), "--name", "bld", "--base",
            str(world.folder / "tiny-st"), "--steps", "4"]  # fmt: skip


def _build_benchmark(world: World, root: Path) -> list[str]:
    return ["build-benchmark", str(world.forum("bicycles.meta")), "--out", str(root / "bench"),
            "--candidates", "10"]  # fmt: skip


def _evaluate(world: World, root: Path) -> list[str]:
    return ["evaluate", "--model", "bm-bi", "bm-cross", "bm25", "--benchmark",
            f"local:{world.folder / 'bench'}", "--results", str(root / "results")]  # fmt: skip


def _compose(world: World, root: Path) -> list[str]:
    return ["compose", "--name", "cz", "--fusion", "bm-bi", "bm25", "--data", str(world.parsed),
            "--forum", "bicycles.meta"]  # fmt: skip


def _run(world: World, root: Path) -> list[str]:
    return ["run", "multicqa_indomain_bert", "--smoke", "--work", str(root / "run")]


COMMANDS = [
    # --workers 1: every write in the killed process (its io kills land there); parse-pool
    # parses the forums in worker processes, which must die with it
    Command("parse", 20, _parse("1"), ("parsed",)),
    Command("parse-pool", 10, _parse("2"), ("parsed",)),
    Command("train-bi", 20, lambda w, r: _bi(w, "t-bi", "bicycles.meta"), ("zoo",)),
    Command("train-cross", 16, lambda w, r: _cross(w, "t-cross"), ("zoo",)),
    Command("adapt", 20, _adapt, ("zoo",), with_zoo=True),
    Command("build", 16, _build, ("zoo",)),
    Command("build-benchmark", 24, _build_benchmark, ("bench",)),
    Command("evaluate", 20, _evaluate, ("results",), with_zoo=True),
    Command("compose", 20, _compose, ("zoo",), with_zoo=True),
    Command("push", 16, lambda w, r: ["push", "bm-bi", _repo(r)], ("hub",), True, True),
    Command("pull", 16, lambda w, r: ["pull", PUSHED], ("hf",), hub=True),
    Command("run", 12, _run, ("run",)),
]
