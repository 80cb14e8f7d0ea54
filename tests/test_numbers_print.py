"""Issue 50, item 4: no range is printed with zero width as if measured, with its estimate equal to
a limit it differs from, or with a limit outside the figure's possible values."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.numbers import ranged

NUM = r"[+-]?\d+(?:\.\d+)?"


def _parse(text):
    m = re.fullmatch(rf"({NUM})(?: pp|%|)? \(({NUM})(?:–| to )({NUM})\)", text)
    return None if m is None else tuple(float(g) for g in m.groups())


@settings(max_examples=400, deadline=None)
@given(st.floats(-1, 1), st.floats(0, 0.2), st.floats(0, 0.2), st.booleans())
def test_a_printed_range_is_never_zero_width_and_never_meets_its_estimate(v, below, above, signed):
    lo, hi = v - below, v + above
    text = ranged(v, lo, hi, unit=" pp", signed=signed)
    if lo == hi:
        assert "no variation" in text
        return
    if "narrower than" in text:                 # below the printed resolution: no limits printed
        return
    est, a, b = _parse(text)
    assert a < b
    # printed equal only when the gap is below the most digits printed (six)
    if 100 * (v - lo) > 2e-6:
        assert est != a, text
    if 100 * (hi - v) > 2e-6:
        assert est != b, text


@settings(max_examples=300, deadline=None)
@given(st.floats(0, 1), st.floats(0, 0.3), st.floats(0, 0.3))
def test_a_share_or_a_count_never_prints_a_limit_outside_its_possible_values(v, below, above):
    share = ranged(v, v - below, v + above)                       # a share: 0% to 100%
    if "no variation" not in share and "narrower" not in share:
        _, a, b = _parse(share)
        assert 0.0 <= a and b <= 100.0
    count = ranged(v, v - below, v + above, scale=1.0, unit="", bounds=(0.0, float("inf")))
    if "no variation" not in count and "narrower" not in count:
        assert _parse(count)[1] >= 0.0


def test_the_reviewed_cases():
    assert ranged(0.028, 0.025, 0.0281, unit=" pp") == "2.80 pp (2.50–2.81)"
    assert ranged(0.0, 0.0, 0.0, unit=" pp", signed=True) == "+0.0 pp (no variation: the same in every seed)"
    assert ranged(0.000002, -0.000002, 0.000006, scale=1.0, unit="", bounds=(0, float("inf"))) == \
        "0.000002 (0.000000–0.000006)"
