"""``adapter-zoo run RECIPE --executor ray``: a recipe's independent commands as Ray tasks.

Each job (one expanded command, see :mod:`recipes.steps`) runs as a Ray task that
calls the same CLI function as the local executor, so its outputs land where a local run puts
them, through the same atomic writers. A task reserves the job's CPUs and GPUs and starts once
every job it waits for has finished. Its stdout and stderr go to ``WORK/logs/<step>.log``.

Resuming: a finished job leaves its entry in the ledger (:mod:`recipes.ledger`), as the
local executor's do; a later run skips a job that has that entry, whose outputs are all still
complete and none of whose upstream jobs runs again. So a killed run picks up where it
stopped, and deleting one output re-runs the job that wrote it (and those that read it).

Failures: a job that exits non-zero (or whose worker dies) is tried once more; if it fails
again its log is reported, the jobs that wait for it are reported as not run, and all others
go on. The run ends with a summary table and raises :class:`RecipeError` if anything failed.

The workers must import this project: on a local Ray they use this interpreter; on a cluster,
install the project (same version) on every node and keep the work folder, the zoo
(``ADAPTER_ZOO_HOME``) and the data on a file system all nodes share. Environment variables
of the project and the Hugging Face libraries (``ADAPTER_ZOO_*``, ``HF_*``, ``TRANSFORMERS_*``,
``TOKENIZERS_*``, ``HUGGINGFACE_*``) and the working folder travel with every task.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from recipes.ledger import plan_resume, record_finished
from recipes.recipe import Recipe, RecipeError
from recipes.steps import Job

FORWARDED_ENV = ("ADAPTER_ZOO_", "HF_", "TRANSFORMERS_", "TOKENIZERS_", "HUGGINGFACE_")
ATTEMPTS = 2  # a failed job is retried once


@dataclass
class Outcome:
    """How one job ended: ``done``, ``skipped`` (finished earlier), ``failed`` or ``not run``."""

    job: Job
    status: str = "waiting"
    attempts: int = 0
    seconds: float = 0.0
    log: Path | None = None
    error: str = ""


@contextlib.contextmanager
def _output_to(path: Path):
    """Send this process's stdout and stderr (Python and C level) to ``path`` (appended)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "a", encoding="utf-8") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def run_step(argv: list[str], cwd: str, log: str, attempt: int) -> int:
    """The body of a Ray task: ``adapter-zoo ARGV`` in ``cwd``, output appended to ``log``.

    Returns:
        The command's exit status (1 for an exception it let through; the traceback is logged).
    """
    from adapter_zoo.cli import main

    previous = os.getcwd()
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with _output_to(Path(log)):
        print(f"== attempt {attempt}: adapter-zoo {shlex.join(argv)}", flush=True)
        try:
            os.chdir(cwd)
            code = main(argv)
        except BaseException:  # a bug in the command: keep its traceback in the log
            traceback.print_exc()
            code = 1
        finally:
            os.chdir(previous)
        print(f"== exit status {code}", flush=True)
    return code


def _log_name(job: Job) -> str:
    """``step 3 [beer.stackexchange.com, x]`` → ``step-03-beer.stackexchange.com-x.log``."""
    number, _, rest = job.label.removeprefix("step ").partition(" ")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", rest).strip("-")
    return f"step-{int(number):02d}{'-' + slug if slug else ''}.log"


def _forwarded_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)}


def _check_fits(jobs: list[Job], nodes: list[dict]) -> None:
    """Refuse a job no node of the cluster could ever run (Ray would wait for it forever)."""
    for job in jobs:
        need = job.resources
        if not any(
            node.get("CPU", 0) >= need["cpus"] and node.get("GPU", 0) >= need["gpus"]
            for node in nodes
        ):
            have = ", ".join(f"{n.get('CPU', 0):g} CPU/{n.get('GPU', 0):g} GPU" for n in nodes)
            raise RecipeError(
                f"{job.label} needs {need['cpus']:g} CPU and {need['gpus']:g} GPU but no node of "
                f"the Ray cluster has that (nodes: {have or 'none'}); set the step's resources "
                "or use --smoke on a machine without GPUs"
            )


def run_on_ray(
    jobs: list[Job],
    *,
    work: Path,
    recipe: Recipe,
    address: str | None = None,
    log: Callable[[str], None] = print,
) -> list[Outcome]:
    """Run ``jobs`` as Ray tasks, in dependency order; return each job's outcome.

    Uses the Ray instance this process is already connected to, else connects to
    ``address`` (or starts a local one, shut down again at the end).

    Raises:
        RecipeError: a job cannot fit on any node, or one or more jobs failed (after the
            others finished; the message names them and their logs).
    """
    import ray
    from tqdm.auto import tqdm

    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        finished = plan_resume(jobs, work)
        todo = [job for job in jobs if job.index not in finished]
        _check_fits(todo, [node["Resources"] for node in ray.nodes() if node["Alive"]])
        task = ray.remote(run_step)
        env = _forwarded_env()
        outcomes = {job.index: Outcome(job, log=work / "logs" / _log_name(job)) for job in jobs}
        for index in finished:
            outcomes[index].status = "skipped"
        log(f"  ray: {len(todo)} to run, {len(finished)} finished earlier; logs in {work / 'logs'}")
        running: dict = {}  # ObjectRef -> (outcome, start time)

        def submit(outcome: Outcome) -> None:
            outcome.attempts += 1
            outcome.status = "running"
            ref = task.options(
                num_cpus=outcome.job.resources["cpus"],
                num_gpus=outcome.job.resources["gpus"],
                max_retries=0,
                runtime_env={"env_vars": env},
            ).remote(outcome.job.argv, os.getcwd(), str(outcome.log), outcome.attempts)
            running[ref] = outcome, time.perf_counter()

        def count(status: str) -> int:
            return sum(o.status == status for o in outcomes.values())

        progress = tqdm(total=len(jobs), initial=len(finished), desc=recipe.name, unit="step")
        try:
            while True:
                for outcome in outcomes.values():
                    if outcome.status != "waiting":
                        continue
                    before = [outcomes[i].status for i in outcome.job.after]
                    if any(s in ("failed", "not run") for s in before):
                        outcome.status = "not run"
                        progress.update()
                    elif all(s in ("done", "skipped") for s in before):
                        submit(outcome)
                progress.set_postfix_str(
                    f"done {count('done')}, running {count('running')}, failed {count('failed')}"
                )
                if not running:
                    break
                ready, _ = ray.wait(list(running), num_returns=1)
                outcome, began = running.pop(ready[0])
                outcome.seconds += time.perf_counter() - began
                try:
                    code = ray.get(ready[0])
                except ray.exceptions.RayError as error:  # the worker died, or was killed
                    code, outcome.error = 1, str(error).splitlines()[0]
                if code == 0:
                    outcome.status = "done"
                    record_finished(work, outcome.job)
                    progress.update()
                elif outcome.attempts < ATTEMPTS:
                    submit(outcome)
                else:
                    outcome.status = "failed"
                    outcome.error = outcome.error or f"exit status {code}"
                    progress.update()
        except BaseException:
            for ref in running:
                ray.cancel(ref, force=True)
            raise
        finally:
            progress.close()
    finally:
        if started_here:
            ray.shutdown()
    _summary(list(outcomes.values()), log)
    failed = [o for o in outcomes.values() if o.status == "failed"]
    if failed:
        not_run = count("not run")
        raise RecipeError(
            f"{recipe.path}: {len(failed)} step(s) failed after {ATTEMPTS} attempts"
            + (f" ({not_run} waiting for them not run)" if not_run else "")
            + "; "
            + "; ".join(f"{o.job.label} ({o.error}): see {o.log}" for o in failed)
        )
    return list(outcomes.values())


def _summary(outcomes: list[Outcome], log: Callable[[str], None]) -> None:
    """The end-of-run table: one row per job, then the count per status."""
    width = max(len(o.job.label) for o in outcomes)
    log(f"  {'step':{width}}  {'status':8} {'tries':>5} {'time':>8}  command / log")
    for o in outcomes:
        where = o.log if o.status == "failed" else f"adapter-zoo {shlex.join(o.job.argv)}"
        time_cell = f"{o.seconds:7.1f}s" if o.attempts else f"{'-':>8}"
        log(f"  {o.job.label:{width}}  {o.status:8} {o.attempts:>5} {time_cell}  {where}")
    statuses = ("done", "skipped", "failed", "not run")
    log("  " + ", ".join(f"{sum(o.status == s for o in outcomes)} {s}" for s in statuses))
