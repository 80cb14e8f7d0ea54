"""What a weight may be, for hand-weighted and learned evaluations alike."""
from __future__ import annotations

import math

MAX_WEIGHT = 1_000_000.0
WEIGHT_RANGE = (f"a weight is a number from {-MAX_WEIGHT:,.0f} to {MAX_WEIGHT:,.0f} (only the ratios of the "
                "weights change play)")


def weight_in_range(x: float) -> bool:
    """Whether ``x`` is a weight the evaluation can add up: a position's value sums weight x
    feature, and a weight near the float limit turns a sum into inf, then a difference of two into
    NaN, with which the planner can find no best action."""
    return math.isfinite(x) and -MAX_WEIGHT <= x <= MAX_WEIGHT
