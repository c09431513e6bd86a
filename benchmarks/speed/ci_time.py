"""CI timed as it lands: ``.ci/run`` on a clean clone of the checkout's HEAD, ``CI=true``.

Clones HEAD beside the checkout (so ``../shared`` is the same data, as on CI), runs
``.ci/run`` there as CI does (nothing installed by hand: it installs everything itself) and
records its stage times (install, lint, docs, tests), the test count and the slowest tests
(the README's command lists 25), with the chip and its flags: the CPUs CI meets differ in
speed, so a time means little without its chip. Each slow test's decision (why it is as long as it is, or what made it
shorter) is :data:`DECISIONS`; a slow test without one is listed as undecided.
Target: 10 minutes in all on the slowest 2-core machine CI meets.

Run on a quiet machine: ``python benchmarks/speed/ci_time.py --clone /work/cirun``
(writes results/ci_time.json; the clone folder must not exist).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine_info  # noqa: E402
from stackexchange.io import atomic_write_json  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
TARGET_S = 600
STAGE = re.compile(r"^\.ci/run: stage (\w+) took (\d+) s$", re.M)
DURATION = re.compile(r"^([\d.]+)s (call|setup|teardown)\s+(\S+)$", re.M)
SUMMARY = re.compile(r"^=+ (.*) in ([\d.]+)s", re.M)

# Why each test that takes over 10 s on the slowest machine (about 5 s on the AVX512 Xeon)
# is as long as it is. A test id's prefix matches its parametrized cases.
# fmt: off
DECISIONS = {
    "tests/adapter_zoo/training/test_beer_integration.py::":
        "kept: CI's one real cross-encoder training (MiniLM, beer); its dev selection reads 20 lists",
    "tests/recipes/test_ray.py::":
        "kept: the Ray executor's one end-to-end test (one Ray instance for the module)",
    "tests/recipes/test_smoke.py::test_quickstart_smoke":
        "kept: the README's main command, smoke mode (tiny BERT)",
    "tests/recipes/test_smoke.py::test_recipe_runs_in_smoke_mode":
        "kept: each shipped recipe once in smoke mode (tiny BERT, 10 candidates)",
    "tests/recipes/test_shipped_zoo.py::":
        "kept: the shipped zoo's recipe in smoke mode",
    "tests/test_packaging.py::test_the_readme_cpu_install":
        "kept: pip's resolver against the registry (no CUDA wheel); marked slow, starts first",
    "tests/adapter_zoo/adapt/":
        "kept: adapt end to end on a real forum with the tiny BERT (2 steps)",
    "tests/adapter_zoo/onnx/test_adapt_int8.py::":
        "kept: adapt deciding on int8 scores (tiny BERT)",
    "tests/test_precision_quality.py::":
        "kept: bf16 against fp32 on real pairs (MiniLM), the one real case of bf16 scoring",
    "tests/adapter_zoo/training/test_training_modes.py::test_two_processes_under_torch_distributed":
        "kept: the one multi-process training (two processes importing torch)",
    "tests/benchmarks/datasets/test_real_data.py::test_semeval_expected_scores":
        "kept: the small real case of the registry's SemEval scores (2016 is heavy)",
    "tests/adapter_zoo/biencoder/":
        "kept: tiny BERT; trained entries shared by a module fixture where tests start alike",
    "tests/faults/":
        "kept: CI's few seeded kills; the campaign is benchmarks/reliability/crash_campaign.py",
    "tests/benchmarks/test_mteb.py::":
        "kept: MTEB's evaluator as the outside check of our MAP (real forum and WikiQA lists)",
    "tests/adapter_zoo/training/test_precision_training.py::":
        "kept: bf16 training on the tiny BERT (fusion members bit-identical)",
    "tests/adapter_zoo/training/test_lora.py::":
        "kept: opens the export in a fresh process (proves no adapter_zoo import)",
}
# fmt: on


def decision(test: str) -> str | None:
    """The decision recorded for ``test`` (longest matching prefix), None if there is none."""
    found = [prefix for prefix in DECISIONS if test.startswith(prefix)]
    return DECISIONS[max(found, key=len)] if found else None


def parse_log(log: str) -> dict:
    """Stage times, test counts and the slowest tests (with their decisions) of a
    ``.ci/run`` log."""
    summaries = SUMMARY.findall(log)
    counts, seconds = summaries[-1] if summaries else ("", "0")

    def count(word: str) -> int:
        found = re.search(rf"(\d+) {word}", counts)
        return int(found.group(1)) if found else 0

    slowest = [
        {"seconds": float(s), "when": when, "test": test, "decision": decision(test)}
        for s, when, test in DURATION.findall(log)
    ]
    return {
        "stages": {name: int(s) for name, s in STAGE.findall(log)},
        "passed": count("passed"),
        "failed": count("failed"),
        "pytest_seconds": float(seconds),
        "slowest": slowest,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", type=Path, required=True, help="where to clone (new folder)")
    parser.add_argument("--out", type=Path, default=RESULTS / "ci_time.json")
    args = parser.parse_args(argv)
    if args.clone.exists():
        parser.error(f"{args.clone}: exists; the clone must be new (CI starts from nothing)")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    subprocess.run(["git", "clone", "-q", str(ROOT), str(args.clone)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    started = time.perf_counter()
    done = subprocess.run(["bash", ".ci/run"], cwd=args.clone, env={**env, "CI": "true"},
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - started
    log = done.stdout + done.stderr
    (args.clone / "ci.log").write_text(log)
    record = {
        "script": "benchmarks/speed/ci_time.py",
        "commit": commit,
        "machine": {**machine_info(), "load_after": os.getloadavg()[0]},
        "exit_code": done.returncode,
        "wall_time_s": round(wall, 1),
        "target_s": TARGET_S,
        **parse_log(log),
    }
    atomic_write_json(args.out, record)
    print(f"{args.out}: .ci/run exit {done.returncode} in {wall:.0f} s {record['stages']}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
