"""What the rulebook calls things: the card effects, instant tiles, Construction Site actions,
colours, decision points and end triggers, by the engine's internal codes. Every output a
designer reads (the report, ``replay``, ``card-value``, messages) names things through here;
the codes stay only as key columns of the CSV tables and in rules files.
"""
from __future__ import annotations

from . import layout as L

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
# the decision points of a turn (layout.PHASE_NAMES)
PHASE_TITLES = {"setup": "setup", "choose_worker": "choose a worker", "move": "move a worker",
                "main": "draw or use the site", "after": "after the action", "terminal": "game over"}
# how a game ended (layout.END_NAMES)
END_TITLES = {"none": "not ended", "temple_full": "the Temple is full", "out_of_stones": "a player placed its last stone",
              "round_limit": "round limit (a simulation safeguard, not a rule)"}


def card_title(code: str) -> str:
    return CARD_TITLES.get(code, code)


def effect_title(e: int) -> str:
    return card_title(L.EFFECT_NAMES[e])


def tile_title(t: int) -> str:
    return card_title(L.ITILE_NAMES[t])


def type_title(t: int | str) -> str:
    """A card type (a stack, a space's colour) as the rulebook names it: 'Governor'."""
    name = L.TYPE_NAMES[t] if isinstance(t, int) else str(t)
    return name.capitalize()


def space_action(space: dict) -> str:
    """'use a card in the Temple: Governor or Architect', 'draw 2 cards: Governor + Emperor'."""
    action = ACTION_TITLES.get(space.get("action"), str(space.get("action")))
    extra = space.get("stacks") or space.get("types")
    if extra:
        joiner = " + " if space.get("action") == "draw2" else " or "
        action += ": " + joiner.join(str(t).capitalize() for t in extra)
    return action


def space_title(index: int, space: dict) -> str:
    """'Space 5 (Governor): use a card in the Temple: Governor or Architect'."""
    colour = str(space.get("colour", "?")).capitalize()
    return f"Space {index} ({colour}): {space_action(space)}"


def space_words(index: int, space: dict) -> str:
    """A space inside a sentence: '5 (Governor: use a card in the Temple: Governor or Architect)'."""
    colour = str(space.get("colour", "?")).capitalize()
    return f"{index} ({colour}: {space_action(space)})"
