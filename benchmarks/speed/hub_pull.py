"""adapter_zoo.hub.pull vs huggingface_hub.snapshot_download, against olah on loopback.

One olah (``.venv-olah``) serves a git repository holding a zoo entry of ``--mb`` MB of
weights. Measured, each on a fresh Hugging Face cache: the peer ``snapshot_download`` (cold),
``pull`` (cold: the same download plus the sha256 check of every file) and ``pull`` again,
offline (cache reuse: the check alone). Saves ``results/hub_pull.json``.

Run: ``python benchmarks/speed/hub_pull.py [--mb 64] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.olah import start_olah  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"


def make_repo(root: Path, mb: int) -> None:
    """A zoo entry (card with sha256 of each file) committed to a git repo olah serves."""
    from adapter_zoo.zoo.store import CARD_FILE
    from stackexchange.io import sha256_file

    repo = root / "mirrors" / "models" / "bench" / "entry"
    repo.mkdir(parents=True)
    sizes = {
        "adapter.safetensors": mb * 2**20 * 3 // 4,
        "model_head.safetensors": mb * 2**20 // 4,
        "adapter_config.json": 300,
        "head_config.json": 200,
    }
    for name, size in sizes.items():
        (repo / name).write_bytes(os.urandom(size))
    card = {
        "name": "bench",
        "mode": "adapter",
        "base_model": "minilm-l6",
        "files": {name: sha256_file(repo / name) for name in sizes},
    }
    (repo / CARD_FILE).write_text(json.dumps(card))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "entry"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)


def timed(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_repo(root, args.mb)
        server, url = start_olah(root)
        os.environ.update(HF_ENDPOINT=url, HF_HUB_OFFLINE="0", HF_HUB_DISABLE_PROGRESS_BARS="1")
        from huggingface_hub import constants, snapshot_download

        from adapter_zoo.hub import pull

        times = {"snapshot_download (cold)": [], "pull (cold)": [], "pull (cached, offline)": []}
        try:
            for repeat in range(args.repeats):
                # Alternate which goes first: olah and the machine (shared, 2 cores) warm up.
                order = ["peer", "zoo"] if repeat % 2 == 0 else ["zoo", "peer"]
                for who in order:
                    constants.HF_HUB_CACHE = str(root / f"{who}-{repeat}")
                    if who == "peer":
                        times["snapshot_download (cold)"].append(
                            timed(
                                lambda: snapshot_download(
                                    "bench/entry", endpoint=url, cache_dir=constants.HF_HUB_CACHE
                                )
                            )
                        )
                        continue
                    times["pull (cold)"].append(timed(lambda: pull("bench/entry")))
                    os.environ["HF_HUB_OFFLINE"] = "1"
                    times["pull (cached, offline)"].append(timed(lambda: pull("bench/entry")))
                    os.environ["HF_HUB_OFFLINE"] = "0"
        finally:
            server.terminate()
            server.wait(timeout=10)
    peer = min(times["snapshot_download (cold)"])
    rows = {
        name: {
            "best_s": min(values),
            "mb_per_s": args.mb / min(values),
            "ratio_to_peer": min(values) / peer,
        }
        for name, values in times.items()
    }
    print(f"{'what':28} {'best s':>8} {'MB/s':>8} {'vs peer':>8}")
    for name, row in rows.items():
        print(f"{name:28} {row['best_s']:8.3f} {row['mb_per_s']:8.1f} {row['ratio_to_peer']:8.2f}")
    import huggingface_hub

    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "hub_pull.json").write_text(
        json.dumps(
            {
                "benchmark": "hub_pull",
                "mb": args.mb,
                "repeats": args.repeats,
                "rows": rows,
                "times_s": times,
                "machine": {
                    "cpu_count": os.cpu_count(),
                    "platform": platform.platform(),
                    "python": platform.python_version(),
                    "huggingface_hub": huggingface_hub.__version__,
                    "server": "olah 0.5.4 on loopback",
                },
                "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
