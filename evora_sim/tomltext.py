"""Writing TOML: the one place that turns a value into TOML text, so every file the toolkit writes
(a weight file, a variant's rules file) reads back as the value it was given.

A TOML basic string may hold no control character but the tab, nor U+007F: each is written as
an escape. A string can reach a file from anything the user typed (a folder name in the command
recorded in a weight file's ``made_by``), so nothing is assumed about it. A lone surrogate (a
file name that is not UTF-8, as Python decodes it) has no TOML escape and is written as U+FFFD,
the replacement character.
"""
from __future__ import annotations

import math
import numbers
import re
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+", re.ASCII)
_SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _char(c: str) -> str:
    if c in _SHORT:
        return _SHORT[c]
    code = ord(c)
    if code < 0x20 or code == 0x7F:
        return f"\\u{code:04X}"
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return c


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (quoted), every character TOML forbids there escaped."""
    return '"' + "".join(_char(c) for c in str(text)) + '"'


def toml_comment(text: str) -> list[str]:
    """``text`` as TOML comment lines (``#`` each; an empty line a bare ``#``): a comment may hold
    no control character but the tab either, so each is written as its escape."""
    def clean(line: str) -> str:
        return "".join(c if c == "\t" or c == '"' or c == "\\" else _char(c).strip('"') for c in line)

    return [f"# {clean(x)}" if x else "#" for x in str(text).splitlines()]


def toml_key(key: str) -> str:
    """A bare key where TOML allows one, else a quoted key."""
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def toml_value(value: Any) -> str:
    """A value (bool, whole number, finite number, string, list, table) as inline TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {value!r} as TOML")
