"""Output folders: written so that readers see the old one or the new one, and never at the cost
of a file this toolkit did not write.

A folder written by :func:`atomic_folder` (a report, a sweep summary) holds a marker file
(``.evora-output``) naming its kind and every file in it. Replacing such a folder touches only
those files; a folder holding anything else (a project folder, a user's notes, a report of an
older version without the marker) is refused, never emptied.

The marker is read back from a folder anyone may have handed the user, so it is trusted only for
what this toolkit writes there: plain file names directly inside the folder, of the kinds a
report or summary holds (:func:`own_name`). A marker listing anything else (``../x``, an
absolute path, a sub-folder) makes the folder foreign: refused, nothing deleted.

Every command's folder goes through the same guard, so a new command gets it by construction:

- :func:`check_folder_kind`: what a folder named by the user may be: new, empty (an interrupted
  write's leftovers aside), or one this command recognises as its own; never a file, never a
  folder of someone else's files (refused, nothing deleted);
- :func:`own_path`: every folder or file a command makes *inside* its folder, refused when a part
  of it below that folder is a link (planted in a folder someone handed over, it would have the
  command write, or read, outside it);
- :func:`write_bytes_atomic`: every file written whole, never through a link.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .runlock import LOCK_FILE, refuse_if_held

MARKER = ".evora-output"
MARKER_FORMAT = "evora-sim output folder"
# what a report or summary folder holds: tables, figures, pages, logs and weight or rules files
OUTPUT_SUFFIXES = (".csv", ".png", ".svg", ".md", ".html", ".txt", ".toml")
_OWN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,200}", re.ASCII)


class OutputError(ValueError):
    """An output path that must not be written (the message names it and why)."""


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary name beside ``path`` (``.NAME.PID.tmp``), then rename it into
    place: a reader sees the old file or the new one, never half of it. The temporary file is
    created new, never opened through a link left under its name (a folder someone handed over
    may hold one for every likely PID); a link at ``path`` itself is replaced, not followed."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()


def is_leftover(path: Path) -> bool:
    """What an interrupted command may leave in a folder it had just taken: a temporary file
    (``.NAME.PID.tmp``) or the lock file; never content."""
    return (not path.is_symlink() and path.is_file()
            and (path.name == LOCK_FILE or (path.name.startswith(".") and path.name.endswith(".tmp"))))


def check_folder_kind(out, own, what: str, option: str = "--out", error: type[Exception] = OutputError,
                      foreign=None) -> bool:
    """Whether ``out`` already holds this command's work (``own(out)`` says so), after refusing
    (``error``, one line, nothing written or deleted) a file, or a folder that holds anything
    else; False for a folder that is new or empty (:func:`is_leftover` aside). ``what``: the
    command's kind of folder in the message (``"a run folder"``); ``foreign(out)``: the entries
    the message names (default: every one)."""
    out = Path(out)
    if not out.exists() and not out.is_symlink():
        return False
    if not out.is_dir():
        raise error(f"{option} {out} exists and is not a folder; choose another {option}")
    if own(out):
        return True
    try:
        found = foreign(out) if foreign else sorted(p.name for p in out.iterdir() if not is_leftover(p))
    except OSError as exc:
        raise error(f"{option} {out} cannot be read: {exc.strerror or exc}") from None
    if found:
        refuse_if_held(out, error, option)    # a command that has just taken it: not yet its folder
        shown = ", ".join(found[:3]) + (" ..." if len(found) > 3 else "")
        raise error(f"{option} {out} is not empty and is not {what} (it holds {shown}); nothing is deleted: "
                    f"choose another {option} or empty it yourself")
    return False


def own_path(root, *parts, error: type[Exception] = OutputError) -> Path:
    """``root / parts``: a folder or file a command makes inside its folder ``root``, unless a part
    of it below ``root`` is a link (``error``; see the module) or leaves ``root`` (``..``, an
    absolute path). ``root`` itself is the user's choice and may be a link."""
    path = Path(root)
    for piece in parts:
        for name in Path(piece).parts:
            if name in ("", ".", "..") or Path(name).is_absolute():
                raise error(f"{Path(root) / piece}: not a place inside {root}; nothing is read or written there")
            path = path / name
            if path.is_symlink():
                raise error(f"{path} is a link, not a folder or file of {root}'s own; nothing is read or written "
                            f"there: remove the link, or use a new folder")
    return path


def check_out_path(value, option: str = "--out", error: type[Exception] = OutputError,
                   example: str | None = None) -> Path:
    """``value`` as a Path, unless it is empty or the current folder or one of its parents
    (``.``, ``..``, ``/``): those hold the user's own work, so no command writes there.
    ``example``: how the message shows a good value (default ``OPTION runs/NAME``)."""
    text = "" if value is None else str(value)
    if not text.strip():
        raise error(f"{option} is empty; give a folder name, e.g. {example or f'{option} runs/NAME'}")
    path = Path(text)
    try:
        here = Path.cwd().resolve()
        full = path.expanduser().resolve()
    except (OSError, RuntimeError) as exc:
        raise error(f"{option} {text}: cannot be resolved ({exc})") from None
    if full == here or full in here.parents:
        raise error(f"{option} {text} is the current folder or one of its parents, which hold other "
                    f"files; give a folder of its own, e.g. {option} {text.rstrip('/') or '.'}/NAME")
    return path


def own_name(name) -> bool:
    """Whether ``name`` is one this toolkit writes into an output folder: a plain file name (no
    folder part, no leading dot, not ``..``) ending in one of ``OUTPUT_SUFFIXES``. Nothing else
    listed in a marker is ever removed."""
    return (isinstance(name, str) and _OWN_NAME.fullmatch(name) is not None and ".." not in name
            and name.endswith(OUTPUT_SUFFIXES))


def _marker(folder: Path) -> dict | None:
    """The marker of a folder this toolkit wrote, or None (absent, unreadable, a link, or listing
    a name this toolkit never writes: see :func:`own_name`)."""
    path = folder / MARKER
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if (not isinstance(doc, dict) or doc.get("format") != MARKER_FORMAT
            or not isinstance(doc.get("files"), list)
            or not all(own_name(f) for f in doc["files"])):
        return None
    return doc


def _contents(folder: Path) -> set[str]:
    """Every file and folder under ``folder``, as relative POSIX paths."""
    found = set()
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        for name in dirs + files:
            found.add((rel / name).as_posix())
    return found


def foreign_files(folder: Path, kind: str) -> list[str]:
    """What in ``folder`` a :func:`atomic_folder` of ``kind`` did not write (its marker lists what
    it wrote); every entry if there is no marker of that kind. An empty folder has none."""
    folder = Path(folder)
    found = _contents(folder)
    doc = _marker(folder)
    if doc is None or doc.get("kind") != kind:
        return sorted(found)
    return sorted(found - set(doc["files"]) - {MARKER})


def check_output_folder(final: str | Path, kind: str, option: str = "--out",
                        error: type[Exception] = OutputError) -> None:
    """Refuse ``final`` unless it is absent, an empty folder, or a folder of ``kind`` written by
    :func:`atomic_folder` that holds nothing else (:func:`check_folder_kind`)."""
    final = Path(final)
    if final.is_symlink():
        raise error(f"{option} {final} is a link, not a folder of its own; choose another {option}")
    check_folder_kind(final, lambda f: not foreign_files(f, kind), f"an evora {kind}", option, error,
                      lambda f: foreign_files(f, kind))


def _remove_listed(folder: Path, names) -> None:
    """Delete the listed files of a folder this toolkit wrote: only names it writes
    (:func:`own_name`) and only files or links (a link goes, never what it points to); then the
    folder, if nothing else is left in it."""
    for name in sorted({n for n in names if own_name(n)} | {MARKER}):
        p = folder / name
        try:
            if not stat.S_ISDIR(p.lstat().st_mode):
                p.unlink()
        except OSError:
            pass
    try:
        folder.rmdir()
    except OSError:
        pass


@contextmanager
def atomic_folder(final: str | Path, kind: str):
    """Yield a temporary folder beside ``final``; on success it replaces ``final`` by rename (the
    old folder's own files are then deleted, nothing else), on failure it is removed and
    ``final`` is left as it was. ``final`` is checked first (:func:`check_output_folder`)."""
    final = Path(final)
    check_out_path(final)
    check_output_folder(final, kind)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        yield tmp
        written = sorted(_contents(tmp))
        odd = [name for name in written if not own_name(name)]
        if odd:                                        # a writer's mistake: never a marker it cannot read back
            raise OutputError(f"{final}: an output folder holds only plain files of the kinds "
                              f"{', '.join(OUTPUT_SUFFIXES)}, not {odd[0]}")
        (tmp / MARKER).write_text(json.dumps({"format": MARKER_FORMAT, "kind": kind, "files": written},
                                             indent=1), encoding="utf-8")
        old = None
        if final.exists():
            check_output_folder(final, kind)          # again: it may have changed meanwhile
            old = Path(tempfile.mkdtemp(prefix=f".{final.name}.old.", dir=final.parent))
            os.replace(final, old / "x")
        os.replace(tmp, final)
        if old is not None:
            doc = _marker(old / "x")
            _remove_listed(old / "x", doc["files"] if doc else [])
            try:
                old.rmdir()
            except OSError:                            # something foreign appeared: keep it
                pass
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
