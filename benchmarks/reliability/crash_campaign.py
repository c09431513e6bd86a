"""Crash campaign: every writing command SIGKILLed at seeded moments, then rerun.

Each command (:data:`COMMANDS`: parse, train bi and cross, adapt, build, build-benchmark,
evaluate, compose, push and pull against a local olah, a recipe's ``run --smoke``) first runs
once uninterrupted, counting its file-system changes (``benchmarks/reliability/crash_hooks.py``).
Then each trial starts it again on fresh inputs and kills it at a seeded moment, of one of
two kinds in turn: ``clock``, SIGKILL to the command's process after a seeded fraction of the
uninterrupted run's seconds (a user's ``kill -9``, mid-computation or mid-write by compiled
code); ``io``, the process kills itself right after its k-th file-system change (k seeded
among the uninterrupted run's), between two writes or inside a file half written. Every
fourth trial kills the rerun too. After every kill :mod:`benchmarks.reliability.crash_checks`
looks for anything half written under a final name, for an entry ``list`` shows that does
not verify, for a broken or repeated record in ``results.jsonl``, and for worker processes
that outlived their parent; then the same command runs again to the end and its outputs are
compared with the uninterrupted run's (datasets row for row, weights and every other file
byte for byte, JSON without its time fields).

Run (about an hour on 2 busy cores): ``nice -n 10 python benchmarks/reliability/crash_campaign.py``;
``--only train-bi --kills 3`` for a few. A campaign stopped part-way resumes from its
``--work`` folder (trials are kept in ``trials.jsonl`` there). Saves
``results/crash_campaign.json``; ``python -m benchmarks.report`` turns it into the
table of ``docs/reliability.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# the campaign's own helpers (beside this script)
from benchmarks.machine import machine_info  # noqa: E402
from benchmarks.reliability import crash_checks as checks  # noqa: E402
from benchmarks.reliability.crash_commands import COMMANDS, World  # noqa: E402
from benchmarks.reliability.crash_hooks import KILL_AT_ENV, OPS_FILE_ENV  # noqa: E402
from stackexchange.io import atomic_write_json  # noqa: E402
from stackexchange.pool import process_pool  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"
TIMEOUT = 900  # seconds a single run may take on a busy machine before it counts as hung
ORPHAN_GRACE = 20  # seconds a killed command's worker processes get to notice and exit


def run(argv: list[str], env: dict, log: Path, *, kill_after: float | None = None,
        kill_at_op: int = 0, ops_file: Path | None = None) -> dict:  # fmt: skip
    """Run ``adapter-zoo argv`` through the hooks; kill it after ``kill_after`` seconds or
    let it kill itself after its ``kill_at_op``-th change. Returns what happened."""
    import psutil

    env = {**env, KILL_AT_ENV: str(kill_at_op)}
    if ops_file is not None:
        env[OPS_FILE_ENV] = str(ops_file)
    command = [sys.executable, "-m", "benchmarks.reliability.crash_hooks", *argv]
    started = time.monotonic()
    with open(log, "wb") as out:
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        seen: set = set()  # every worker it started, to check they die with it
        deadline = started + (kill_after if kill_after is not None else TIMEOUT)
        while process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(psutil.Error):  # it may have ended meanwhile
                seen.update(psutil.Process(process.pid).children(recursive=True))
            time.sleep(0.05)
        killed_by_clock = process.poll() is None and kill_after is not None
        if process.poll() is None:
            process.kill()  # the clock's kill -9 (or a hung run)
        code = process.wait()
    seconds = time.monotonic() - started
    orphans = _orphans(seen)
    killed = killed_by_clock or (kill_at_op > 0 and code == -9)
    tail = log.read_bytes().decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    return {"code": code, "killed": killed, "seconds": round(seconds, 2),
            "orphans": orphans, "last_line": tail[0][-400:]}  # fmt: skip


def _orphans(processes) -> list[str]:
    """Workers still alive ``ORPHAN_GRACE`` seconds after their parent died (then killed)."""
    import psutil

    _, alive = psutil.wait_procs(list(processes), timeout=ORPHAN_GRACE)
    for process in alive:
        process.kill()
    return [f"{p.pid}" for p in alive]


def reference(command, world: World, work: Path) -> dict:
    """The uninterrupted run: its seconds, file-system changes and outputs' fingerprint."""
    root = work / "reference" / command.name
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    command.prepare(world, root)
    ops = root / ".ops"
    done = run(command.argv(world, root), command.env(world, root), root / ".log", ops_file=ops)
    if done["code"] != 0:
        raise SystemExit(f"{command.name}: the uninterrupted run failed: {done['last_line']}")
    results = root / "results" / "results.jsonl"
    return {"seconds": done["seconds"], "ops": int(ops.read_text()),
            "fingerprint": command.fingerprint(world, root),
            "records": len(results.read_text().splitlines()) if results.exists() else 0}  # fmt: skip


def trial(command, world: World, work: Path, ref: dict, index: int, seed: int) -> dict:
    """One trial: a kill (two every fourth trial), the checks, the rerun, the comparison."""
    rng = random.Random(f"{seed}/{command.name}/{index}")
    root = work / "trials" / f"{command.name}-{index}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    command.prepare(world, root)
    argv, env = command.argv(world, root), command.env(world, root)
    record: dict = {"command": command.name, "trial": index, "kills": []}
    for attempt in range(2 if index % 4 == 3 else 1):
        kind = ("clock", "io")[(index + attempt) % 2]
        moment = {"kind": kind}
        if kind == "clock":
            moment["fraction"] = round(rng.uniform(0.02, 0.98), 4)
            done = run(argv, env, root / f".kill{attempt}.log",
                       kill_after=moment["fraction"] * ref["seconds"])  # fmt: skip
        else:
            moment["op"] = rng.randint(1, max(1, ref["ops"]))
            done = run(argv, env, root / f".kill{attempt}.log", kill_at_op=moment["op"])
        moment.update(killed=done["killed"], code=done["code"], orphans=done["orphans"])
        moment["problems"] = command.problems(world, root) + [
            f"worker {pid} outlived its killed parent" for pid in done["orphans"]
        ]
        if not done["killed"] and done["code"] != 0:
            moment["problems"].append(f"ended {done['code']} before the kill: {done['last_line']}")
        record["kills"].append(moment)
    rerun = run(argv, env, root / ".rerun.log")
    record["rerun"] = {"code": rerun["code"], "seconds": rerun["seconds"]}
    if rerun["code"] != 0:
        record["rerun"]["last_line"] = rerun["last_line"]
    record["rerun"]["problems"] = command.problems(world, root)
    results = root / "results" / "results.jsonl"
    if results.exists():  # a kill after the records were in place: the rerun adds its own
        record["rerun"]["records"] = len(results.read_text().splitlines())
    got = command.fingerprint(world, root)
    record["rerun"]["differs"] = checks.differences(got, ref["fingerprint"])
    record["survived"] = (
        rerun["code"] == 0
        and not record["rerun"]["problems"]
        and not record["rerun"]["differs"]
        and not any(k["problems"] for k in record["kills"])
    )
    shutil.rmtree(root, ignore_errors=True)
    return record


def _trial(name: str, folder: Path, hub_url: str, work: Path, ref: dict, index: int,
           seed: int) -> dict:  # fmt: skip
    """:func:`trial` in a worker process, of the command named ``name``."""
    command = next(c for c in COMMANDS if c.name == name)
    return {**trial(command, World(folder, hub_url), work, ref, index, seed), "seed": seed}


def summary(trials: list[dict], references: dict) -> dict:
    """Per command: kills, trials survived, and every failure's first problem."""
    rows = {}
    for name, ref in references.items():
        mine = [t for t in trials if t["command"] == name]
        kills = [k for t in mine for k in t["kills"] if k["killed"]]
        rows[name] = {
            "trials": len(mine),
            "reruns_after_completed_records": sum(
                t["rerun"].get("records", 0) > ref.get("records", 0) for t in mine
            ),
            "kills": len(kills),
            "kills_by_kind": dict(Counter(k["kind"] for k in kills)),
            "survived": sum(t["survived"] for t in mine),
            "uninterrupted_seconds": ref["seconds"],
            "file_system_changes": ref["ops"],
            "failures": [_failure(t) for t in mine if not t["survived"]],
        }
    return rows


def _failure(record: dict) -> str:
    for kill in record["kills"]:
        if kill["problems"]:
            return f"trial {record['trial']}: after the kill: {kill['problems'][0]}"
    rerun = record["rerun"]
    if rerun["code"] != 0:
        return f"trial {record['trial']}: rerun exit {rerun['code']}: {rerun.get('last_line')}"
    if rerun["problems"]:
        return f"trial {record['trial']}: after the rerun: {rerun['problems'][0]}"
    return f"trial {record['trial']}: outputs differ: {', '.join(rerun['differs'][:3])}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/adapter-zoo-crash-campaign"))
    parser.add_argument("--only", nargs="*", default=None, help="command names")
    parser.add_argument("--kills", type=int, default=None, help="trials per command")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--jobs", type=int, default=2, help="trials at once")
    parser.add_argument("--out", type=Path, default=RESULTS / "crash_campaign.json")
    args = parser.parse_args()
    chosen = [c for c in COMMANDS if args.only is None or c.name in args.only]
    args.work.mkdir(parents=True, exist_ok=True)
    world = World.make(args.work / "world")
    inputs = checks.listing(world.folder, ("dump", "parsed", "bench", "zoo", "tiny", "tiny-st"))
    log = args.work / "trials.jsonl"
    kept = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    started = time.monotonic()
    references, trials, todo = {}, [], []
    try:
        for command in chosen:
            references[command.name] = reference(command, world, args.work)
            print(f"{command.name}: uninterrupted {references[command.name]['seconds']} s, "
                  f"{references[command.name]['ops']} changes", flush=True)  # fmt: skip
            for index in range(args.kills or command.kills):
                record = next((t for t in kept if (t["command"], t["trial"], t.get("seed")) ==
                               (command.name, index, args.seed)), None)  # fmt: skip
                if record is None:
                    todo.append((command.name, index))
                else:
                    trials.append(record)
        # trials in --jobs processes: each writes only in its own folder
        with process_pool(args.jobs) as pool:
            running = [pool.submit(_trial, name, world.folder, world.hub_url, args.work,
                                   references[name], index, args.seed)
                       for name, index in todo]  # fmt: skip
            for done in as_completed(running):
                record = done.result()
                with open(log, "a") as handle:
                    handle.write(json.dumps(record) + "\n")
                trials.append(record)
                print(f"  {record['command']} #{record['trial']}: "
                      f"{'ok' if record['survived'] else 'FAILED'} "
                      f"{[k['kind'] for k in record['kills']]}", flush=True)  # fmt: skip
    finally:
        world.close()
    trials.sort(key=lambda t: ([c.name for c in chosen].index(t["command"]), t["trial"]))
    rows = summary(trials, references)
    result = {
        "script": "benchmarks/reliability/crash_campaign.py",
        "args": {"seed": args.seed, "kills": args.kills, "only": args.only, "jobs": args.jobs},
        "machine": machine_info(),
        "seconds": round(time.monotonic() - started),
        "targets": {"kills_total": 200, "survived": "every trial"},
        "kills_total": sum(r["kills"] for r in rows.values()),
        # the world the commands read: no command wrote into its inputs
        "inputs_unchanged": inputs
        == checks.listing(world.folder, ("dump", "parsed", "bench", "zoo", "tiny", "tiny-st")),
        "commands": rows,
        "trials": trials,
    }
    atomic_write_json(args.out, result)
    print(json.dumps({k: (v["kills"], v["survived"], v["trials"]) for k, v in rows.items()}))


if __name__ == "__main__":
    main()
