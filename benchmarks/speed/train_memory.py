"""Peak memory and wall time of real ``adapter-zoo train`` runs, and dev selection's share.

Each case runs the CLI (``python -m adapter_zoo train``, MiniLM-L6 on the real
quantumcomputing.stackexchange.com dump, parsed first) in a subprocess under ``nice``; the
resident set size of its whole process tree is sampled with psutil every ``--interval``
seconds, and the peak is recorded with the wall time. The dev-selection seconds are read from
the entry's training log (bi-encoders time each evaluation, cross-encoders each dev pass as
``dev_seconds``); runs of code that logged no such time record ``null``.

``--code ROOT`` runs another checkout's sources (e.g. ``/work/main`` for the numbers before a
change) with its own virtual environment; ``--label`` names the column the numbers go in, so
before and after sit side by side in one JSON. One case runs at a time, and the load average
is recorded beside each (the machine may be shared).

Run: ``python benchmarks/speed/train_memory.py --label after [--cases bi-10 cross-10 bi-default]``;
writes results/train_memory.json (merged with what it already holds).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.machine import machine_info  # noqa: E402

SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
RESULTS = Path(__file__).resolve().parents[1] / "results"
HOST = "quantumcomputing.stackexchange.com"
CASES = {
    "bi-10": ["--encoder", "bi", "--mode", "adapter", "--max-steps", "10"],
    "cross-10": ["--encoder", "cross", "--mode", "adapter", "--max-steps", "10"],
    "bi-default": ["--encoder", "bi", "--mode", "adapter"],
    "cross-default": ["--encoder", "cross", "--mode", "adapter"],
    # GradCache: the same in-batch loss from embeddings computed 8 texts at a time
    "bi-10-cached": ["--encoder", "bi", "--mode", "adapter", "--max-steps", "10",
                     "--loss", "CachedMultipleNegativesRankingLoss"],
    "bi-default-cached": ["--encoder", "bi", "--mode", "adapter",
                          "--loss", "CachedMultipleNegativesRankingLoss"],
    # small memory budgets (they bound the estimated activations, not the process's RSS):
    # 2GB takes the recompute plan for these steps, 512MB the bounded one (GradCache or
    # chunks, recomputed activations: what the runs under 2 GB RSS above did)
    "bi-10-2gb": ["--encoder", "bi", "--mode", "adapter", "--max-steps", "10",
                  "--memory-budget", "2GB"],
    "cross-10-2gb": ["--encoder", "cross", "--mode", "adapter", "--max-steps", "10",
                     "--memory-budget", "2GB"],
    "bi-10-512mb": ["--encoder", "bi", "--mode", "adapter", "--max-steps", "10",
                    "--memory-budget", "512MB"],
    "cross-10-512mb": ["--encoder", "cross", "--mode", "adapter", "--max-steps", "10",
                       "--memory-budget", "512MB"],
}  # fmt: skip
TARGET_PEAK_GB = 2.0
TARGET_DEV_SHARE = 0.25


def tree_rss(process) -> int:
    """Resident bytes of ``process`` and all its descendants (0 for ones already gone)."""
    import psutil

    total = 0
    for member in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += member.memory_info().rss
    return total


class PeakRss:
    """Wall seconds and this process's peak RSS while a ``with`` block runs (psutil sampling).

    The peak counts what the process already held when the block began (earlier contenders'
    models still alive); ``start_gb`` says how much that was.

    Example:
        >>> with PeakRss() as window:
        ...     _ = bytearray(10**6)
        >>> window.peak_gb >= window.start_gb
        True
    """

    def __init__(self, interval: float = 0.05):
        self.interval = interval

    def __enter__(self) -> PeakRss:
        import psutil

        process = psutil.Process()
        self.start_gb = process.memory_info().rss / 1e9
        self._peak = process.memory_info().rss
        self._done = threading.Event()

        def sample():
            while not self._done.is_set():
                self._peak = max(self._peak, process.memory_info().rss)
                self._done.wait(self.interval)

        self._sampler = threading.Thread(target=sample, daemon=True)
        self._started = time.perf_counter()
        self._sampler.start()
        return self

    def __exit__(self, *exc) -> None:
        self.wall_s = time.perf_counter() - self._started
        self._done.set()
        self._sampler.join()
        self.peak_gb = self._peak / 1e9

    def record(self) -> dict:
        return {"wall_s": round(self.wall_s, 1), "peak_rss_gb": round(self.peak_gb, 3),
                "rss_at_start_gb": round(self.start_gb, 3)}  # fmt: skip


def measure(command: list[str], env: dict, interval: float, log: Path) -> dict:
    """Run ``command``; its wall seconds, exit code and the process tree's peak RSS."""
    import psutil

    peak = 0
    started = time.perf_counter()
    with open(log, "wb") as out:
        child = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        process = psutil.Process(child.pid)
        done = threading.Event()

        def sample():
            nonlocal peak
            while not done.is_set():
                with contextlib.suppress(psutil.Error):
                    peak = max(peak, tree_rss(process))
                done.wait(interval)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = child.wait()
        done.set()
        sampler.join()
    return {
        "exit_code": code,
        "wall_s": round(time.perf_counter() - started, 1),
        "peak_rss_gb": round(peak / 1e9, 3),
    }


def dev_seconds(entry: Path) -> float | None:
    """Seconds the run spent scoring dev lists, from the entry's training log."""
    try:
        lines = (entry / "training_log.jsonl").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    records = [json.loads(line) for line in lines if line.strip()]
    if all("dev_seconds" in r for r in records):  # cross-encoder: epochs with a dev pass
        return round(sum(r["dev_seconds"] for r in records), 1)
    if records and all(r.get("phase") in ("base", "start", "train", "length") for r in records):
        return round(sum(r.get("seconds", 0.0) for r in records), 1)  # bi: each evaluation
    return None


def run_case(case: str, code: Path, parsed: Path, work: Path, interval: float) -> dict:
    name = f"mem-{case}"
    env = {
        **os.environ,
        "PYTHONPATH": str(code),
        "ADAPTER_ZOO_HOME": str(work / "zoo"),
        "HF_HUB_OFFLINE": "1",
    }
    command = [
        "nice", "-n", "10", str(code / ".venv" / "bin" / "python"), "-m", "adapter_zoo",
        "train", "--data", str(parsed), "--forums", HOST, "--name", name, "--overwrite",
        *CASES[case],
    ]  # fmt: skip
    load_before = os.getloadavg()
    result = measure(command, env, interval, work / f"{case}.log")
    entry = work / "zoo" / name
    seconds = dev_seconds(entry)
    from adapter_zoo.zoo.store import find_card

    card = find_card(entry) or {}
    result.update(
        {
            "dev_selection_s": seconds,
            "dev_selection_share": None
            if seconds is None
            else round(seconds / result["wall_s"], 3),
            "steps": card.get("training", {}).get("steps"),
            "best_step": card.get("training", {}).get("best_step"),
            "best_epoch": card.get("training", {}).get("best_epoch"),
            "scores": card.get("scores"),
            # the memory plan the run chose (None: code from before the plan existed)
            "memory": card.get("training", {}).get("memory"),
            "load_average_1m": {
                "before": round(load_before[0], 2),
                "after": round(os.getloadavg()[0], 2),
            },
        }  # fmt: skip
    )
    if result["exit_code"]:
        result["log_tail"] = (work / f"{case}.log").read_text(errors="replace")[-2000:]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="column of the numbers: before, after")
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose code runs")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=["bi-10", "cross-10"])
    parser.add_argument("--parsed", type=Path, default=None, help="parsed folder (else parsed)")
    parser.add_argument("--interval", type=float, default=0.1, help="RSS sampling seconds")
    parser.add_argument("--out", type=Path, default=RESULTS / "train_memory.json")
    args = parser.parse_args()

    import stackexchange
    from stackexchange.io import atomic_write_json

    work = Path(tempfile.mkdtemp(prefix="train-memory-"))
    parsed = args.parsed
    if parsed is None:
        parsed = work / "parsed"
        stackexchange.parse_forum(SHARED / "stackexchange" / HOST, parsed)
    record = json.loads(args.out.read_text()) if args.out.exists() else {}
    record["setup"] = {
        "forum": HOST,
        "base_model": "minilm-l6",
        "cases": {case: " ".join(CASES[case]) for case in sorted(CASES)},
        "sampling_interval_s": args.interval,
    }
    record["targets"] = {"peak_rss_gb": TARGET_PEAK_GB, "dev_selection_share": TARGET_DEV_SHARE}
    runs = record.setdefault("runs", {})
    for case in args.cases:
        result = run_case(case, args.code.resolve(), parsed, work, args.interval)
        result["machine"] = machine_info()
        result["code"] = str(args.code)
        runs.setdefault(args.label, {})[case] = result
        print(f"{args.label:<8}{case:<15}{result['peak_rss_gb']:>8.2f} GB{result['wall_s']:>8.1f} s"
              f"  dev share {result['dev_selection_share']}", flush=True)  # fmt: skip
        args.out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(args.out, record)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
