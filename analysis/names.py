"""What a designer calls things: cards, instant tiles, Construction Site spaces, strategies and
rules variants, named as the rulebook names them. The tables keep the internal codes (CSV);
the report shows these names.
"""
from __future__ import annotations

from evora_sim import layout as L

# the rulebook's "Card Effects" and "instant bonus tiles", by internal code
CARD_TITLES = {
    "gov_column": "Governor: score one column",
    "gov_workers": "Governor: 5 VP per majority worker",
    "gov_height": "Governor: score a height majority",
    "emp_place": "Emperor: place an Emperor tile",
    "emp_flip": "Emperor: flip an Emperor tile",
    "emp_temple": "Emperor: use a card in the Temple",
    "arch_stone_white": "Architect: stone and white stone",
    "arch_stone": "Architect: 1 stone",
    "arch_two_stones": "Architect: 2 stones on one space",
    "cent_swap": "Centurion: swap with a worker",
    "cent_any": "Centurion: to any empty space",
    "cent_move": "Centurion: move it",
    "tile_capital_two_stones": "Instant tile: capital and 2 stones",
    "tile_flip_both": "Instant tile: flip both Emperor tiles",
    "tile_two_capitals": "Instant tile: 2 capitals",
    "tile_three_stones": "Instant tile: 3 stones",
}
assert set(CARD_TITLES) == set(L.EFFECT_NAMES + L.ITILE_NAMES)

# the Construction Site actions as the rulebook words them
ACTION_TITLES = {
    "build_two_stones": "2 stones",
    "build_one_stone": "1 stone",
    "build_capital": "1 capital",
    "build_stone_and_white": "stone + white stone",
    "build_capital_and_white": "capital + white stone",
    "build_stone_then_white": "stone then white, same space",
    "emperor_tile": "place an Emperor tile",
    "draw2": "draw 2 cards",
    "centurion": "use the Centurion",
    "temple": "use a card in the Temple",
}
# the colours of the spaces and cards (the rulebook's purple is the Emperor's)
COLOUR_TITLES = {"governor": "Governor", "emperor": "Emperor (purple)", "architect": "Architect",
                 "centurion": "Centurion"}


def card_title(code: str) -> str:
    return CARD_TITLES.get(code, code)


def space_title(index: int, space: dict) -> str:
    """'Space 5 (Governor): use a card in the Temple: Governor or Architect'."""
    action = ACTION_TITLES.get(space.get("action"), str(space.get("action")))
    extra = space.get("stacks") or space.get("types")
    if extra:
        joiner = " + " if space.get("action") == "draw2" else " or "
        action += ": " + joiner.join(str(t).capitalize() for t in extra)
    colour = str(space.get("colour", "?")).capitalize()
    return f"Space {index} ({colour}): {action}"


def space_titles(rules: dict) -> list[str]:
    return [space_title(i, sp) for i, sp in enumerate(rules["board"]["spaces"])]


PLAN_TITLES = {"turn": "turn planner", "action": "one decision at a time"}


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


def flatten(node, prefix: str = ""):
    """(dotted key, value) of every leaf of a rules table, board spaces by index: the keys
    ``--set`` and ``evora rules`` name."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from flatten(v, f"{prefix}{k}.")
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for i, v in enumerate(node):
            yield from flatten(v, f"{prefix}{i}.")
    else:
        yield prefix[:-1], node


def rules_differences(rules: dict, default: dict | None = None) -> list[tuple[str, object, object]]:
    """(key, default value, this value) of every rules key that differs from ``default`` (the
    shipped rules); the board's free-text note is not a rule."""
    if default is None:
        from evora_sim.rules import load_rules

        default = load_rules().data
    a, b = dict(flatten(default)), dict(flatten(rules))
    return [(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b))
            if a.get(k) != b.get(k) and k != "board.note"]


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
