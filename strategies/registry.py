"""Strategy specs from the command line: names -> the ids the compiled strategies understand.

A spec is either one name (every seat plays it) or one name per seat, comma-separated, in seat
order: ``greedy`` or ``greedy,random,greedy,random``. Names are those of
:data:`strategies.builtin.NAMES`, whose position is the compiled strategy id.
"""
from __future__ import annotations

from strategies.builtin import NAMES


class StrategyError(ValueError):
    """A strategy spec that names no known strategy or does not fit the seats."""


# name -> compiled id (the id is the name's position in builtin.NAMES)
STRATEGY_IDS: dict[str, int] = {name: sid for sid, name in enumerate(NAMES)}


def known_names() -> str:
    return ", ".join(sorted(STRATEGY_IDS))


def strategy_id(name: str) -> int:
    """The compiled id of one strategy name (surrounding spaces and case ignored)."""
    key = name.strip().lower()
    if not key:
        raise StrategyError(f"empty strategy name (known strategies: {known_names()})")
    if key not in STRATEGY_IDS:
        raise StrategyError(f"unknown strategy {name.strip()!r} (known strategies: {known_names()})")
    return STRATEGY_IDS[key]


def strategy_name(sid: int) -> str:
    return NAMES[sid]


def parse_strategies(text: str, n_players: int) -> list[int]:
    """Strategy ids for ``n_players`` seats from ``text`` (one name, or one name per seat)."""
    if not isinstance(text, str) or not text.strip():
        raise StrategyError(f"no strategy given (known strategies: {known_names()})")
    items = text.split(",")
    ids = []
    for i, item in enumerate(items):
        try:
            ids.append(strategy_id(item))
        except StrategyError as exc:
            where = f"strategy {i + 1} of {len(items)}: " if len(items) > 1 else ""
            raise StrategyError(f"{where}{exc}") from None
    if len(ids) == 1:
        return ids * n_players
    if len(ids) != n_players:
        raise StrategyError(
            f"{len(ids)} strategies given for {n_players} seats: give one per seat "
            f"(comma-separated, in seat order) or a single name for every seat")
    return ids


__all__ = ["StrategyError", "STRATEGY_IDS", "known_names", "strategy_id", "strategy_name",
           "parse_strategies"]
