"""Learned evaluations as data: hand weights restated in the learned features, and (later) the
weight files ``evora train`` writes.

Why restate hand weights: the learned features (``strategies.features``) hold every hand
feature of ``compiled.FEATURES``, or an exact linear form of it, so any hand-weighted player is
also a learned one. That is the fit's starting point (the search player's choices are explained
as a change from ``cardheights``), and the check that the learned evaluation is the same
evaluation: restated, a heuristic values every position as before, up to a constant.
"""
from __future__ import annotations

import numpy as np

from .compiled import FEATURES
from .features import FEATURE_NAMES, HAND_FEATURES, NL

# hand feature -> (learned feature, coefficient) pairs whose sum is that feature up to a
# constant: tiles = placed + flipped = 2 - unplaced + flipped; parts placed = stones and
# capitals a seat starts with minus those left; secured = safe columns + safe heights; denial
# is minus the best other seat's total
HAND_AS_LEARNED = {
    "vp": (("scored", 1.0),),
    "empty_stack": (("empty_stack", 1.0),),
    "column": (("column", 1.0),),
    "h1": (("h1", 1.0),), "h2": (("h2", 1.0),), "h3": (("h3", 1.0),), "h4": (("h4", 1.0),),
    "capitals": (("capitals", 1.0),),
    "emperor": (("emperor", 1.0),),
    "tiles": (("tiles_unplaced", -1.0), ("tiles_flipped", 1.0)),
    "cards": tuple((f, 1.0) for f in HAND_FEATURES),
    "parts": (("stones_left", -1.0), ("capitals_left", -1.0)),
    "denial": (("best_other", -1.0),),
    "secured": (("column_safe", 1.0), ("heights_safe", 1.0)),
}
assert set(HAND_AS_LEARNED) | {"win"} == set(FEATURES)


def from_hand(weights) -> np.ndarray:
    """The learned weights (``NL`` feature weights and the win weight) that value positions as
    the hand ``weights`` do (a dict by feature, or a vector in ``FEATURES`` order), up to a
    constant; the weights times progress are zero."""
    if not isinstance(weights, dict):
        weights = dict(zip(FEATURES, weights))
    out = np.zeros(NL + 1)
    for hand, terms in HAND_AS_LEARNED.items():
        for name, coefficient in terms:
            out[FEATURE_NAMES.index(name)] += coefficient * float(weights.get(hand, 0.0))
    out[NL] = float(weights.get("win", 0.0))
    return out
