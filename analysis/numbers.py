"""How an estimate is written: with the digits its interval needs, so a narrow interval never
reads "± 0.00" and a wide one does not pretend to precision it lacks. The report, ``evora
compare`` and the sweep summary all write numbers through here."""
from __future__ import annotations

import math

POINT_KINDS = ("rate", "share", "unfairness")      # written in percentage points of win rate (x 100)
PP = " pp"          # percentage points of a rate (win rate, share); "VP" is the game's score: never mixed


def in_points(kind: str) -> bool:
    """A metric of this kind (rate, share, the seat unfairness) is written in pp (x 100)."""
    return kind in POINT_KINDS


def units(kind: str, change: bool = False) -> tuple[float, str]:
    """(scale, unit) a metric of ``kind`` is written in; ``change``: its difference between runs.
    Rates and shares in % and their changes in pp; the seat unfairness and its change in pp
    (the change shown is that of the unfairness itself: a designer never reads a squared unit)."""
    if kind in ("rate", "share"):
        return (100.0, PP) if change else (100.0, "%")
    if kind == "unfairness":
        return 100.0, PP
    return 1.0, ""


def pp(rate: float) -> str:
    """A difference in win rate in words: 0.01 -> '1 pp', 0.025 -> '2.5 pp'."""
    return f"{100 * rate:g}{PP}"


def decimals(half: float, least: int = 1, most: int = 6) -> int:
    """Decimals that show a half-width with at least one significant digit: 0.5 -> 1,
    0.09 -> 2, 0.004 -> 3 (never fewer than ``least``, never more than ``most``)."""
    if not (math.isfinite(half) and half > 0):
        return least
    return int(min(most, max(least, math.ceil(-math.log10(half) - 1e-9))))


def _symmetric(v: float, lo: float, hi: float, scale: float) -> bool:
    """The interval's two arms print the same at the digits its half-width needs."""
    d = decimals(scale * (hi - lo) / 2)
    return round(scale * (hi - v), d) == round(scale * (v - lo), d)


def estimate(v: float, lo: float, hi: float, scale: float = 100.0, unit: str = "%",
             signed: bool = False) -> str:
    """'26.37% ± 0.09%' or '-0.83 ± 0.10 pp' for a symmetric interval (symmetric at the
    digits shown), '1.06 pp (95% CI 0.98 to 1.14)' otherwise; 'n/a' without an estimate."""
    if not math.isfinite(v):
        return "n/a"
    sign = "+" if signed else ""
    word = unit.startswith(" ")          # a word is written once, a symbol after every number
    inner = "" if word else unit
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{scale * v:{sign}.{decimals(float('nan'))}f}{unit} (no interval)"
    if lo == hi == v:
        return f"{scale * v:{sign}.{decimals(float('nan'))}f}{unit} (no variation: the same in every seed)"
    if _symmetric(v, lo, hi, scale):
        half = scale * (hi - lo) / 2
        d = decimals(half)
        return f"{scale * v:{sign}.{d}f}{inner} ± {half:.{d}f}{unit}"
    arm = min(hi - v, v - lo)
    d = decimals(scale * arm if arm > 0 else scale * (hi - lo) / 2)
    return (f"{scale * v:{sign}.{d}f}{unit} (95% CI {scale * lo:{sign}.{d}f}{inner} to "
            f"{scale * hi:{sign}.{d}f}{inner})")


def bracket(v: float, lo: float, hi: float, scale: float = 100.0, unit: str = "%",
            signed: bool = False, bounds: tuple[float, float] | None = None) -> str:
    """'25.4% [24.9, 25.9]': the estimate and its interval in brackets, for tables and plain-text
    summaries; the same rules as :func:`ranged` (the digits the interval needs, more where fewer
    would print the estimate on a limit, no limit past the figure's possible values, no
    zero-width interval printed as a measurement)."""
    parts = _range_parts(v, lo, hi, scale, unit, signed, bounds)
    if isinstance(parts, str):
        return parts
    d, lo, hi = parts
    sign = "+" if signed else ""
    return f"{scale * v:{sign}.{d}f}{unit} [{scale * lo:{sign}.{d}f}, {scale * hi:{sign}.{d}f}]"


def _range_parts(v, lo, hi, scale, unit, signed, bounds):
    """What an estimate and its range print as: a whole text when there is no range to print (no
    estimate, an open or unbounded range, none at all, zero width, narrower than six digits),
    else the decimals and the limits clipped to ``bounds`` (a share's 0 to 1 by default)."""
    sign = "+" if signed else ""
    if not math.isfinite(v):
        return "n/a"
    if lo == -math.inf and hi == math.inf:
        return "unbounded"
    if math.isinf(lo) or math.isinf(hi):         # an open range: the bound is all that is measured
        bound = hi if math.isinf(lo) else lo
        return f"{'<' if math.isinf(lo) else '>'} {scale * bound:{sign}.{decimals(float('nan'))}f}{unit}"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{scale * v:{sign}.1f}{unit}"
    if bounds is None and unit == "%" and not signed:
        bounds = (0.0, 1.0)
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    if lo == hi:
        return f"{scale * v:{sign}.1f}{unit} (no variation: the same in every seed)"
    d = distinct_decimals(v, lo, hi, scale)
    if round(scale * lo, d) == round(scale * hi, d):     # narrower than the most digits shown
        return f"{scale * v:{sign}.{d}f}{unit} (a range narrower than {10.0 ** -d:g})"
    return d, lo, hi


def ranged(v: float, lo: float, hi: float, scale: float = 100.0, unit: str = "%",
           signed: bool = False, bounds: tuple[float, float] | None = None) -> str:
    """'26.4% (26.3–26.5)': the estimate and its 95% range, for a designer's table cell; the
    digits are those the interval needs, and more where fewer would print the estimate equal to
    a limit it is not equal to. ``bounds``: the figure's possible values (a share: 0 to 1, the
    default for '%'; a count: 0 up), which no printed limit passes. A range of zero width is no
    measurement and reads as one value with 'no variation'. A range open on one side reads as its
    bound alone, '> +644.3' (the estimate then rests on a small-sample correction, not on the data)."""
    parts = _range_parts(v, lo, hi, scale, unit, signed, bounds)
    if isinstance(parts, str):
        return parts
    d, lo, hi = parts
    sign = "+" if signed else ""
    # a signed range reads "-16.6 to -7.2": a dash between signed numbers would read as a minus
    dash = not signed and lo >= 0
    between = f"{scale * lo:.{d}f}–{scale * hi:.{d}f}" if dash else f"{scale * lo:.{d}f} to {scale * hi:.{d}f}"
    return f"{scale * v:{sign}.{d}f}{unit} ({between})"


def distinct_decimals(v: float, lo: float, hi: float, scale: float = 100.0, most: int = 6) -> int:
    """The digits a range needs (:func:`decimals` of its half-width), and more while the estimate
    would print equal to a limit it differs from: '2.8 (2.5-2.8)' becomes '2.78 (2.50-2.81)'."""
    d = decimals(scale * (hi - lo) / 2)
    while d < most and ((lo < v and round(scale * v, d) == round(scale * lo, d))
                        or (v < hi and round(scale * v, d) == round(scale * hi, d))):
        d += 1
    return d


def p_text_words(p: float) -> str:
    """A p-value in a sentence: 'p = 0.034', 'p < 0.001', 'p n/a'."""
    cell = p_cell(p)
    return "p " + (cell if cell.startswith("<") else f"= {cell}") if cell else "p n/a"


def p_cell(p: float) -> str:
    """A p-value for a table: '< 0.001', '0.034', '' when there is none."""
    if not math.isfinite(p):
        return ""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"
