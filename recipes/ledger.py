"""Which jobs of a recipe an earlier run finished: ``WORK/steps/<digest>.json``, one entry a
job, written once the job ended well (its command line and when). Both executors read it
before they start, so a killed run resumes where it stopped: a job is skipped when its entry
is there, its outputs are all still complete and none of the jobs it waits for runs again
(deleting one output re-runs the job that wrote it, and those that read it).
"""

from __future__ import annotations

import datetime
from pathlib import Path

from recipes.steps import Job
from stackexchange.io import atomic_write_json


def ledger_entry(work: Path, job: Job) -> Path:
    """Where ``job``'s entry is (it may not exist)."""
    return work / "steps" / f"{job.key}.json"


def plan_resume(jobs: list[Job], work: Path) -> set[int]:
    """Indices of the jobs finished by an earlier run whose outputs still stand."""
    finished: set[int] = set()
    for job in jobs:  # plan order: every job comes after those it waits for
        upstream_runs = any(index not in finished for index in job.after)
        if not upstream_runs and ledger_entry(work, job).is_file() and job.outputs_complete():
            finished.add(job.index)
    return finished


def record_finished(work: Path, job: Job) -> None:
    """Write ``job``'s entry: it ended well."""
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    atomic_write_json(ledger_entry(work, job), {"label": job.label, "argv": job.argv,
                                                "finished": now})  # fmt: skip
