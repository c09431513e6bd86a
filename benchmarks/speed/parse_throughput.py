"""Parse throughput: ``stackexchange.parse_forum`` vs a bare ``lxml.etree.iterparse`` pass.

Builds a Posts.xml of at least ``--size-mb`` (default 1,100 MB) by repeating the real rows of
the beer.stackexchange.com archive with fresh ids (Id, ParentId, AcceptedAnswerId shifted per
copy; PostLinks.xml repeated the same way, so every pair kind is exercised), then times in
the same run, each in its own subprocess so peak RSS (``ru_maxrss``) is its own:

* ``bare``: ``lxml.etree.iterparse(tag="row")`` with element clearing, nothing else;
* ``ours``: ``stackexchange.parse_forum`` end to end (HTML → text, pairs, splits, datasets
  written to disk), with its default workers: Posts.xml is cut into 64 MB row-aligned
  chunks parsed by one process per core (at most 8); ``--workers 1`` measures one process.

MB/s are over Posts.xml's bytes; the ratio is ours / bare. Targets: ratio ≥ 0.7, peak RSS of
ours < 500 MB per process: the parent's ``ru_maxrss``, the largest worker's VmHWM and the
largest sum over all its processes at one moment (polled from /proc) are all reported. The generated files are deleted afterwards. Results:
``results/parse_throughput.json`` (default), or ``--output``; runs kept in the repository:
``parse_throughput.json`` (the 2-core development machine) and
``parse_throughput_h100host_16cpu_{8workers,1worker}.json`` (a 16-core machine, the same code).

Run: ``python benchmarks/speed/parse_throughput.py [--size-mb 1100] [--rounds 1] [--workers N]``
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from stackexchange.parse import STATS_FILE  # noqa: E402

SHARED = Path(os.environ.get("ADAPTER_ZOO_SHARED", ROOT.parent / "shared")) / "data"
ARCHIVE = SHARED / "stackexchange" / "beer.stackexchange.com.7z"
RESULTS = Path(__file__).resolve().parents[1] / "results"
ID_ATTRIBUTES = re.compile(r'( (?:Id|ParentId|AcceptedAnswerId|PostId|RelatedPostId)=")(\d+)"')
HOST = "bench.stackexchange.com"


def machine_info() -> dict:
    def version(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    return {
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "lxml": version("lxml"),
        "pyarrow": version("pyarrow"),
        "datasets": version("datasets"),
        "torch": version("torch"),
        "load_average_at_start": os.getloadavg(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def _rows(path: Path) -> tuple[str, list[str], str]:
    # split on "\n" only: str.splitlines would also cut at U+2028 inside attribute values
    lines = path.read_text(encoding="utf-8-sig").rstrip("\n").split("\n")
    rows = [line for line in lines if line.lstrip().startswith("<row ")]
    head = "\ufeff" + "\n".join(lines[:2]) + "\n"
    return head, rows, lines[-1] + "\n"


def build(folder: Path, size_mb: int, source_dir: Path | None = None) -> dict:
    """Write Posts.xml (≥ size_mb) and PostLinks.xml to ``folder`` from repeated beer rows.

    The rows come from the beer archive, or from ``source_dir`` holding its two XML files
    already extracted (for machines without py7zr).
    """
    source = folder / "source"
    if source_dir is not None:
        shutil.copytree(source_dir, source)
    else:
        import py7zr

        with py7zr.SevenZipFile(ARCHIVE) as archive:
            archive.extract(path=source, targets=["Posts.xml", "PostLinks.xml"])
    head, rows, tail = _rows(source / "Posts.xml")
    link_head, links, link_tail = _rows(source / "PostLinks.xml")
    step = 10 ** len(str(max(int(ID_ATTRIBUTES.search(r).group(2)) for r in rows + links)))
    target = size_mb * 1024 * 1024
    forum = folder / HOST
    forum.mkdir()
    copies = 0
    with (
        open(forum / "Posts.xml", "w", encoding="utf-8") as posts,
        open(forum / "PostLinks.xml", "w", encoding="utf-8") as post_links,
    ):
        posts.write(head)
        post_links.write(link_head)
        while posts.tell() < target:
            offset = copies * step

            def shift(match, offset=offset):
                return f'{match.group(1)}{int(match.group(2)) + offset}"'

            posts.write("\n".join(ID_ATTRIBUTES.sub(shift, row) for row in rows) + "\n")
            post_links.write("\n".join(ID_ATTRIBUTES.sub(shift, row) for row in links) + "\n")
            copies += 1
        posts.write(tail)
        post_links.write(link_tail)
    shutil.rmtree(source)
    return {
        "copies": copies,
        "rows": copies * len(rows),
        "bytes": (forum / "Posts.xml").stat().st_size,
    }


class _TreeMemory:
    """Polls /proc for this process's descendants (forkserver workers are grandchildren, so
    ``RUSAGE_CHILDREN`` never sees them): the largest peak RSS (VmHWM) of one descendant and
    the largest total RSS of the whole tree seen at one poll."""

    def __init__(self, every: float = 0.1):
        import threading

        self.worker_peak_kb = self.tree_peak_kb = 0
        self.every, self.done = every, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @staticmethod
    def _status(pid: int) -> dict:
        try:
            lines = Path(f"/proc/{pid}/status").read_text().splitlines()
        except OSError:
            return {}
        return {
            k: int(v.split()[0])
            for k, _, v in (line.partition(":") for line in lines)
            if k in ("VmHWM", "VmRSS")
        }

    def _descendants(self) -> list[int]:
        parents = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(stat.parent.name)] = int(fields[1])
        found, frontier = [], [os.getpid()]
        while frontier:
            parent = frontier.pop()
            kids = [pid for pid, ppid in parents.items() if ppid == parent]
            found += kids
            frontier += kids
        return found

    def _run(self) -> None:
        while not self.done.wait(self.every):
            total = self._status(os.getpid()).get("VmRSS", 0)
            for pid in self._descendants():
                status = self._status(pid)
                self.worker_peak_kb = max(self.worker_peak_kb, status.get("VmHWM", 0))
                total += status.get("VmRSS", 0)
            self.tree_peak_kb = max(self.tree_peak_kb, total)

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def child(mode: str, forum: Path, out: Path, workers: int | None) -> None:
    """Run one measured pass in this process and print its JSON record."""
    memory = _TreeMemory()
    start = time.perf_counter()
    if mode == "bare":
        from lxml import etree

        rows = 0
        with open(forum / "Posts.xml", "rb") as handle:
            for _, element in etree.iterparse(handle, tag="row"):
                rows += 1
                element.clear()
                while element.getprevious() is not None:
                    del element.getparent()[0]
        extra = {"rows": rows}
    else:
        import stackexchange

        forum_dir = stackexchange.parse_forum(forum, out, overwrite=True, workers=workers)
        stats = json.loads((forum_dir / STATS_FILE).read_text())
        extra = {"pairs": stats["pairs"], "questions": stats["questions"], "workers": workers}
    seconds = time.perf_counter() - start
    memory.stop()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    record = {"mode": mode, "seconds": seconds, "peak_rss_mb": peak_mb}
    record["peak_rss_worker_mb"] = memory.worker_peak_kb / 1024  # largest worker process
    record["peak_rss_all_processes_mb"] = memory.tree_peak_kb / 1024  # sum at one moment
    print(json.dumps({**record, **extra}))


def measure(mode: str, forum: Path, out: Path, workers: int | None) -> dict:
    result = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(forum), str(out), str(workers or 0)],
        capture_output=True, text=True,
    )  # fmt: skip
    if result.returncode:
        sys.exit(f"{mode} pass failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=1100)
    parser.add_argument("--rounds", type=int, default=1, help="alternating bare/ours rounds")
    parser.add_argument("--work", type=Path, default=None, help="scratch folder (default: tmp)")
    parser.add_argument("--output", type=Path, default=RESULTS / "parse_throughput.json")
    parser.add_argument("--workers", type=int, default=None, help="parse_forum workers (auto)")
    parser.add_argument(
        "--source-dir", type=Path, default=None,
        help="beer's Posts.xml and PostLinks.xml, extracted (default: read the archive)",
    )  # fmt: skip
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), Path(args.child[2]), int(args.child[3]) or None)
        return
    if args.source_dir is None and not ARCHIVE.exists():
        sys.exit(f"real data missing: {ARCHIVE}")
    info = machine_info()
    work = Path(tempfile.mkdtemp(prefix="parse-throughput-", dir=args.work))
    try:
        started = time.perf_counter()
        built = build(work, args.size_mb, args.source_dir)
        print(f"built {built['bytes'] / 1e6:,.0f} MB Posts.xml ({built['copies']} copies, "
              f"{built['rows']:,} rows) in {time.perf_counter() - started:.0f} s")  # fmt: skip
        runs = []
        for _ in range(args.rounds):
            for mode in ("bare", "ours"):
                record = measure(mode, work / HOST, work / "parsed", args.workers)
                record["mb_per_s"] = built["bytes"] / 1e6 / record["seconds"]
                runs.append(record)
                print(f"  {mode:5} {record['seconds']:7.1f} s  {record['mb_per_s']:6.1f} MB/s  "
                      f"peak RSS {record['peak_rss_mb']:6.0f} MB "
                      f"(largest worker {record['peak_rss_worker_mb']:.0f} MB)")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    best = {m: max(r["mb_per_s"] for r in runs if r["mode"] == m) for m in ("bare", "ours")}
    peak = max(r["peak_rss_mb"] for r in runs if r["mode"] == "ours")
    worker_peak = max(r["peak_rss_worker_mb"] for r in runs if r["mode"] == "ours")
    tree_peak = max(r["peak_rss_all_processes_mb"] for r in runs if r["mode"] == "ours")
    summary = {
        "bare_mb_per_s": best["bare"],
        "ours_mb_per_s": best["ours"],
        "ratio": best["ours"] / best["bare"],
        "ours_peak_rss_mb": peak,
        "ours_peak_rss_worker_mb": worker_peak,
        "ours_peak_rss_all_processes_mb": tree_peak,
        "bare_peak_rss_mb": max(r["peak_rss_mb"] for r in runs if r["mode"] == "bare"),
        "targets": {"ratio": 0.7, "peak_rss_mb": 500},
        "meets_targets": best["ours"] / best["bare"] >= 0.7 and max(peak, worker_peak) < 500,
    }
    print(f"\n{'':6}{'MB/s':>8}{'peak RSS MB':>14}")
    print(f"{'bare':6}{best['bare']:8.1f}{summary['bare_peak_rss_mb']:14.0f}")
    print(f"{'ours':6}{best['ours']:8.1f}{peak:14.0f}  (largest worker {worker_peak:.0f} MB, "
          f"all processes together {tree_peak:.0f} MB)")  # fmt: skip
    print(f"ratio ours/bare: {summary['ratio']:.2f} (target ≥ 0.7); peak RSS target < 500 MB")
    record = {"benchmark": "parse_throughput", "machine": info, "input": built,
              "args": {"size_mb": args.size_mb, "rounds": args.rounds, "workers": args.workers},
              "runs": runs, **summary}  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    from stackexchange.io import atomic_write_json

    atomic_write_json(args.output, record)
    print(f"saved {args.output}")


if __name__ == "__main__":
    main()
