"""Readable turn-by-turn logs of a played game, and the final scoring table.

``replay_lines`` plays a seeded game with the compiled batch driver (the exact game a batch
plays), then re-steps its action log through :mod:`evora_sim.api`. What each decision changed
is found by diffing the state array before and after it, so the log reports what the engine
did and re-implements no rule. ``scoring_lines`` is the table ``evora score`` and
``evora replay`` both print.

Everything here is a pure function of its arguments: same arguments, same lines.
"""
from __future__ import annotations

import numpy as np

from . import api
from . import batch, gameloop
from . import engine as E
from . import layout as L
from .names import END_TITLES, effect_title, tile_title, type_title
from .position import scoring_table
from .rules import Rules, switch_value
from .savegame import GAME_SIZE


class ReplayError(RuntimeError):
    """The re-stepped game does not match the game the batch driver played (a bug, not input)."""


# running VP categories (scored during play), in the order of the P_VP_* slots
RUNNING_VP = (("build", L.P_VP_BUILD), ("white stones", L.P_VP_WHITE),
              ("empty stack", L.P_VP_EMPTY), ("cards", L.P_VP_CARDS))

# columns of the scoring table: header, key of position.scoring_table's seat rows
TABLE_COLUMNS = (("in-game", "vp"), ("emperor", "emperor"), ("col.maj", "column_majority"),
                 ("h1", "height_1"), ("h2", "height_2"), ("h3", "height_3"), ("h4", "height_4"),
                 ("capitals", "capitals"), ("total", "total"), ("parts left", "parts_left"))
TABLE_LEGEND = ("in-game: VP scored during play; emperor: Emperor tile bonus; col.maj: column "
                "majority workers; h1-h4, capitals: height majorities")


# ---------------------------------------------------------------------------------------------
# the scoring table
# ---------------------------------------------------------------------------------------------
def scoring_lines(table: dict, strategies: list[str] | None = None) -> list[str]:
    """The final scoring ``table`` (``position.scoring_table`` form) as aligned text lines."""
    seats = table["seats"]
    columns = list(TABLE_COLUMNS)
    legend = TABLE_LEGEND
    if seats and "start_vp" in seats[0]:       # a variant's starting VP (players.start_vp)
        columns.insert(-2, ("start", "start_vp"))
        legend += "; start: VP the seat started with (variant key players.start_vp)"
        if any(_has_half(row) for row in seats):
            legend += ", x.5: x VP in the total and a half point that breaks ties on VP (V2)"
    header = ["seat"] + (["strategy"] if strategies else []) + [h for h, _ in columns]
    rows = []
    for row in seats:
        cells = [str(row["seat"])]
        if strategies:
            cells.append(strategies[row["seat"]])
        cells += [str(row[key]) for _, key in columns]
        rows.append(cells)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    text_cols = {1} if strategies else set()

    def fmt(cells):
        out = [c.ljust(w) if i in text_cols else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(out).rstrip()

    lines = ["Final scoring", fmt(header)] + [fmt(r) for r in rows] + [f"({legend})"]
    lines.append(winner_line(table, strategies))
    return lines


def winner_line(table: dict, strategies: list[str] | None = None) -> str:
    w = table["winner"]
    seats = table["seats"]
    if not 0 <= w < len(seats):
        return "Winner: none (the game is not scored)"
    who = f"seat {w}" + (f" ({strategies[w]})" if strategies else "")
    total = seats[w]["total"]
    line = f"Winner: {who} with {total} VP"
    tied = [r for r in seats if r["total"] == total and r["seat"] != w]
    if tied:
        by_half = [r for r in tied if _has_half(r) != _has_half(seats[w])]
        rest = ("lot: the tied seats share the victory (V4)" if table.get("shared_victory") else
                "fewer parts left, then later in turn order")
        why = ("the half point of its starting VP (V2)" if len(by_half) == len(tied) else
               f"the half point of its starting VP (V2), then {rest}" if by_half else rest)
        line += f" (tied on VP with seat {', '.join(str(r['seat']) for r in tied)}; decided by {why})"
    return line


def _has_half(row: dict) -> bool:
    """Whether a scoring table's seat row starts with V2's half point (start_vp x.5)."""
    return row.get("start_vp", 0) != int(row.get("start_vp", 0))


# ---------------------------------------------------------------------------------------------
# what one action changed
# ---------------------------------------------------------------------------------------------
def _pb(p: int) -> int:
    return L.PLAYERS + p * L.PSTRIDE


def _space(rules: Rules, x: int) -> str:
    return rules.space_name(x) if 0 <= x < rules.n_spaces else str(x)


def _owner(o: int) -> str:
    return "white" if o == L.WHITE else ("nobody" if o < 0 else f"seat {o}")


def _hand(k: int) -> str:
    return f"hand: {k} card" + ("" if k == 1 else "s")


def _cards(effects: list[int]) -> str:
    return ", ".join(effect_title(e) for e in effects)


def change_lines(rules: Rules, b: np.ndarray, a: np.ndarray, action: int) -> list[str]:
    """What changed from state ``b`` to state ``a`` when the current player of ``b`` took
    ``action``: one readable line per change, in a fixed order."""
    R = rules.packed
    p = int(b[L.G_CUR])
    n = int(b[L.G_NPLAYERS])
    out: list[str] = []

    # the Construction Site: workers and the Centurion
    for q in range(n):
        for k in range(2):
            w0, w1 = int(b[_pb(q) + L.P_WPOS + k]), int(a[_pb(q) + L.P_WPOS + k])
            if w0 != w1:
                if w0 < 0:
                    out.append(f"seat {q} worker {k} placed on space {_space(rules, w1)}")
                else:
                    out.append(f"seat {q} worker {k}: space {_space(rules, w0)} -> space {_space(rules, w1)}")
    c0, c1 = int(b[L.G_CENT_POS]), int(a[L.G_CENT_POS])
    if c0 != c1:
        out.append(f"Centurion: space {_space(rules, c0)} -> space {_space(rules, c1)}")

    # cards: drawn from the stacks, used from the Temple, played, paid, joining the hand
    for t in range(L.NTYPES):
        top0, top1 = int(b[L.STACK_TOP + t]), int(a[L.STACK_TOP + t])
        left = int(a[L.STACK_LEN + t]) - top1
        for i in range(top0, top1):
            e = int(a[L.STACK_CARDS + t * L.MAXSTACK + i])
            out.append(f"seat {p} draws {effect_title(e)} from the {type_title(t)} stack "
                       f"({left} left)")
    sb0 = L.STATS + p * L.SSTRIDE
    for e in range(L.NEFF):
        if a[sb0 + L.S_TEMPLE_USES + e] > b[sb0 + L.S_TEMPLE_USES + e]:
            out.append(f"seat {p} uses the Temple card {effect_title(e)}")
    for t in range(L.NITILE):
        if a[L.ITILE_AVAIL + t] < b[L.ITILE_AVAIL + t]:       # a bit cleared (P11: the Temple's or its own)
            out.append(f"seat {p} takes the instant tile {tile_title(t)}")
    end_of_turn = []          # drawn cards join the hand when the turn ends: said after the turn's events
    for q in range(n):
        gone, joined = [], []
        for e in range(L.NEFF):
            d = int(a[_pb(q) + L.P_HAND + e]) - int(b[_pb(q) + L.P_HAND + e])
            gone += [e] * max(-d, 0)
            joined += [e] * max(d, 0)
        hand = int(a[_pb(q) + L.P_HANDN])
        if gone:
            if L.A_PLAY <= action < L.A_TILE:
                verb = "plays"
            elif L.A_DISCARD <= action < L.A_SITE:
                verb = "pays"
            else:
                verb = "gives up"
            out.append(f"seat {q} {verb} {_cards(gone)} ({_hand(hand)})")
        if joined:
            end_of_turn.append(f"turn over: seat {q}'s drawn cards join the hand: {_cards(joined)} ({_hand(hand)})")

    # Emperor tiles
    for q in range(n):
        for k in range(2):
            pos0, pos1 = int(b[_pb(q) + L.P_TPOS + k]), int(a[_pb(q) + L.P_TPOS + k])
            v0, v1 = int(b[_pb(q) + L.P_TVAL + k]), int(a[_pb(q) + L.P_TVAL + k])
            if pos0 != pos1:
                value = int(R[L.R_EMP_VALUES + v1])
                where = f"beside column {pos1}" if pos1 >= 0 else "back to supply"
                out.append(f"seat {q} places Emperor tile {k} (value {value}) {where}")
            if v0 != v1:
                where = f"beside column {pos1}" if pos1 >= 0 else "in supply"
                out.append(f"seat {q} flips Emperor tile {k} ({where}): value "
                           f"{int(R[L.R_EMP_VALUES + v0])} -> {int(R[L.R_EMP_VALUES + v1])}")

    # parts placed in the Temple, then the majority workers they moved
    placed_in = []
    for c in range(int(a[L.G_NCOLS])):
        h0, h1 = int(b[L.COL_H + c]), int(a[L.COL_H + c])
        base = L.COL_PART + c * L.COLPARTS
        for h in range(min(h0, h1)):
            if b[base + h] != a[base + h]:
                out.append(f"column {c}, height {h + 1}: part of {_owner(int(b[base + h]))} "
                           f"replaced by {_owner(int(a[base + h]))}")
        for h in range(h0, h1):
            o = int(a[base + h])
            if h == 4:
                out.append(f"column {c}: capital of seat {o} on top (+{int(R[L.R_HEIGHT_VP + 5])} VP)")
            elif o == L.WHITE:
                out.append(f"column {c}: white stone at height {h + 1}, placed by seat {p} "
                           f"(+{int(R[L.R_WHITE_VP])} VP)")
            else:
                out.append(f"column {c}: stone of seat {o} at height {h + 1} "
                           f"(+{int(R[L.R_HEIGHT_VP + h + 1])} VP)")
        if h1 < h0:
            out.append(f"column {c}: {h0 - h1} part(s) removed")
        if h1 != h0:
            placed_in.append(c)
    for c in range(int(a[L.G_NCOLS])):
        o, m = int(b[L.COL_HOLDER + c]), int(a[L.COL_HOLDER + c])
        if o != m:
            if o >= 0:
                out.append(f"majority worker of seat {o} leaves column {c} "
                           f"(seat {o} has {int(a[_pb(o) + L.P_WORKERS])} in supply)")
            if m >= 0:
                out.append(f"seat {m} places a majority worker on column {c} "
                           f"({int(a[_pb(m) + L.P_WORKERS])} left in supply)")
    for c in placed_in:
        leader = int(E.column_leader(a, R, c))
        if a[L.COL_HOLDER + c] < 0 and leader != int(E.column_leader(b, R, c)):
            if leader == L.WHITE:
                out.append(f"column {c}: white leads it, so no majority worker stands on it")
            elif leader >= 0:
                out.append(f"column {c}: seat {leader} leads it but has no majority worker left")

    # VP scored during play, per seat and category
    for q in range(n):
        parts = []
        for name, slot in RUNNING_VP:
            d = int(a[_pb(q) + slot]) - int(b[_pb(q) + slot])
            if d:
                parts.append(f"{d:+d} VP {name}")
        if parts:
            out.append(f"seat {q}: {', '.join(parts)} (score {int(a[_pb(q) + L.P_SCORE])})")

    out += end_of_turn

    # the end of the game
    if not b[L.G_END_TRIGGER] and a[L.G_END_TRIGGER]:
        out.append(f"END TRIGGER: {end_trigger_text(rules, a)}; {after_trigger_text(rules, a)}")
    return out


# What follows the end trigger under each value of end.after_trigger (V3); the round limit (P4)
# ends the game at once whatever the value.
AFTER_TRIGGER = {"finish_round": "the round is played to its end",
                 "finish_turn": "the game ends with this turn (end.after_trigger = finish_turn, V3)",
                 "one_more_turn": "every player plays one more turn, this seat last "
                                  "(end.after_trigger = one_more_turn, V3)"}
# How the workers go onto the Construction Site under each value of setup.placement_order (V5).
PLACEMENT = {"seat_order": "workers placed in seat order",
             "reverse": "workers placed in reverse seat order, the last seat first "
                        "(setup.placement_order = reverse, V5)"}


def after_trigger_text(rules: Rules, s: np.ndarray) -> str:
    """What the rules in force play after the end was triggered in ``s``."""
    if int(s[L.G_END_TRIGGER]) == L.END_ROUND_LIMIT:
        return "the game ends here"
    return AFTER_TRIGGER[switch_value(rules, "end.after_trigger")]


def end_trigger_text(rules: Rules, s: np.ndarray) -> str:
    trig = int(s[L.G_END_TRIGGER])
    seat = int(s[L.G_END_SEAT])
    if trig == L.END_TEMPLE_FULL:
        return f"{END_TITLES['temple_full']} (every column space holds 4 stones; the last part was placed by seat {seat})"
    if trig == L.END_OUT_OF_STONES:
        return f"{END_TITLES['out_of_stones']} (seat {seat})"
    if trig == L.END_ROUND_LIMIT:
        return f"round limit (round {int(rules.packed[L.R_MAX_ROUNDS])} reached; a simulation safeguard, not a rule)"
    return END_TITLES[L.END_NAMES[trig]] if 0 <= trig < len(L.END_NAMES) else f"end trigger {trig}"


# ---------------------------------------------------------------------------------------------
# the turn-by-turn log
# ---------------------------------------------------------------------------------------------
def _top_frame(s: np.ndarray) -> tuple[int, int]:
    """(kind, first argument) of the pending-effect frame on top, or (0, 0)."""
    sp = int(s[L.G_SP])
    if not sp:
        return 0, 0
    f = L.FRAMES + (sp - 1) * L.FW
    return int(s[f]), int(s[f + 1])


def search_line(state: api.State, note: dict) -> str:
    """A search decision's most visited actions, with their visits and the seat's mean reward."""
    if note["actions"] == 1:
        return "search: every choice here is alike (equal columns); not searched"
    if note["actions"] == 0:
        return "search: follows the turn it chose (not searched again)"
    if note["actions"] < 0:                       # root=turn: whole turns, each by its first decision
        top = "; ".join(f"{api.describe_action(state, a)} ... ({v:,} visits, mean reward {q:.3f})"
                        for a, v, q in note["top"])
        return f"search of {-note['actions']} candidate turns, most visited: {top}"
    top = "; ".join(f"{api.describe_action(state, a)} ({v:,} visits, mean reward {q:.3f})"
                    for a, v, q in note["top"])
    return f"search of {note['actions']} distinct actions, most visited: {top}"


def replay_lines(rules: Rules, n_players: int, seed: int, strategies: list,
                 decision_timeout: float | None = None) -> list[str]:
    """Play the seeded game and return its readable log, ending with the final scoring table.
    ``strategies``: one per seat (built-in ids, spec strings or strategy objects)."""
    n = api.check_players(n_players)
    seats = gameloop.seat_strategies(n, strategies)
    names = [x.name for x in seats]
    state = api.new_game(rules, n, seed)          # checks the seed before anything is played
    notes: list[dict] = []
    final, log = batch.play_game(rules, n, seed, seats, decision_timeout=decision_timeout, notes=notes)
    searching = [bool(getattr(x, "search", ())) for x in seats]

    meta = rules.data.get("meta", {})
    lines = [f"Evora replay: {n} players, seed {seed}, rules {str(meta.get('name', '?'))!r} "
             f"(hash {rules.hash})",
             "Seats: " + ", ".join(f"{p} {names[p]}" for p in range(n)),
             "(decisions marked 'forced' had a single legal action)",
             ""]
    turn_key = None
    tile_pay = None          # [cards owed, cards paid] while an instant tile is being paid
    for i, action in enumerate(log):
        action = int(action)
        arr = state.arr
        legal = api.legal_actions(state)
        p = int(arr[L.G_CUR])
        if arr[L.G_PHASE] == L.PH_SETUP:
            if turn_key != "setup":
                lines.append("Setup: " + PLACEMENT[switch_value(rules, "setup.placement_order")])
                turn_key = "setup"
            who = f"seat {p} ({names[p]}) "
        else:
            key = (int(arr[L.G_NTURNS]), p)
            if key != turn_key:
                lines.append("")
                lines.append(f"Round {int(arr[L.G_ROUND])}, seat {p} ({names[p]}), "
                             f"turn {int(arr[L.G_NTURNS]) + 1}")
                turn_key = key
            who = ""
        forced = " (forced)" if len(legal) == 1 else ""
        lines.append(f"  {who}[{api.decision_name(state)}] {api.describe_action(state, action)}{forced}")
        if searching[p] and len(legal) > 1 and notes:
            lines.append("    " + search_line(state, notes.pop(0)))
        before = arr.copy()
        api.apply_action(state, action)
        changes = change_lines(rules, before, state.arr, action)
        if action == L.A_SITE and not changes and not state.arr[L.G_SP]:
            k = int(before[L.G_MOVED])                    # the worker moved this turn
            x = int(before[_pb(p) + L.P_WPOS + k]) if k >= 0 else -1
            where = f"space {_space(rules, x)}" if x >= 0 else "the space"
            changes = [f"the action of {where} does nothing: nothing it offers can be done now"]
        lines += ["    " + c for c in changes]
        if int(state.arr[L.G_ROUND]) != int(before[L.G_ROUND]) and before[L.G_PHASE] != L.PH_SETUP:
            lines.append(f"  Scores after round {int(before[L.G_ROUND])}: " + ", ".join(
                f"seat {q} {int(state.arr[_pb(q) + L.P_SCORE])}" for q in range(n)))
        # the cards paid for an instant tile, counted against the cards the engine asked for
        kind, owed = _top_frame(state.arr)
        if L.A_TILE <= action < L.A_DISCARD:
            tile_pay = [owed if kind == L.F_DISCARD else 0, 0]
        elif tile_pay is not None:
            tile_pay[1] += L.A_DISCARD <= action < L.A_SITE
            if kind != L.F_DISCARD:
                if tile_pay[1] < tile_pay[0]:
                    lines.append(f"    note: only {tile_pay[1]} of the {tile_pay[0]} cards were paid "
                                 f"for the tile (no card in hand could be paid next)")
                tile_pay = None
        if api.is_terminal(state) and i != len(log) - 1:
            raise ReplayError(f"the game ended after decision {i + 1} of {len(log)}")

    if not api.is_terminal(state):
        raise ReplayError(f"the action log of {len(log)} decisions does not reach the end of the game")
    if not np.array_equal(state.arr[:GAME_SIZE], final[:GAME_SIZE]):     # scratch space ignored
        diff = np.flatnonzero(state.arr[:GAME_SIZE] != final[:GAME_SIZE])
        raise ReplayError(f"re-stepped game differs from the batch driver's at state offsets {diff[:10].tolist()}")
    s = state.arr
    lines += ["",
              f"Game over after round {int(s[L.G_ROUND])}: end trigger {end_trigger_text(rules, s)}; "
              f"{int(s[L.G_NTURNS])} turns, {len(log)} decisions",
              ""]
    lines += scoring_lines(scoring_table(state), names)
    return lines


__all__ = ["ReplayError", "scoring_lines", "winner_line", "change_lines", "end_trigger_text",
           "after_trigger_text", "replay_lines"]
