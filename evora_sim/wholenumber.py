"""Whole numbers as a user types them (``--set``, ``--param``, a strategy's options): one reader
for every place that turns text into an int.

Python's ``int()`` also reads Arabic-Indic, fullwidth and other Unicode digits, and refuses a
number of more than 4,300 digits with a ValueError from deep inside, so both would reach a user as
a surprise or a traceback. Here only ASCII digits count, and at most ``MAX_DIGITS`` of them: no
count or value of this toolkit needs more, so a longer one is out of range wherever it is given.
"""
from __future__ import annotations

import re

MAX_DIGITS = 18                               # below 2**63: every count and seed fits
_WHOLE = re.compile(r"[+-]?[0-9]{1,%d}" % MAX_DIGITS, re.ASCII)


def whole_number(text: str) -> int:
    """``text`` (spaces around it allowed) as an int; ValueError unless it is an optional sign
    and 1 to ``MAX_DIGITS`` ASCII digits."""
    t = text.strip() if isinstance(text, str) else None
    if t is None or not _WHOLE.fullmatch(t):
        raise ValueError(f"{text!r} is not a whole number of at most {MAX_DIGITS} digits")
    return int(t)


def is_whole_number(text: str) -> bool:
    try:
        whole_number(text)
    except ValueError:
        return False
    return True
