"""The game loop's tracking array, shared out among the recorded metrics, and how a metric
declares a table column.

Each metric module takes its slots with :func:`slots` when it is imported; the registry
(:mod:`evora_sim.metrics`) imports them in a fixed order, so every offset is a constant that
numba freezes into the compiled loop. The game loop's own bookkeeping (when it last looked at a
turn and at the end trigger, the illegal action a seat chose) takes the first slots.
"""
from __future__ import annotations

from dataclasses import dataclass

_used = 0


def slots(n: int) -> int:
    """The first of ``n`` new slots of the tracking array."""
    global _used
    first = _used
    _used += n
    return first


def used() -> int:
    """Slots taken so far: the tracking array's size once every metric is imported."""
    return _used


T_TURN = slots(1)       # turns played when the loop last looked (-1: during the setup placements)
T_END = slots(1)        # the end trigger when the loop last looked (0: not triggered yet)
T_REFUSED = slots(1)    # the illegal action a compiled seat chose (gameloop.ILLEGAL)


@dataclass(frozen=True)
class Column:
    """A column a metric adds to a result table: its name, its type in the table, and, for a
    column that holds a seat, which values a game can write (``"seat"``: 0 to n - 1;
    ``"seat or none"``: -1 too), which :mod:`evora_sim.storage` checks when the table is read."""

    name: str
    dtype: str
    seat: str = ""
