"""The game's tension (Ludii / TAG outcome metrics): who led after each round, how often the lead
changed, the winner's largest deficit and the round from which it led.

The running score after each round is looked at once, when the next round begins, so the cost
is one compare a turn and a few operations a round.
"""
from __future__ import annotations

from numba import njit

from .. import layout as L
from .slots import Column, slots

T_ROUND = slots(1)              # the round being played
T_LEADER = slots(1)             # the last sole leader after a round (-1: none yet)
T_CHANGES = slots(1)            # lead changes between rounds
T_DEFICIT = slots(L.MAXP)       # per seat: largest deficit to the leader after a round
T_BEHIND = slots(L.MAXP)        # per seat: the last round after which it did not lead alone

# the leader after each round by score, the last round's being the final score
GAMES = (Column("lead_changes", "int16"), Column("comeback", "int16"), Column("winner_led_from", "int16"),
         Column("decided_last_round", "bool"))
SEATS = ()
CARDS = ()


@njit(cache=True, inline="always")
def start(s, track):
    track[T_ROUND] = s[L.G_ROUND]
    track[T_LEADER] = -1


@njit(cache=True, inline="always")
def round_over(s, track):
    """The round ``track[T_ROUND]`` is over (the state holds the next one): note its leader."""
    r = track[T_ROUND]
    track[T_ROUND] = s[L.G_ROUND]
    if r < 1:                                   # the setup placements are no round
        return
    n = s[L.G_NPLAYERS]
    best, leader = -1, -1
    for p in range(n):
        v = s[L.PLAYERS + p * L.PSTRIDE + L.P_SCORE]
        if v > best:
            best, leader = v, p
        elif v == best:
            leader = -1                         # shared lead: nobody leads alone
    if leader >= 0:
        if track[T_LEADER] >= 0 and track[T_LEADER] != leader:
            track[T_CHANGES] += 1
        track[T_LEADER] = leader
    for p in range(n):
        gap = best - s[L.PLAYERS + p * L.PSTRIDE + L.P_SCORE]
        if gap > track[T_DEFICIT + p]:
            track[T_DEFICIT + p] = gap
        if p != leader:
            track[T_BEHIND + p] = r


@njit(cache=True, inline="always")
def turn_begins(s, track):
    """A turn (or a setup placement) begins: a round that is over is noted."""
    if s[L.G_ROUND] != track[T_ROUND]:
        round_over(s, track)


@njit(cache=True, inline="always")
def record(s, n, g, games, seats, cards, track, gc, sc, cc):
    """The finished game's columns; its last round's standing is the final score, so a lead
    that was not the winner's is one more change."""
    w = s[L.G_WINNER]
    games[g, gc] = track[T_CHANGES] + (1 if track[T_LEADER] >= 0 and track[T_LEADER] != w else 0)
    games[g, gc + 1] = track[T_DEFICIT + w]
    games[g, gc + 2] = track[T_BEHIND + w] + 1
    games[g, gc + 3] = 1 if track[T_BEHIND + w] + 1 == s[L.G_ROUND] else 0
