"""The ``evora`` command line: one click group (``group``), one module per family of commands.

- ``play``: score, replay, strategies, duel;
- ``runs``: simulate, run (the main job);
- ``experiments``: sweep;
- ``tuning``: tune strategy, balance (searches over parameters);
- ``skill``: skill (the findings against a ladder of players);
- ``analyse``: report, compare;
- ``dashboard``: dashboard (explore run folders in the browser, sliced);
- ``rules``: rules (every rules key, its value and what it allows);
- ``cardvalue``: card-value (each card's value by experiment);
- ``explain``: explain (why the seats win what they win, and what would fix it);
- ``train``: train (the expert's evaluation fitted to the search player's turns).
"""
from . import analyse, cardvalue, dashboard, experiments, explain, play, rules, runs, skill, train, tuning  # noqa: F401  (each registers its commands)
from .group import UserError, main
from ..fields import DEFAULT_FIELD
from .runs import DEFAULT_GAMES

__all__ = ["main", "UserError", "DEFAULT_FIELD", "DEFAULT_GAMES"]
