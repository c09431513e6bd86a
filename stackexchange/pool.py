"""Worker process pools whose workers die with the process that started them.

Why: ``ProcessPoolExecutor`` workers hold both ends of their task queue, so after a
``kill -9`` of the main process they never see it go and keep parsing for minutes. Each worker
therefore runs a daemon thread that ends the worker (``os._exit``) as soon as the main process
is gone or the worker was re-parented (its forkserver exits with the main process). Polling
is portable, unlike Linux's ``prctl(PR_SET_PDEATHSIG)``.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

POLL_SECONDS = 0.25


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process we may not signal exists
        return True
    return True


def _watch(main_pid: int, parent_pid: int) -> None:
    while True:
        time.sleep(POLL_SECONDS)
        if os.getppid() != parent_pid or not _alive(main_pid):
            os._exit(1)


def _start_watch(main_pid: int) -> None:
    """Pool initializer: end this worker when ``main_pid`` (or the worker's parent) is gone."""
    thread = threading.Thread(
        target=_watch, args=(main_pid, os.getppid()), name="exit-with-parent", daemon=True
    )
    thread.start()


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A ``forkserver`` process pool of ``workers`` processes that die with this process.

    forkserver, not fork: the calling process may already run pyarrow's threads.
    """
    context = multiprocessing.get_context("forkserver")
    return ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_watch, initargs=(os.getpid(),)
    )
