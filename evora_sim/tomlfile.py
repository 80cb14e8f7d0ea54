"""Reading a user's TOML file (a rules file, a weight file): one place that turns each way it can
fail into a clear message, as :mod:`evora_sim.jsonfile` does for JSON.

Why not ``tomllib`` alone: besides ``TOMLDecodeError`` it raises RecursionError for arrays or
inline tables nested some hundreds deep, and a plain ValueError for an integer of more than
4,300 digits; readers that caught only the first showed users a traceback. The size is bounded
too: the files the tool reads are a few kilobytes, and a huge one is a mistake, not a weight set.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

MAX_BYTES = 1 << 20                 # 1 MiB
_DIGITS = re.compile(r"value has (\d+) digits")


def parse_toml(text: str, what: str, error: type[Exception]) -> dict:
    """The tables of TOML ``text``; ``error`` naming ``what`` for anything that is not TOML the
    tool can read."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise error(f"{what} is nested too deeply to be read") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what} is not valid TOML: {str(exc).splitlines()[0]}") from None
    except ValueError as exc:           # an integer of more than 4,300 digits
        digits = _DIGITS.search(str(exc))
        raise error(f"{what} is not valid TOML: it holds a number of {digits.group(1) if digits else 'too many'} "
                    "digits, more than a number can have here") from None


def read_toml(path: str | Path, what: str, error: type[Exception]) -> dict:
    """The tables of the TOML file ``path`` (at most ``MAX_BYTES``); ``error`` naming ``what`` and
    the file on failure."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_BYTES:
        raise error(f"{what} {path} is larger than {MAX_BYTES:,} bytes, far more than such a file holds")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not UTF-8 text") from None
    return parse_toml(text, f"{what} {path}", error)
