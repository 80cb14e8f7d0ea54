"""The recorded metrics: counts the game loop makes as a game is played, written to the tables.

A metric is one module here that declares its slots in the loop's tracking array
(:func:`slots.slots`), its compiled hooks (``start``, ``end_triggered``, ``turn_begins``,
``card_played``, ``record``: the ones it needs) and its table columns (``GAMES``, ``SEATS``,
``CARDS``: :class:`slots.Column`). This module is the one list of them: the game loop
(:mod:`evora_sim.gameloop`) calls the hooks below, the tables (:mod:`evora_sim.result_tables`) and the
checks on reading (:mod:`evora_sim.storage`) read the columns. A new metric is its module, its
lines here, and its test (docs/code.md, "a recorded metric").

The hook of a turn's start is compiled into the loop (about 2% of random 4-player games' speed
against a call, 91 calls a game); the rarer ones are calls, compiled without numba's reference
counts (``_nrt=False``: they allocate nothing), whose three arrays' counts cost about a tenth
of the loop's speed when they were counted.
"""
from __future__ import annotations

from numba import njit

from .. import layout as L
from . import card_timing, decided, standings, tension
from .slots import T_END, T_REFUSED, T_TURN, Column, used  # noqa: F401  (the loop's own slots, for gameloop)

METRICS = (tension, decided, card_timing)      # in the order of their columns in the tables

TRACK_SIZE = used()


def columns(table: str) -> tuple[Column, ...]:
    """Every metric's columns of ``table`` ("games", "seats" or "cards"), in the tables' order."""
    return tuple(c for m in METRICS for c in getattr(m, table.upper()))


def _firsts(game_base: int, seat_base: int) -> tuple:
    """Per metric, its first column in the result arrays (games, seats, cards) after ``game_base``
    and ``seat_base`` columns of the loop's own."""
    out, g, s, c = [], game_base, seat_base, 0
    for m in METRICS:
        out.append((g, s, c))
        g, s, c = g + len(m.GAMES), s + len(m.SEATS), c + len(m.CARDS)
    return tuple(out)


GAME_BASE = ("rounds", "turns", "end_trigger", "winner_seat", "decisions", "tie_lot")   # gameloop.record's
SEAT_BASE = ("score", "parts_left", "seat_turns")       # after the VP categories (layout.BREAKDOWN_NAMES)
TENSION, DECIDED, CARD_TIMING = _firsts(len(GAME_BASE), len(L.BREAKDOWN_NAMES) + len(SEAT_BASE))


@njit(cache=True, inline="always")
def start(s, track):
    """A game begins (``track`` is zeroed)."""
    standings.start(track)
    tension.start(s, track)
    decided.start(track)


@njit(cache=True, _nrt=False)
def end_triggered(s, R, track):
    """The decision just played triggered the end."""
    standings.now(s, R, track)
    decided.end_triggered(s, R, track)


@njit(cache=True, inline="always")
def turn_begins(s, R, track):
    """A turn begins, or a setup placement (``L.PH_SETUP``)."""
    tension.turn_begins(s, track)
    if s[L.G_PHASE] == L.PH_SETUP:
        return
    standings.now(s, R, track)
    decided.turn_begins(s, R, track)
    card_timing.turn_begins(s, track)


@njit(cache=True, _nrt=False)
def card_played(s, R, a, track):
    """The seat to move is about to play the card or take the tile of action ``a``."""
    card_timing.card_played(s, a, track)


@njit(cache=True, _nrt=False)
def record(s, n, g, games, seats, cards, track):
    """The finished game's metric columns into row ``g`` of the result arrays."""
    tension.record(s, n, g, games, seats, cards, track, TENSION[0], TENSION[1], TENSION[2])
    decided.record(s, n, g, games, seats, cards, track, DECIDED[0], DECIDED[1], DECIDED[2])
    card_timing.record(s, n, g, games, seats, cards, track, CARD_TIMING[0], CARD_TIMING[1], CARD_TIMING[2])
