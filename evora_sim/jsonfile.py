"""Reading a user's JSON file: one place that turns each way it can fail into a clear message."""
from __future__ import annotations

import json
from pathlib import Path


def read_json(path: str | Path, what: str, error: type[Exception]):
    """The parsed content of ``path``; ``error`` (naming ``what`` and the file) on failure."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{what} {path} is not valid JSON: {exc}") from None
