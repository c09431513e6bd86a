"""The coverage-guided fuzzing campaign over every reader, outside CI.

Each reader of ``tests/fuzz/fuzz_readers.py`` (the table CI's Hypothesis tests fuzz too) runs
under Atheris (libFuzzer for Python: coverage-guided byte mutations of its corpus, seeded
with the real files' cuts) in a child process of its own, for its share of the wall budget
or until ``--runs`` inputs, whichever comes first. Every input is judged by the harness's
rule (``run_input``): a reader may return or raise the project's own error naming the file;
anything else, a hang over 10 s or a growth of memory over 1 GiB is a finding, saved with
its input. A child that dies (libFuzzer's RSS limit, a crash below Python) is a finding too,
and the reader's fuzzing goes on from its corpus in a fresh child.

Afterwards each reader's corpus (what libFuzzer kept for new coverage) is replayed under
``coverage`` in a fresh process: the project's lines and arcs the seeds reach, and those
the whole corpus reaches.

    nice -n 19 python benchmarks/reliability/fuzz_campaign.py --budget 5400 --work /tmp/fuzz

writes ``benchmarks/results/fuzz_campaign.json``; ``docs/reliability.md``'s fuzzing
table comes from it (``benchmarks/report/``). The harness lives with the tests, so
this script loads it from there (it imports every floor, ``recipes`` included, which a
``benchmarks`` module may not: the script stays outside the packages).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "fuzz"
RESULTS = Path(__file__).resolve().parents[1] / "results" / "fuzz_campaign.json"
PACKAGES = ("stackexchange", "adapter_zoo", "benchmarks", "recipes")
TARGET_RUNS = 100_000


def _harness():
    """The harness module (``tests/fuzz/fuzz_readers.py``), imported from its folder."""
    sys.path.insert(0, str(HARNESS))
    import fuzz_readers  # the tests' harness, loaded from its folder (not a package)

    return fuzz_readers


# ---------------------------------------------------------------- the child: one reader


def fuzz_child(name: str, corpus: Path, found: Path, seconds: int, runs: int) -> None:
    """Fuzz reader ``name`` under Atheris; never returns (libFuzzer exits the process)."""
    import atheris  # the fuzz extra: only the campaign's children need it

    with atheris.instrument_imports(include=list(PACKAGES)):
        harness = _harness()
    reader = harness.BY_NAME[name]
    if not any(corpus.iterdir()):
        for seed in reader.seeds():
            (corpus / hashlib.sha1(seed).hexdigest()).write_bytes(seed)
    status = found / f"{name}.status.json"
    count = json.loads(status.read_text())["runs"] if status.exists() else 0
    last = time.monotonic()
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # the harness's timer restores this

    def one_input(data: bytes) -> None:
        nonlocal count, last
        work = Path(tempfile.mkdtemp(prefix="fuzz-"))
        try:
            finding = harness.run_input(reader, data, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        count += 1
        if finding is not None:
            digest = hashlib.sha1(data).hexdigest()
            (found / f"{name}-{digest}.input").write_bytes(data)
            with open(found / f"{name}.findings.jsonl", "a", encoding="utf-8") as log:
                log.write(
                    json.dumps({"finding": finding, "input": f"{name}-{digest}.input"}) + "\n"
                )
        if time.monotonic() - last > 1:
            status.write_text(json.dumps({"runs": count}))
            last = time.monotonic()

    rss_mb = harness.peak_rss() >> 20
    atheris.Setup(
        [sys.argv[0], str(corpus), f"-max_total_time={seconds}", f"-runs={runs}",
         "-timeout=0", f"-rss_limit_mb={rss_mb + (harness.MEMORY_BOUND >> 20)}",
         "-max_len=65536", f"-artifact_prefix={found}/{name}-", "-print_final_stats=1"],
        one_input,
    )  # fmt: skip
    try:
        atheris.Fuzz()
    finally:
        status.write_text(json.dumps({"runs": count}))


def replay_child(name: str, corpus: Path, seeds_only: bool) -> None:
    """Print the project's lines and arcs the seeds (or the whole corpus) reach."""
    import coverage  # the fuzz extra: only the campaign's children need it

    harness = _harness()
    reader = harness.BY_NAME[name]
    inputs = reader.seeds() if seeds_only else [p.read_bytes() for p in sorted(corpus.iterdir())]
    # data_file=None: the measurement stays in memory, no .coverage file in the folder
    measured = coverage.Coverage(
        data_file=None, branch=True, source=[str(ROOT / p) for p in PACKAGES]
    )
    measured.start()
    for data in inputs:
        with tempfile.TemporaryDirectory(prefix="fuzz-") as work:
            harness.run_input(reader, data, Path(work))
    measured.stop()
    data = measured.get_data()
    files = data.measured_files()
    lines = sum(len(data.lines(f) or ()) for f in files)
    arcs = sum(len(data.arcs(f) or ()) for f in files)
    print(json.dumps({"inputs": len(inputs), "lines": lines, "arcs": arcs}))


# ---------------------------------------------------------------- the parent


def _child(*args: str) -> list[str]:
    return [sys.executable, __file__, *args]


def fuzz_reader(name: str, work: Path, seconds: float, runs: int) -> dict:
    """Fuzz one reader for ``seconds`` or ``runs`` inputs, restarting a child that died."""
    corpus, found = work / name / "corpus", work / name / "found"
    corpus.mkdir(parents=True, exist_ok=True)
    found.mkdir(parents=True, exist_ok=True)
    status = found / f"{name}.status.json"
    began, deaths = time.monotonic(), []
    while True:
        done = json.loads(status.read_text())["runs"] if status.exists() else 0
        left = seconds - (time.monotonic() - began)
        if done >= runs or left < 5:
            break
        args = ["--child", name, "--corpus", str(corpus), "--found", str(found),
                "--seconds", str(int(left)), "--runs", str(runs - done)]  # fmt: skip
        try:
            ran = subprocess.run(_child(*args), capture_output=True, text=True, timeout=left + 60)
        except subprocess.TimeoutExpired:  # a hang below Python, which the timer cannot stop
            deaths.append("hang: the child ran a minute past its time")
            continue
        tail = (ran.stdout + ran.stderr)[-3000:]
        if match := re.search(r"Done (\d+) runs", tail):
            # libFuzzer's own count: the child saves its count once a second and libFuzzer
            # ends it without a last save
            status.write_text(json.dumps({"runs": done + int(match[1])}))
        if "Done " in tail and "ERROR" not in tail:
            break
        reason = next((line for line in tail.splitlines() if "ERROR" in line), tail[-300:])
        deaths.append(reason.strip())
    done = json.loads(status.read_text())["runs"] if status.exists() else 0
    log = found / f"{name}.findings.jsonl"
    findings = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return {
        "inputs": done,
        "seconds": round(time.monotonic() - began, 1),
        "corpus": len(list(corpus.iterdir())),
        "findings": [f["finding"] for f in findings] + deaths,
        "finding_inputs": [f["input"] for f in findings],
    }


def coverage_of(name: str, corpus: Path) -> dict:
    """Lines and arcs of the project the seeds reach, and those the corpus reaches."""
    measured = {}
    for which, extra in (("seeds", ["--seeds-only"]), ("corpus", [])):
        ran = subprocess.run(
            _child("--replay", name, "--corpus", str(corpus), *extra),
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        measured[which] = json.loads(ran.stdout.strip().splitlines()[-1])
    return measured


def campaign(
    work: Path, budget: float, runs: int, names: list[str], out: Path, commit: str
) -> dict:
    """Fuzz ``names`` in turn within ``budget`` seconds (a reader done early leaves its time
    to the next), then measure coverage; write ``out`` after each reader."""
    # run as a script from anywhere: the checkout's packages first, then torch through them
    sys.path.insert(0, str(ROOT))
    import atheris  # only for its version

    from benchmarks.machine import machine_info

    began = time.monotonic()
    record = {
        "machine": machine_info(),
        "tool": f"atheris {getattr(atheris, '__version__', '3.0.0')} (libFuzzer), "
        "harness tests/fuzz/fuzz_readers.py",
        "commit": commit,
        "budget_s": budget,
        "target_inputs_per_reader": runs,
        "readers": {},
    }
    for index, name in enumerate(names):
        # the coverage replay after each reader takes some of the time: keep a tenth for it
        share = (budget * 0.9 - (time.monotonic() - began)) / (len(names) - index)
        result = fuzz_reader(name, work, max(share, 10), runs)
        result["coverage"] = coverage_of(name, work / name / "corpus")
        result["what"] = _harness().BY_NAME[name].what
        record["readers"][name] = result
        record["hours"] = round((time.monotonic() - began) / 3600, 2)
        record["target_met"] = [n for n, r in record["readers"].items() if r["inputs"] >= runs]
        out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        print(f"{name}: {result['inputs']} inputs in {result['seconds']} s, "
              f"{len(result['findings'])} findings", flush=True)  # fmt: skip
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=3600, help="wall seconds in all")
    parser.add_argument("--runs", type=int, default=TARGET_RUNS, help="inputs per reader")
    parser.add_argument("--readers", nargs="*", help="these readers only (default: all)")
    parser.add_argument("--work", type=Path, help="corpora and findings (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--commit", default="", help="the commit fuzzed (a copy has no .git)")
    # the children's own options
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--replay", help=argparse.SUPPRESS)
    parser.add_argument("--seeds-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--found", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        fuzz_child(args.child, args.corpus, args.found, args.seconds, args.runs)
    if args.replay:
        replay_child(args.replay, args.corpus, args.seeds_only)
        return 0
    names = args.readers or [reader.name for reader in _harness().READERS]
    work = args.work or Path(tempfile.mkdtemp(prefix="fuzz-campaign-"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    campaign(work, args.budget, args.runs, names, args.out, args.commit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
