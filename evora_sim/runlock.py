"""One run at a time per run folder: an exclusive lock held for the whole run.

The lock is ``fcntl.flock`` on the file ``.evora-lock`` in the run folder, which also holds the
holder's PID (for the message the second run gets). The kernel drops the lock when its holder
exits, however it exits (Ctrl-C, SIGKILL, a crash), so a stale lock file never blocks a resume.

On NFS, Linux turns ``flock`` into an NFS byte-range lock (NLM for NFSv3, built into NFSv4), so
two machines sharing the folder exclude each other as long as the server supports locking; on a
mount with ``nolock`` (or ``local_lock=flock``) the lock only excludes runs on the same machine.
Where ``fcntl`` does not exist (Windows) no lock is taken.

The lock file is in a folder the user may have been handed, so it is opened without following a
link and must be a file of its own: a ``.evora-lock`` that is a symbolic or hard link to another
file (whose content the PID would replace) makes the folder refused, nothing written.
"""
from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:                           # no flock on this platform (Windows)
    fcntl = None

LOCK_FILE = ".evora-lock"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


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
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDONLY | _NOFOLLOW)
    except OSError:                           # none (or a link, which folder_lock refuses): not held
        return
    try:
        _take(fd, folder, error, option)
    finally:
        os.close(fd)                          # also releases the probe's lock if it got it


def _open_lock(folder: Path, error: type[Exception], option: str) -> int:
    """The lock file's descriptor: created exclusively, or the folder's own earlier lock file,
    never through a link (see the module)."""
    path = folder / LOCK_FILE
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
        except FileExistsError:
            fd = os.open(path, os.O_RDWR | _NOFOLLOW)
    except OSError as exc:
        if os.path.islink(path):
            raise error(f"{option} {folder}: its lock file {LOCK_FILE} is a symbolic link, not a lock file "
                        "this tool made; nothing is written: remove the link or choose another "
                        f"{option}") from None
        raise error(f"{option} {folder}: cannot create its lock file: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        what = "a hard link to another file" if stat.S_ISREG(info.st_mode) else "not a file"
        raise error(f"{option} {folder}: its lock file {LOCK_FILE} is {what}, not a lock file this tool "
                    f"made; nothing is written: remove it or choose another {option}")
    return fd


@contextmanager
def folder_lock(folder: str | Path, error: type[Exception], option: str = "--out"):
    """Hold the exclusive lock of ``folder`` (which must exist) until the block ends; ``error``
    naming the holder's PID if another process holds it."""
    if fcntl is None:
        yield
        return
    fd = _open_lock(Path(folder), error, option)
    try:
        _take(fd, folder, error, option)
        mine = f"{os.getpid()}\n".encode()
        try:
            if os.pread(fd, 64, 0) != mine:
                os.ftruncate(fd, 0)
                os.pwrite(fd, mine, 0)
        except OSError as exc:                # a full disk, a read-only or vanished mount
            raise error(f"{option} {folder}: cannot write its lock file {LOCK_FILE}: {exc.strerror or exc}; "
                        "nothing else was written: free some space (or choose another "
                        f"{option}) and run the same command again") from None
        yield
    finally:
        os.close(fd)                          # closing the descriptor releases the lock
