"""When each card is played (analysis: when cards are played): per seat and card, the plays made
in a turn the seat began leading (its total had the game ended then above every other seat's),
the plays after the end was triggered and the rounds played in; per seat, the turns it began
leading, the rate to compare with.

Looked at once a turn, from the shared scores as if the game ended now
(:mod:`evora_sim.metrics.standings`), and once a play. A play's counters are indexed
seat * NTRACK + card, the order of the engine's play counters.
"""
from __future__ import annotations

from numba import njit

from .. import layout as L
from ..recorded import PLAY_STATES
from . import standings
from .slots import Column, slots

T_LEADS = slots(1)                          # whether the seat to move led when its turn began
T_LEAD_TURNS = slots(L.MAXP)                # per seat: turns begun leading
T_PLAY_LEAD = slots(L.MAXP * L.NTRACK)      # plays in turns the seat began leading
T_PLAY_FINAL = slots(L.MAXP * L.NTRACK)     # plays made after the end was triggered
T_PLAY_ROUND = slots(L.MAXP * L.NTRACK)     # the rounds in which they were played, summed

GAMES = ()
SEATS = (Column("turns_leading", "int16"),)
# in a turn its seat began leading, after the end was triggered, and the sum of the rounds
# played in (how late: / plays / rounds)
CARDS = tuple(Column(name, dtype) for name, dtype in zip(PLAY_STATES, ("int16", "int16", "int32")))


@njit(cache=True, inline="always")
def leads_outright(s, p, track):
    """Whether seat ``p``'s total if the game ended now is above every other seat's: a lead on
    VP, not one of a tie-break (at the start every seat has 0 and a tie-break "leads")."""
    mine = track[standings.T_NOW + p]
    others = mine - 1                   # the most any other seat has; selects, not branches:
    for q in range(s[L.G_NPLAYERS]):    # who leads is a coin toss to the branch predictor
        others = max(others, track[standings.T_NOW + q] if q != p else others)
    return mine > others


@njit(cache=True, inline="always")
def turn_begins(s, track):
    """A turn begins (``standings.now`` is current): whether its seat leads."""
    p = s[L.G_CUR]
    track[T_LEADS] = 1 if leads_outright(s, p, track) else 0
    track[T_LEAD_TURNS + p] += track[T_LEADS]


@njit(cache=True, inline="always")
def card_played(s, a, track):
    """The seat to move is about to play the card or take the tile of action ``a``."""
    i = s[L.G_CUR] * L.NTRACK + (a - L.A_PLAY)
    track[T_PLAY_LEAD + i] += track[T_LEADS]
    if s[L.G_END_TRIGGER] != 0:
        track[T_PLAY_FINAL + i] += 1
    track[T_PLAY_ROUND + i] += s[L.G_ROUND]


@njit(cache=True, inline="always")
def record(s, n, g, games, seats, cards, track, gc, sc, cc):
    for p in range(n):
        seats[g, p, sc] = track[T_LEAD_TURNS + p]
        for c in range(L.NTRACK):
            i = p * L.NTRACK + c
            cards[g, p, cc, c] = track[T_PLAY_LEAD + i]
            cards[g, p, cc + 1, c] = track[T_PLAY_FINAL + i]
            cards[g, p, cc + 2, c] = track[T_PLAY_ROUND + i]
