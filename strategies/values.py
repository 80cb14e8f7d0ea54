"""Every number a strategy is given, read and bounded in one place: the weights and options of
a spec (``greedy(vp=2)``, ``mcts(iterations=500)``, ``expert(replies=4)``), of a weight file,
of a strategy recorded in a run folder, and ``evora train``'s ``--replies``.

Why one reader: these values reach compiled code that reads them without checks, and on the way
Python's ``int()`` and ``float()`` fail in ways a user should never see: infinity has no whole
number (OverflowError), an integer of 400 digits has no float (OverflowError), and text of more
than 4,300 digits is no integer at all (ValueError). Each place that read numbers on its own
let one of these through. Here a value is a number of the right kind (never a bool: True is
1 to Python, not to a user), finite, and within its range, or it is refused with a message that
shows it (shortened when long) and says what was expected.
"""
from __future__ import annotations

import math
import re

import numpy as np

from evora_sim.wholenumber import MAX_DIGITS, whole_number

MAX_WEIGHT = 1_000_000.0
WEIGHT_RANGE = (f"a weight is a number from {-MAX_WEIGHT:,.0f} to {MAX_WEIGHT:,.0f} (only the ratios of the "
                "weights change play)")
MAX_REPLIES = 32          # the turn planner keeps at most this many best turns (planner.TOP_MAX)
REPLIES_RANGE = f"a whole number from 0 to {MAX_REPLIES}"
AHEAD_FROM_RANGE = ("a number from 0 (look ahead from the game's start) to 1 (only once its end is "
                    "triggered)")

# a number as text: digits, a point, an exponent; never inf, nan or Unicode digits
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)
_DIGITS = re.compile(r"[+-]?[0-9]+", re.ASCII)
_SHOWN = 40               # characters of a value a message shows


def show(value) -> str:
    """``value`` as a message shows it: its repr, shortened when long, and a huge integer by its
    number of digits (turning one of more than 4,300 digits into text is itself an error)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        try:
            digits = str(abs(value))
        except ValueError:                  # more than 4,300 digits
            return f"a whole number of about {int(value.bit_length() * math.log10(2)) + 1:,} digits"
        return f"{'-' if value < 0 else ''}{digits[:10]}... ({len(digits):,} digits)"
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN - 10]}... ({len(text):,} characters)"


def whole(value, name: str, lo: int, hi: int, error, *, expected: str | None = None, sep: str = "=") -> int:
    """``value`` as a whole number from ``lo`` to ``hi``: an int, a float without a fraction, or
    text of at most ``wholenumber.MAX_DIGITS`` ASCII digits. Else ``error`` with one line,
    ``NAME=VALUE is ... (EXPECTED)``."""
    expected = expected or f"a whole number from {lo:,} to {hi:,}"

    def refuse(reason: str):
        return error(f"{name}{sep}{show(value)} {reason} ({expected})")

    if isinstance(value, (bool, np.bool_)):
        raise refuse("is not a whole number")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or not float(value).is_integer():
            raise refuse("is not a whole number")
        if not lo <= value <= hi:
            raise refuse("is out of range")
        return int(value)
    if isinstance(value, str):
        if _DIGITS.fullmatch(value.strip()) and len(value.strip().lstrip("+-")) > MAX_DIGITS:
            raise refuse("is out of range")
        try:
            value_int = whole_number(value)
        except ValueError:
            raise refuse("is not a whole number") from None
    elif isinstance(value, (int, np.integer)):
        value_int = int(value)
    else:
        raise refuse("is not a whole number")
    if not lo <= value_int <= hi:
        raise refuse("is out of range")
    return value_int


def number(value, name: str, lo: float, hi: float, error, *, expected: str | None = None, sep: str = "=",
           text: bool = True) -> float:
    """``value`` as a finite number from ``lo`` to ``hi``: an int or a float, or with ``text``
    the text of one (digits, point, exponent). Else ``error`` with one line."""
    expected = expected or f"a number from {lo:,.12g} to {hi:,.12g}"

    def refuse(reason: str):
        return error(f"{name}{sep}{show(value)} {reason} ({expected})")

    if isinstance(value, str) and NUMBER.fullmatch(value.strip()) and not text:
        raise refuse("is not a number; write it as a number, without quotes")
    if isinstance(value, (bool, np.bool_)) or not (
            isinstance(value, (int, float, np.integer, np.floating))
            or (text and isinstance(value, str) and NUMBER.fullmatch(value.strip()))):
        raise refuse("is not a number")
    if isinstance(value, (int, np.integer)):
        if not lo <= int(value) <= hi:          # compared as an int: one of 400 digits has no float
            raise refuse("is out of range")
        return float(value)
    x = float(value)
    if math.isnan(x) or (math.isinf(x) and not isinstance(value, str)):
        raise refuse("is not a finite number")          # text of inf or nan is no number: refused above
    if math.isinf(x) or not lo <= x <= hi:              # text of a finite number too large for a float
        raise refuse("is out of range")
    return x


def weight(value, name: str, error, *, sep: str = "=", text: bool = True) -> float:
    """A feature weight of a hand-weighted or learned evaluation (``WEIGHT_RANGE``)."""
    return number(value, name, -MAX_WEIGHT, MAX_WEIGHT, error, expected=WEIGHT_RANGE, sep=sep, text=text)


def weight_in_range(x: float) -> bool:
    """Whether ``x`` is a weight the evaluation can add up: a position's value sums weight x
    feature, and a weight near the float limit turns a sum into inf, then a difference of two into
    NaN, with which the planner can find no best action."""
    return math.isfinite(x) and -MAX_WEIGHT <= x <= MAX_WEIGHT


def replies(value, name: str, error, *, sep: str = "=") -> int:
    """How many best turns are valued by the next seat's reply (0 to ``MAX_REPLIES``)."""
    return whole(value, name, 0, MAX_REPLIES, error, expected=REPLIES_RANGE, sep=sep)


def ahead_from(value, name: str, error, *, sep: str = "=", text: bool = True) -> float:
    """From which progress of the game (``features.progress``, 0 to 1) a planner looks ahead."""
    return number(value, name, 0.0, 1.0, error, expected=AHEAD_FROM_RANGE, sep=sep, text=text)
