"""One run at a time per run folder: an exclusive lock held for the whole run.

The lock is ``fcntl.flock`` on the file ``.evora-lock`` in the run folder, which also holds the
holder's PID (for the message the second run gets). The kernel drops the lock when its holder
exits, however it exits (Ctrl-C, SIGKILL, a crash), so a stale lock file never blocks a resume.

On NFS, Linux turns ``flock`` into an NFS byte-range lock (NLM for NFSv3, built into NFSv4), so
two machines sharing the folder exclude each other as long as the server supports locking; on a
mount with ``nolock`` (or ``local_lock=flock``) the lock only excludes runs on the same machine.
Where ``fcntl`` does not exist (Windows) no lock is taken.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:                           # no flock on this platform (Windows)
    fcntl = None

LOCK_FILE = ".evora-lock"


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"PID {text}" if text.isdigit() else "PID unknown"


def _take(fd: int, folder, error: type[Exception], option: str) -> None:
    """Take the exclusive lock on ``fd`` without waiting, or ``error`` naming its holder."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise error(f"{option} {folder} is in use by another run ({_holder(fd)}); wait for it to "
                    f"finish or choose another {option}") from None


def refuse_if_held(folder: str | Path, error: type[Exception], option: str = "--out") -> None:
    """``error`` naming the holder if another process holds ``folder``'s lock; writes nothing.

    Why: a run that has just taken a folder fills it before its manifest exists. A second run
    that looks in between must be told the folder is in use, not that it holds something else.
    """
    if fcntl is None:
        return
    try:
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDONLY)
    except OSError:                           # no lock file: nobody has taken the folder
        return
    try:
        _take(fd, folder, error, option)
    finally:
        os.close(fd)                          # also releases the probe's lock if it got it


@contextmanager
def folder_lock(folder: str | Path, error: type[Exception], option: str = "--out"):
    """Hold the exclusive lock of ``folder`` (which must exist) until the block ends; ``error``
    naming the holder's PID if another process holds it."""
    if fcntl is None:
        yield
        return
    path = Path(folder) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise error(f"{option} {folder}: cannot create its lock file: {exc.strerror or exc}") from None
    try:
        _take(fd, folder, error, option)
        mine = f"{os.getpid()}\n".encode()
        if os.pread(fd, 64, 0) != mine:
            os.ftruncate(fd, 0)
            os.pwrite(fd, mine, 0)
        yield
    finally:
        os.close(fd)                          # closing the descriptor releases the lock
