"""What a designer calls things: cards, instant tiles, Construction Site spaces, strategies and
rules variants, named as the rulebook names them. The tables keep the internal codes (CSV);
the report shows these names.
"""
from __future__ import annotations

import re

from evora_sim.names import (ACTION_TITLES, CARD_TITLES, COLOUR_TITLES, card_title,  # noqa: F401  (one place)
                             space_title)
from evora_sim.rules import differences


def space_titles(rules: dict) -> list[str]:
    return [space_title(i, sp) for i, sp in enumerate(rules["board"]["spaces"])]


# the score's categories (the seats table's columns), as the report's tables and figures name them
CATEGORY_LABELS = {
    "vp_build": "building", "vp_white": "white stones", "vp_empty_stack": "empty stack",
    "vp_cards": "cards", "vp_emperor": "Emperor tiles", "vp_column_majority": "column majorities",
    "vp_height_1": "height 1", "vp_height_2": "height 2", "vp_height_3": "height 3",
    "vp_height_4": "height 4", "vp_capitals": "capitals",
}
PLAN_TITLES = {"turn": "turn planner", "action": "one decision at a time"}
SHORT = 32           # characters: a strategy's spec longer than this is named briefly in a title


def short_strategy(name: str) -> str:
    """A strategy as a title names it: its spec when short; else its base name and what tells it
    apart (a search player's iterations; a custom file by its file name). The full spec is in the
    report's header table."""
    if len(name) <= SHORT:
        return name
    head, _, rest = name.partition("(")
    if ":" in head:                                   # FILE.py:NAME or FILE.toml:NAME, by an absolute path
        path, _, obj = head.rpartition(":")
        head = f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{obj}"
        if not rest:
            return head
    found = re.search(r"iterations=(\d+)", rest)
    return f"{head}(iterations={found.group(1)}, ...)" if found else f"{head}(...)"


def strategy_title(name: str, info: dict | None) -> str:
    """'greedy (turn planner)', 'random (random legal moves)', 'bots.py:Mine (custom Python)'."""
    info = info or {}
    kind = info.get("kind")
    if kind == "heuristic":
        what = PLAN_TITLES.get(info.get("plan", "action"), str(info.get("plan")))
    elif kind == "random":
        what = "random legal moves"
    elif kind == "custom":
        what = "custom Python"
    else:
        return name
    return f"{name} ({what})"


def rules_differences(rules: dict, default: dict | None = None) -> list[tuple[str, object, object]]:
    """(key, default value, this value) of every rules key that differs from ``default`` (the
    shipped rules), in key order; the board's free-text note is not a rule."""
    return sorted((d for d in differences(rules, default) if d[0] != "board.note"), key=lambda d: d[0])


def board_is_default(rules: dict, default: dict | None = None) -> bool:
    """The Construction Site is the shipped reconstruction (D1)."""
    return not any(k.startswith("board.spaces") for k, _, _ in rules_differences(rules, default))


def value_text(v) -> str:
    """A rules value as --set writes it: 4,6 for a list."""
    if isinstance(v, list):
        return ",".join(str(x) for x in v)
    return "(none)" if v is None else str(v)


def variant_title(rules: dict, default: dict | None = None) -> str:
    """'default rules' or 'white_stone.vp = 6, emperor_tile.values = 4,6'."""
    diffs = rules_differences(rules, default)
    if not diffs:
        return "default rules"
    return ", ".join(f"{k} = {value_text(v)}" for k, _, v in diffs)
