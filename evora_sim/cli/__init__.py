"""The ``evora`` command line: one click group (``group``), one module per family of commands,
each imported only when one of its commands runs or shows its help (``group.COMMANDS``).

- ``play``: score, replay, strategies, duel;
- ``runs``: simulate, run (the main job);
- ``experiments``: sweep;
- ``tuning``: tune strategy, balance (searches over parameters);
- ``skill``: skill (the findings against a ladder of players);
- ``analyse``: report, compare, compact;
- ``dashboard``: dashboard (explore run folders in the browser, sliced);
- ``rules``: rules (every rules key, its value and what it allows);
- ``cardvalue``: card-value (each card's value by experiment);
- ``explain``: explain (why the seats win what they win, and what would fix it);
- ``train``: train (the expert's evaluation fitted to the search player's turns).
"""
from ..fields import DEFAULT_FIELD
from .group import UserError, main

__all__ = ["main", "UserError", "DEFAULT_FIELD"]
