"""Crash-safe writing shared by every package: a folder or file appears complete or not at all.

This module is torch-free on purpose: data preparation runs on machines without torch.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import shutil
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

TEMP_MARK = ".tmp-"
OLD_MARK = ".old-"
# Beside each temporary (and each old copy an overwrite sets aside) a record says which
# process made it: clean-up removes only recorded ones whose process is gone, never a
# user's file that merely has a name like them, nor a temporary of a run still going.
RECORD_SUFFIX = ".adapter-zoo"
_RECORD_KIND = "adapter-zoo temporary"
# One run writing into a folder at a time (see output_lock); the locks live outside the
# folders, so a run (or a failed one) leaves nothing of them in the user's output.
LOCK_DIR = "adapter-zoo-locks"
_in_progress: set[Path] = set()  # this process's temporaries still being written


def refuse_input_inside_output(
    inputs, output: str | os.PathLike, error: type[Exception] = ValueError
) -> None:
    """Raise ``error`` when one of ``inputs`` is ``output`` or lies inside it.

    Writing (or replacing) ``output`` could then delete the input, so this is checked before
    any work. Paths are compared as given (made absolute) and with symbolic links resolved.

    Example:
        >>> refuse_input_inside_output(["dump/beer.7z"], "dump")
        Traceback (most recent call last):
        ...
        ValueError: dump/beer.7z: input inside or equal to the output dump; choose another output
    """
    outs = {Path(os.path.abspath(output)), Path(output).resolve()}
    for source in inputs:
        paths = {Path(os.path.abspath(source)), Path(source).resolve()}
        if any(p == out or out in p.parents for p in paths for out in outs):
            raise error(
                f"{source}: input inside or equal to the output {output}; choose another output"
            )


def check_replaceable(
    final: str | os.PathLike,
    *,
    ours: Callable[[Path], bool],
    overwrite: bool = False,
    what: str = "output",
    error: type[Exception] = FileExistsError,
) -> None:
    """Raise ``error`` unless writing ``final`` loses nothing the project did not write.

    ``final`` may be written when it does not exist, is an empty folder, is a folder the
    project wrote (``ours(final)``: its completion marker is there), or ``overwrite`` is set.

    Args:
        final: the output folder about to be written through :func:`atomic_directory`.
        ours: whether an existing folder is the project's own completed output.
        overwrite: the user asked to replace whatever is there.
        what: what the project writes there, for the message ("a parsed forum").
        error: the exception type raised.
    """
    final = Path(final)
    if overwrite or not os.path.lexists(final):
        return
    if final.is_dir() and (ours(final) or not any(final.iterdir())):
        return
    raise error(
        f"{final}: already exists and is not {what} written by adapter-zoo; "
        "move it away or pass --overwrite"
    )


# Why a write fails for want of room or rights, whatever the input: no space, a file-size
# limit, a quota, a read-only file system.
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS})
# A library's own report of an operating-system error: Rust's std::io::Error (safetensors,
# tokenizers) ends "(os error 28)"; torch.save's stream writer says only that a write failed.
_RUST_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_TORCH_WRITE_FAILED = ("file write failed", "PytorchStreamWriter failed writing")


def write_failure(error: BaseException, path: str | os.PathLike) -> OSError | None:
    """``error`` as an OSError naming ``path`` when a write failed (a full disk, a file-size
    limit, a read-only folder), else None; an OSError that names its file is kept as it is.

    Libraries report such a failure in their own types (safetensors' ``SafetensorError``,
    torch's ``RuntimeError``), or as an OSError naming no file; the CLI shows an OSError as
    one line, so a full disk is one line naming where the run was writing, not a traceback.

    Example:
        >>> write_failure(RuntimeError("I/O error: No space left on device (os error 28)"), "e")
        OSError(28, 'No space left on device')
    """
    if isinstance(error, OSError):
        if error.filename is not None or error.errno is None:
            return error if error.filename is not None else None
        return OSError(error.errno, error.strerror or str(error), str(path))
    text = str(error)
    match = _RUST_OS_ERROR.search(text)
    if match:
        code = int(match[1])
    elif any(words in text for words in _TORCH_WRITE_FAILED):
        code = _probable_write_errno(Path(path))
    else:
        return None
    return OSError(code, os.strerror(code), str(path))


def _probable_write_errno(path: Path) -> int:
    """Why a write that reported no reason failed: no room left, a file-size limit, else EIO."""
    import resource  # here: a Unix module, and only a failed write asks it

    while not path.exists() and path.parent != path:
        path = path.parent
    if shutil.disk_usage(path).free == 0:
        return errno.ENOSPC
    if resource.getrlimit(resource.RLIMIT_FSIZE)[0] != resource.RLIM_INFINITY:
        return errno.EFBIG
    return errno.EIO


def _naming(error: BaseException, final: Path, tmp: Path) -> BaseException:
    """A failed write while ``final`` was written in ``tmp`` (:func:`write_failure`) made to
    name ``final`` (the temporary is gone); any other exception unchanged."""
    failure = write_failure(error, final)
    if failure is None:
        return error
    written = Path(str(failure.filename))
    if failure is error and written != tmp and tmp not in written.parents:
        return error  # it names a file of its own (an input), not one being written here
    return OSError(failure.errno, failure.strerror, str(final))


@contextlib.contextmanager
def atomic_directory(final: str | os.PathLike, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside ``final`` and rename it to ``final`` on success.

    On any exception the temporary folder is removed, so a crash never leaves a
    half-written folder under the final name.

    Args:
        final: the folder to create.
        overwrite: replace an existing ``final`` (the old one is removed only after
            the new one is in place).

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> with atomic_directory(root / "out") as tmp:
        ...     _ = (tmp / "a.txt").write_text("done")
        >>> (root / "out" / "a.txt").read_text()
        'done'
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    _restore_interrupted(final)
    if final.exists() and not overwrite:
        raise FileExistsError(f"{final}: already exists")
    tmp, old = _temporary_name(final, TEMP_MARK), None
    _record(tmp)
    tmp.mkdir()
    try:
        try:
            yield tmp
        except BaseException as error:
            shutil.rmtree(tmp, ignore_errors=True)
            _unrecord(tmp)
            named = _naming(error, final, tmp)
            if named is error:
                raise
            raise named from error
        share_as_umask_allows(tmp)
        if os.path.lexists(final):
            # The old folder is kept aside until the new one is in place; a crash between
            # the two renames leaves it under its .old- name, and the next clean-up
            # restores it.
            old = _temporary_name(final, OLD_MARK)
            _record(old)
            os.replace(final, old)
            os.replace(tmp, final)
            _unrecord(tmp)
            _remove(old)
            _unrecord(old)
        else:
            os.replace(tmp, final)
            _unrecord(tmp)
    finally:  # what a crash left is a crashed run's now: the next clean-up takes it
        _in_progress.difference_update({tmp, old})


def _temporary_name(final: Path, mark: str) -> Path:
    return final.parent / f".{final.name}{mark}{os.getpid()}-{uuid.uuid4().hex[:12]}"


def _record_of(entry: Path) -> Path:
    return entry.with_name(entry.name + RECORD_SUFFIX)


def _record(entry: Path) -> None:
    """Write the record that this process made ``entry`` (before ``entry`` exists)."""
    owner = {"kind": _RECORD_KIND, "pid": os.getpid(), "host": socket.gethostname()}
    _in_progress.add(entry)
    _record_of(entry).write_text(json.dumps(owner), encoding="utf-8")


def _unrecord(entry: Path) -> None:
    _record_of(entry).unlink(missing_ok=True)
    _in_progress.discard(entry)


def _crashed_temporary(entry: Path) -> bool:
    """Whether ``entry`` is a temporary (or old copy) the project recorded and whose process
    has ended on this machine, or that this process left behind (an interrupted write): a
    crashed run's. A live run's, another machine's (a shared folder) and an unrecorded one
    (a user's file) are not."""
    import psutil

    from stackexchange.errors import AdapterZooError
    from stackexchange.jsontext import read_json_file

    try:  # a user's file named like a record may hold anything, deep nesting included
        owner = read_json_file(_record_of(entry))
    except (OSError, AdapterZooError):
        return False
    if not isinstance(owner, dict) or owner.get("kind") != _RECORD_KIND:
        return False
    pid = owner.get("pid")
    if owner.get("host") != socket.gethostname() or not isinstance(pid, int):
        return False
    if pid == os.getpid():
        return entry not in _in_progress
    return not psutil.pid_exists(pid)


def _old_name_of(entry: Path) -> str | None:
    """The final name whose old copy ``entry`` is (``.NAME.old-ID``), else None."""
    name = entry.name
    if not name.startswith(".") or OLD_MARK not in name or name.endswith(RECORD_SUFFIX):
        return None
    return name[1 : name.rindex(OLD_MARK)] or None


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)


def _restore_interrupted(final: Path) -> None:
    """Put back the old ``final`` that a crashed run left aside between an overwrite's
    renames (only one the project recorded)."""
    if os.path.lexists(final) or not final.parent.is_dir():
        return
    for entry in sorted(final.parent.iterdir()):
        if _old_name_of(entry) == final.name and _crashed_temporary(entry):
            os.replace(entry, final)
            _unrecord(entry)
            return


def current_umask() -> int:
    """This process's umask, read without changing it where the system allows
    (``/proc/self/status``), else set and put back at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o077)  # the most private value for the instant another thread may see
    os.umask(mask)
    return mask


def share_as_umask_allows(folder: str | os.PathLike) -> None:
    """Give every file under ``folder`` the permissions a plain ``open`` would (``0o666``
    less the umask; folders and executable files ``0o777`` less it).

    Libraries that write through a temporary file of their own (safetensors' ``save_file``,
    ``tempfile.mkstemp``) leave it ``0o600`` after their rename, so without this the weights
    of an output folder a team shares would be unreadable to the others while its card is
    not. Symbolic links are left alone (a chmod would follow them out of the folder).

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> (root / "w.bin").touch(mode=0o600)
        >>> share_as_umask_allows(root)
        >>> oct((root / "w.bin").stat().st_mode & 0o777) == oct(0o666 & ~current_umask())
        True
    """
    mask = current_umask()
    folder = Path(folder)
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        mode = os.stat(path).st_mode
        executable = path.is_dir() or mode & 0o111
        wanted = (0o777 if executable else 0o666) & ~mask
        if mode & 0o777 != wanted:
            os.chmod(path, wanted)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename.

    Raises:
        OSError: the write failed; an error that names no file (a full disk) is raised
            again naming ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary_name(path, TEMP_MARK)
    try:
        _record(tmp)
        with open(tmp, "xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _unrecord(tmp)
    except BaseException as error:
        tmp.unlink(missing_ok=True)
        _unrecord(tmp)
        named = _naming(error, path, tmp)
        if named is error:
            raise
        raise named from error


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def remove_stale_temporaries(parent: str | os.PathLike) -> list[Path]:
    """Clean up what a crashed run of the project left in ``parent``; return what was removed.

    Only temporaries the project recorded (see ``RECORD_SUFFIX``) and whose process has ended
    are touched: a user's file named like one, and a temporary of a run still writing, are
    left alone. Temporary folders and files (never complete) are deleted. An old copy that an
    overwrite had set aside is put back under its final name when that name is missing (the
    crash came between the two renames), and deleted only when the new folder is in place.
    """
    parent = Path(parent)
    removed = []
    if not parent.is_dir():
        return removed
    crashed = [e for e in sorted(parent.iterdir()) if _is_temporary(e) and _crashed_temporary(e)]
    for entry in crashed:  # old copies first: one may go back under its final name
        final = _old_name_of(entry)
        if final is not None:
            _restore_interrupted(parent / final)
    for entry in crashed:
        if os.path.lexists(entry):  # not put back
            _remove(entry)
            removed.append(entry)
        _unrecord(entry)
    return removed


def _is_temporary(entry: Path) -> bool:
    name = entry.name
    return (
        name.startswith(".")
        and not name.endswith(RECORD_SUFFIX)
        and (TEMP_MARK in name or OLD_MARK in name)
    )


def check_writable(
    folder: str | os.PathLike, *, what: str, advice: str, error: type[Exception] = OSError
) -> None:
    """Refuse, before any work, a ``folder`` this process cannot write into: one line naming
    it, the operating system's reason and ``advice`` (what to do).

    An existing folder is probed by creating (and removing) a temporary file in it, so a
    read-only file system or missing permission shows here, not after the expensive part; a
    folder still to be made is checked on its nearest existing parent, which is not written.

    Example:
        >>> check_writable("/proc/zoo", what="the zoo home", advice="set ADAPTER_ZOO_HOME",
        ...                error=ValueError)  # doctest: +SKIP
        Traceback (most recent call last):
        ValueError: /proc/zoo: cannot write the zoo home there (Permission denied); set ...
    """
    import tempfile

    folder = Path(folder)
    probe = folder
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    reason = None
    if not probe.is_dir():
        reason = f"{probe} is not a folder"
    elif probe == folder:
        try:
            handle, name = tempfile.mkstemp(prefix=".adapter-zoo-write-check-", dir=folder)
            os.close(handle)
            os.unlink(name)
        except OSError as failure:
            reason = failure.strerror or str(failure)
    elif not os.access(probe, os.W_OK | os.X_OK):
        reason = f"{probe}: {os.strerror(errno.EACCES)}"
    if reason is not None:
        raise error(f"{folder}: cannot write {what} there ({reason}); {advice}")


def lock_file(folder: str | os.PathLike) -> Path:
    """The lock file of output ``folder``: in the system's temporary folder, in a folder of
    this user's (one user's lock folder in a shared /tmp would refuse every other user's
    runs), named by the hash of ``folder``'s resolved path (the same folder by any path gets
    the same lock)."""
    import tempfile

    key = hashlib.sha256(str(Path(folder).resolve()).encode("utf-8")).hexdigest()[:32]
    if hasattr(os, "getuid"):
        user = str(os.getuid())
    else:  # Windows
        import getpass

        user = getpass.getuser()
    return Path(tempfile.gettempdir()) / f"{LOCK_DIR}-{user}" / f"{key}.lock"


@contextlib.contextmanager
def output_lock(
    folder: str | os.PathLike,
    *,
    error: type[Exception] = FileExistsError,
    advice: str = "choose another output",
    wait: float | None = 0,
):
    """Hold ``folder``'s lock (see :func:`lock_file`) while one run writes into it.

    A second run into the same folder is refused at once instead of clobbering the first's
    work (its clean-up would otherwise meet the first run's temporaries).

    Args:
        folder: the output folder.
        error: the exception raised when another process holds the lock.
        advice: what to do instead, ending the message.
        wait: seconds to wait for the other process to finish first (None: as long as it
            takes; 0: refuse at once).

    Raises:
        error: another process holds the lock; the message names the folder.

    Example:
        >>> import tempfile
        >>> with output_lock(tempfile.mkdtemp()):
        ...     pass
    """
    from filelock import FileLock, Timeout

    path = lock_file(folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), timeout=-1 if wait is None else wait)
    try:
        lock.acquire()
    except Timeout:
        raise error(
            f"{folder}: another adapter-zoo run is writing into it (lock {path}); "
            f"wait until it ends or {advice}"
        ) from None
    try:
        yield folder
    finally:
        lock.release()


def sha256_file(path: str | os.PathLike, chunk_size: int = 1 << 20) -> str:
    """Return the hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()
