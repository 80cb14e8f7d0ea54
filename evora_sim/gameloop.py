"""The one game loop and its results, shared by the compiled batch driver
(:mod:`evora_sim.batch`) and the driver for custom Python seats (:mod:`evora_sim.mixed`).

Both drivers play the same steps with the same buffers and random stream, so a table of
built-ins plays exactly the same games whichever driver runs it. Kept apart from both so that
neither driver imports the other's internals (batch dispatches to mixed; mixed needs only this).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from strategies.compiled import KIND_RANDOM
from strategies.decide import choose, new_buffers, new_game
from strategies.errors import StrategyError
from strategies.mcts import WHY_TOP, search_notes as searched
from strategies.registry import as_strategy, tree_nodes, turn_tree_shape

from . import engine as E
from . import layout as L
from .recorded import PLAY_STATES
from .rng import STRATEGY_STREAM, randbelow, seed_stream


# The game's tension, counted as it is played (Ludii / TAG outcome metrics): the running score
# after each round is looked at once, when the next round begins, so the cost is one compare
# per decision and a few operations per round. ``track`` holds:
T_ROUND, T_LEADER, T_CHANGES = 0, 1, 2      # round being played; last sole leader (-1 none); lead changes
T_DEFICIT = 3                               # per seat: largest deficit to the leader after a round
T_BEHIND = T_DEFICIT + L.MAXP               # per seat: last round after which it did not lead alone
T_REFUSED = T_BEHIND + L.MAXP               # the illegal action a compiled seat chose (ILLEGAL below)
# Where the game was decided (analysis.explain), looked at once a turn and once when the end is
# triggered, so the cost is two compares per decision and a scoring-as-if-ended a few times a game:
T_TURN = T_REFUSED + 1                      # turns played when last looked
T_END = T_TURN + 1                          # the end trigger when last looked (0: not triggered yet)
T_TRIG_LEADER = T_END + 1                   # first in the final scoring's order right after the
T_TRIG_TOTAL = T_TRIG_LEADER + 1            # decision that triggered the end, and per seat its total then
T_FINAL_LEAD = T_TRIG_TOTAL + L.MAXP        # per seat: the leader before its turn after the trigger (-1 none)
T_NOW = T_FINAL_LEAD + L.MAXP               # per seat: scratch totals
# The state in which each card (and tile) was played (analysis: when cards are played): whether
# its seat led when the turn began (as the final scoring would rank the seats had the game ended
# then), whether the end had been triggered, the round. Looked at once a turn (a scoring-as-if-
# ended) and once a play. Per seat, the turns it began leading (the rate to compare with); per
# seat and card (index seat * NTRACK + card, the order of the engine's play counters) the rest:
T_LEADS = T_NOW + L.MAXP                    # whether the seat to move led when its turn began
T_LEAD_TURNS = T_LEADS + 1                  # per seat: turns begun leading
T_PLAY_LEAD = T_LEAD_TURNS + L.MAXP         # plays in turns the seat began leading
T_PLAY_FINAL = T_PLAY_LEAD + L.MAXP * L.NTRACK   # plays made after the end was triggered
T_PLAY_ROUND = T_PLAY_FINAL + L.MAXP * L.NTRACK  # the rounds in which they were played, summed
TRACK_SIZE = T_PLAY_ROUND + L.MAXP * L.NTRACK

ILLEGAL = -1        # what advance returns instead of the legal actions when a seat chose an illegal one


@njit(cache=True, inline="always")
def is_legal(a, legal, k):
    """Whether ``a`` is one of the ``k`` legal actions. Asked only of a compiled strategy's
    choice (a random or forced move is drawn from ``legal``), which costs far more than k
    compares: a planner that valued every action NaN returns -1 (issue 43)."""
    for i in range(k):
        if legal[i] == a:
            return True
    return False


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
def end_triggered(s, R, track):
    """The decision just played triggered the end: note who would win if the game ended now, and
    every seat's total then."""
    track[T_END] = s[L.G_END_TRIGGER]
    track[T_TRIG_LEADER] = E.leader_now(s, R, track, T_TRIG_TOTAL)


@njit(cache=True, inline="always")
def turn_begins(s, R, track):
    """A turn begins: a round that is over is noted (``round_over``); who would win if the game
    ended now, before this seat's turn (after the trigger: where the game was decided; always:
    whether the seat to move leads, the state its card plays are counted in)."""
    track[T_TURN] = s[L.G_NTURNS]
    if s[L.G_ROUND] != track[T_ROUND]:
        round_over(s, track)
    if s[L.G_PHASE] == L.PH_SETUP:
        track[T_TURN] = -1                      # the placements are no turn: look again at the first
        return
    p = s[L.G_CUR]
    leader = E.leader_now(s, R, track, T_NOW)
    track[T_LEADS] = 1 if leads_outright(s, p, track) else 0
    track[T_LEAD_TURNS + p] += track[T_LEADS]
    if s[L.G_END_TRIGGER] != 0:
        track[T_FINAL_LEAD + p] = leader


@njit(cache=True, inline="always")
def leads_outright(s, p, track):
    """Whether seat ``p``'s total at ``T_NOW`` (``leader_now``'s) is above every other seat's: a
    lead on VP, not one of a tie-break (at the start every seat has 0 and a tie-break "leads")."""
    for q in range(s[L.G_NPLAYERS]):
        if q != p and track[T_NOW + q] >= track[T_NOW + p]:
            return False
    return True


@njit(cache=True)
def card_played(s, R, a, track):
    """The seat to move is about to play the card or take the tile of action ``a``: note
    whether it led when its turn began, whether the end has been triggered, and the round."""
    p = s[L.G_CUR]
    i = p * L.NTRACK + (a - L.A_PLAY)
    track[T_PLAY_LEAD + i] += track[T_LEADS]
    if s[L.G_END_TRIGGER] != 0:
        track[T_PLAY_FINAL + i] += 1
    track[T_PLAY_ROUND + i] += s[L.G_ROUND]


@njit(cache=True, inline="always")
def is_play(a):
    """Whether action ``a`` plays a card from hand or takes an instant tile (one block of
    actions, in the engine's play-counter order)."""
    return a >= L.A_PLAY and a < L.A_PLAY + L.NTRACK


@njit(cache=True, inline="always")
def advance(s, R, kinds, W, custom, legal, rs, work, log, steps, track):
    """The one game loop: play forced moves and compiled seats until the game ends or a seat
    whose ``custom`` flag is set must choose (that seat is Python's: evora_sim.mixed).
    Records actions in ``log`` while it has room, and the game's tension in ``track`` (from
    its first step, ``steps`` = 0). Returns (legal actions now in ``legal``, or 0 once the game
    is over, or ``ILLEGAL`` when the seat to move chose an action that is not legal: it is
    never played, and ``track[T_REFUSED]`` holds it; steps so far)."""
    cap = log.shape[0]
    if steps == 0:
        track[:] = 0
        track[T_ROUND] = s[L.G_ROUND]
        track[T_LEADER] = -1
        track[T_TURN] = -1                      # the first turn is looked at too (turn_begins)
        track[T_TRIG_LEADER] = -1
        track[T_FINAL_LEAD:T_FINAL_LEAD + L.MAXP] = -1
    k = E.legal_actions(s, R, legal)
    while k > 0:
        if s[L.G_END_TRIGGER] != track[T_END]:
            end_triggered(s, R, track)
        if s[L.G_NTURNS] != track[T_TURN]:
            turn_begins(s, R, track)
        p = s[L.G_CUR]
        if k == 1:
            a = np.int64(legal[0])            # P5: a forced move asks no strategy
        elif custom[p]:
            return k, steps
        elif kinds[p] == KIND_RANDOM:
            # handled here: every call passing arrays costs atomic reference counts
            a = np.int64(legal[randbelow(rs, k)])
        else:
            a = choose(kinds[p], W, p, s, R, legal, k, rs, work)
            if not is_legal(a, legal, k):
                track[T_REFUSED] = a
                return ILLEGAL, steps
        if steps < cap:
            log[steps] = a
        if is_play(a):
            card_played(s, R, a, track)
        k = E.step(s, R, a, legal)
        steps += 1
    return 0, steps


UNTIL_EFFECT, UNTIL_TURN = 0, 1


@njit(cache=True, _nrt=False)
def play_on(s, R, kinds, W, until, legal, rs, work):
    """Play the seat to move's decisions with its compiled strategy (``kinds``, ``W`` by seat)
    until the effect being resolved is finished (``UNTIL_EFFECT``) or the turn is over
    (``UNTIL_TURN``). The game loop's own steps, stopped early: what a custom strategy's look
    ahead needs (``api.finish``). Returns ``ILLEGAL`` (nothing played) if the strategy chose an
    action that is not legal, else 0."""
    p = s[L.G_CUR]
    turn = s[L.G_NTURNS]
    k = E.legal_actions(s, R, legal)
    while k > 0 and s[L.G_CUR] == p and s[L.G_NTURNS] == turn:
        if until == UNTIL_EFFECT and s[L.G_SP] == 0:
            break
        if k == 1:
            a = np.int64(legal[0])
        elif kinds[p] == KIND_RANDOM:
            a = np.int64(legal[randbelow(rs, k)])
        else:
            a = choose(kinds[p], W, p, s, R, legal, k, rs, work)
            if not is_legal(a, legal, k):
                return ILLEGAL
        k = E.step(s, R, a, legal)
    return 0


@njit(cache=True, inline="always")
def start(s, R, n, seed, rs, work):
    """A new game in ``s``, the strategies' random stream of its seed, and seats' ``work`` with
    nothing kept from an earlier game."""
    E.init_game(s, R, n, seed)
    seed_stream(rs, seed, STRATEGY_STREAM)
    new_game(work)




def buffers(n_players: int, strategies=()):
    """The scratch arrays of the compiled game loop: which seats are custom (none here), the
    legal actions, the strategies' random stream, the seats' work (one tuple; a search tree
    large enough for the largest search budget among ``strategies``), the tension counters."""
    return (np.zeros(n_players, dtype=np.bool_), np.empty(L.N_ACTIONS, dtype=np.int32),
            np.zeros(1, dtype=np.uint64), new_buffers(tree_nodes(strategies), turn_tree_shape(strategies)),
            np.zeros(TRACK_SIZE, dtype=np.int64))


@njit(cache=True)
def record(s, n, g, steps, games, seats, stats, states, track):
    """Row ``g`` of the result arrays from the finished game ``s`` of ``steps`` decisions and
    its ``track``. The last round's standing is the final score: its leader is the winner. An
    end triggered by the game's last decision (or the round limit) was never looked at: the
    standings then are the final ones."""
    w = s[L.G_WINNER]
    if track[T_END] == 0:
        track[T_TRIG_LEADER] = w
        for p in range(n):
            track[T_TRIG_TOTAL + p] = s[L.PLAYERS + p * L.PSTRIDE + L.P_FINAL]
    games[g, 0] = s[L.G_ROUND]
    games[g, 1] = s[L.G_NTURNS]
    games[g, 2] = s[L.G_END_TRIGGER]
    games[g, 3] = w
    games[g, 4] = steps
    games[g, 5] = track[T_CHANGES] + (1 if track[T_LEADER] >= 0 and track[T_LEADER] != w else 0)
    games[g, 6] = track[T_DEFICIT + w]
    games[g, 7] = track[T_BEHIND + w] + 1
    games[g, 8] = s[L.G_END_SEAT]
    games[g, 9] = s[L.G_END_TURN]
    games[g, 10] = track[T_TRIG_LEADER]
    games[g, 11] = s[L.G_LOT]
    for p in range(n):
        b = L.PLAYERS + p * L.PSTRIDE
        for k in range(L.NBREAK):
            seats[g, p, k] = s[b + L.P_VP_BUILD + k]
        seats[g, p, L.NBREAK] = s[b + L.P_FINAL]
        seats[g, p, L.NBREAK + 1] = s[b + L.P_STONES] + s[b + L.P_CAPS]
        seats[g, p, L.NBREAK + 2] = s[b + L.P_TURNS]
        seats[g, p, L.NBREAK + 3] = track[T_TRIG_TOTAL + p]
        seats[g, p, L.NBREAK + 4] = track[T_FINAL_LEAD + p]
        seats[g, p, L.NBREAK + 5] = track[T_LEAD_TURNS + p]
        sb = L.STATS + p * L.SSTRIDE
        for k in range(L.SSTRIDE):
            stats[g, p, k] = s[sb + k]
        for c in range(L.NTRACK):
            i = p * L.NTRACK + c
            states[g, p, 0, c] = track[T_PLAY_LEAD + i]
            states[g, p, 1, c] = track[T_PLAY_FINAL + i]
            states[g, p, 2, c] = track[T_PLAY_ROUND + i]


GAME_COLUMNS = ("rounds", "turns", "end_trigger", "winner_seat", "decisions",
                "lead_changes", "comeback", "winner_led_from",
                "trigger_seat", "trigger_turn", "leader_at_trigger", "tie_lot")
SEAT_COLUMNS = L.BREAKDOWN_NAMES + ("score", "parts_left", "seat_turns", "score_at_trigger",
                                    "leader_before_final_turn", "turns_leading")


@dataclass
class BatchResult:
    """Arrays of one batch: games[g, GAME_COLUMNS], seats[g, p, SEAT_COLUMNS], stats[g, p, SSTRIDE],
    states[g, p, PLAY_STATES, card]."""

    seeds: np.ndarray
    games: np.ndarray
    seats: np.ndarray
    stats: np.ndarray
    states: np.ndarray
    actions: np.ndarray | None = None    # [g, action]: every game's actions, when recorded


def refused(strategies, s, track, steps: int, seed: int) -> StrategyError:
    """The error of a game stopped because the seat to move in ``s`` chose the illegal action
    ``track[T_REFUSED]`` (``advance`` returned ``ILLEGAL``): it names the strategy, the action
    and where, and the game's seed, so the game can be replayed."""
    p = int(s[L.G_CUR])
    return StrategyError(
        f"strategy {strategies[p].name!r} (seat {p}) chose action {int(track[T_REFUSED])}, which is not legal, "
        f"at decision {steps + 1} of the game with seed {seed}; the game was stopped, nothing of it is kept")


def seat_strategies(n_players: int, strategies) -> list:
    """One strategy object per seat from built-in ids, spec strings (``greedy``,
    ``balanced(column=2)``, ``FILE.toml:NAME``, ``FILE.py:NAME``) or strategy objects."""
    items = list(np.asarray(strategies).tolist()) if isinstance(strategies, np.ndarray) else list(strategies)
    if len(items) != n_players:
        raise ValueError(f"need one strategy per seat ({n_players}), got {len(items)}")
    return [as_strategy(x) for x in items]


def new_result(seeds: np.ndarray, n_players: int) -> BatchResult:
    g = seeds.shape[0]
    return BatchResult(seeds, np.zeros((g, len(GAME_COLUMNS)), dtype=np.int32),
                       np.zeros((g, n_players, len(SEAT_COLUMNS)), dtype=np.int32),
                       np.zeros((g, n_players, L.SSTRIDE), dtype=np.int32),
                       np.zeros((g, n_players, len(PLAY_STATES), L.NTRACK), dtype=np.int32))



def search_notes(work) -> list[dict]:
    """What each search decision of a game saw, in order: the turn, the seat, how many actions
    its root searched, and the most visited (action, visits, the seat's mean reward)."""
    why, count = searched(work[1])
    out = []
    for row in why[:count]:
        top = [(int(row[3 + 3 * j]), int(row[4 + 3 * j]), float(row[5 + 3 * j]))
               for j in range(WHY_TOP) if row[3 + 3 * j] >= 0]
        out.append({"turn": int(row[0]), "seat": int(row[1]), "actions": int(row[2]), "top": top})
    return out
