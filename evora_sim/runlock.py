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

LOCK_FILE = ".evora-lock"


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        text = ""
    return f"PID {text}" if text.isdigit() else "PID unknown"


@contextmanager
def folder_lock(folder: str | Path, error: type[Exception], option: str = "--out"):
    """Hold the exclusive lock of ``folder`` (which must exist) until the block ends; ``error``
    naming the holder's PID if another process holds it."""
    try:
        import fcntl
    except ImportError:                       # no flock on this platform
        yield
        return
    path = Path(folder) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise error(f"{option} {folder}: cannot create its lock file: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise error(f"{option} {folder} is in use by another run ({_holder(fd)}); wait for it to "
                        f"finish or choose another {option}") from None
        mine = f"{os.getpid()}\n".encode()
        if os.pread(fd, 64, 0) != mine:
            os.ftruncate(fd, 0)
            os.pwrite(fd, mine, 0)
        yield
    finally:
        os.close(fd)                          # closing the descriptor releases the lock
