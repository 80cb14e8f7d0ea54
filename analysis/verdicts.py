"""The words a skill ladder's verdicts are given in, in one place: the verdicts themselves
(:mod:`analysis.skill_stats`), the ladder's report and its figures all show them.

A module of its own, importing nothing, so a figure that names a verdict (:mod:`analysis.plots`)
does not import the statistics that reach it."""
from __future__ import annotations

TOWARD = {"rate": "the fair share", "unfairness": "fair seats", "rate change": "no effect"}
HOLDS = "holds at every rung"
ONE_RUNG = "changes with skill, one rung carries it"
VARIES = "varies with skill, no trend"
UNEVEN = "found, not shown at every rung"
TRENDS = tuple(f"{verb} with skill, {way} {null}" for null in TOWARD.values() for verb in ("rises", "falls")
               for way in ("away from", "toward")) + ("rises with skill", "falls with skill")
VERDICTS = (HOLDS, *TRENDS, ONE_RUNG, "reverses", VARIES, UNEVEN, "no effect at any rung",
            "no difference found between rungs")
QUIET = ("no effect at any rung", "no difference found between rungs")     # verdicts that state no finding
STEADY = "steady at every rung"            # every rung within the smallest effect of the top one
MOVING = "still moving at the top"         # the top step is a significant move
UNKNOWN = "not shown to settle"
