"""Where the game was decided (analysis.explain_stats): who triggered the end in which turn, who would
have won had the game ended right then, every seat's total then, and the leader before each
seat's turn after the trigger.

Looked at when the end is triggered and once a turn after it, from the shared scores as if the
game ended now (:mod:`evora_sim.metrics.standings`).
"""
from __future__ import annotations

from numba import njit

from .. import layout as L
from . import standings
from .slots import T_END, Column, slots

T_TRIG_LEADER = slots(1)          # first in the final scoring's order right after the trigger
T_TRIG_TOTAL = slots(L.MAXP)      # per seat: its total then
T_FINAL_LEAD = slots(L.MAXP)      # per seat: the leader before its turn after the trigger (-1 none)

GAMES = (Column("trigger_seat", "int8", "seat or none"), Column("trigger_turn", "int16"),
         Column("leader_at_trigger", "int8", "seat"))
SEATS = (Column("score_at_trigger", "int16"), Column("leader_before_final_turn", "int8", "seat or none"))
CARDS = ()


@njit(cache=True, inline="always")
def start(track):
    track[T_TRIG_LEADER] = -1
    track[T_FINAL_LEAD:T_FINAL_LEAD + L.MAXP] = -1


@njit(cache=True, inline="always")
def end_triggered(s, R, track):
    """The decision just played triggered the end (``standings.now`` is current): who would win
    if the game ended now, and every seat's total then."""
    track[T_TRIG_LEADER] = standings.leader(s, R, track)
    for p in range(s[L.G_NPLAYERS]):
        track[T_TRIG_TOTAL + p] = track[standings.T_NOW + p]


@njit(cache=True, inline="always")
def turn_begins(s, R, track):
    """A turn after the trigger begins (``standings.now`` is current): note its seat's leader."""
    if s[L.G_END_TRIGGER] != 0:
        track[T_FINAL_LEAD + s[L.G_CUR]] = standings.leader(s, R, track)


@njit(cache=True, inline="always")
def record(s, n, g, games, seats, cards, track, gc, sc, cc):
    """The finished game's columns. An end triggered by the game's last decision (or the round
    limit) was never looked at: the standings then are the final ones."""
    if track[T_END] == 0:
        track[T_TRIG_LEADER] = s[L.G_WINNER]
        for p in range(n):
            track[T_TRIG_TOTAL + p] = s[L.PLAYERS + p * L.PSTRIDE + L.P_FINAL]
    games[g, gc] = s[L.G_END_SEAT]
    games[g, gc + 1] = s[L.G_END_TURN]
    games[g, gc + 2] = track[T_TRIG_LEADER]
    for p in range(n):
        seats[g, p, sc] = track[T_TRIG_TOTAL + p]
        seats[g, p, sc + 1] = track[T_FINAL_LEAD + p]
