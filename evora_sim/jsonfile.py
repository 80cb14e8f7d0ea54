"""Reading a user's JSON file: one place that turns each way it can fail into a clear message."""
from __future__ import annotations

import json
from pathlib import Path


def parse_json_bytes(raw: bytes, what: str, error: type[Exception]):
    """JSON from bytes, every way it can fail (not UTF-8, not JSON, nested too deep, a number too
    long to read) as one ``error`` naming ``what``."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise error(f"{what} is not UTF-8 text") from None
    except RecursionError:
        raise error(f"{what} is nested too deeply to be read") from None
    except ValueError as exc:                   # JSONDecodeError, or an integer of 4,300+ digits
        raise error(f"{what} is not valid JSON: {str(exc).splitlines()[0]}") from None


def read_json(path: str | Path, what: str, error: type[Exception]):
    """The parsed content of ``path``; ``error`` (naming ``what`` and the file) on failure."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    return parse_json_bytes(raw, f"{what} {path}", error)
