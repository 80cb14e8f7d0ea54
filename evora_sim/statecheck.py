"""Whether an int32 array is a game state the compiled engine can play safely.

The engine reads its state without bounds checks (that is what makes it fast): a state array
from outside (a save file) must therefore be checked field by field before the engine sees it.
:func:`state_problem` checks every field of the game prefix against the range the rules allow,
the slots a game of this size never uses against a fresh game's, and what the fields say about
each other (each part's owner and the column heights, the per-height counts, the workers and the
Centurion on the site, the Emperor tiles beside their columns, the stacks, the hands, the pending
effects). It returns the first problem in words, or None.
"""
from __future__ import annotations

import numpy as np

from . import engine as E
from . import layout as L

MAX_COUNT = 10_000_000          # turns, rounds and per-game statistics: far above any game
# VP scored during play, per seat: far above any game (a few hundred at most), far enough below
# 2**31 that the final scoring adds its categories without leaving 32 bits.
MAX_VP = 1_000_000


def _fresh(rules, n: int) -> np.ndarray:
    s = E.new_state()
    E.init_game(s, rules.packed, n, 0)
    return s


def _range(s, i, lo, hi, what):
    v = int(s[i])
    if not lo <= v <= hi:
        raise _Bad(f"{what} is {v}, expected {lo} to {hi}")
    return v


class _Bad(Exception):
    pass


def state_problem(arr: np.ndarray, rules) -> str | None:
    """The first reason the game prefix of ``arr`` is not a playable state, or None."""
    try:
        _check(np.asarray(arr, dtype=np.int64), rules)
    except _Bad as exc:
        return str(exc)
    return None


def _check(s, rules) -> None:
    d = rules.data
    n = _range(s, L.G_NPLAYERS, d["players"]["min"], d["players"]["max"], "the player count")
    nsp, ncol = rules.n_spaces, rules.columns(n)
    workers = d["players"]["workers_on_site"][str(n)]
    copies = d["cards"]["copies"]
    sup = d["supply"]
    for i, want, what in ((L.G_NSPACES, nsp, "the number of site spaces"),
                          (L.G_NCOLS, ncol, "the number of columns")):
        if int(s[i]) != want:
            raise _Bad(f"{what} is {int(s[i])}, these rules have {want}")
    _unused_as_fresh(s, _fresh(rules, n), n, nsp, ncol, 3 * copies)
    phase = _range(s, L.G_PHASE, 0, len(L.PHASE_NAMES) - 1, "the phase")
    _range(s, L.G_CUR, 0, n - 1, "the current player")
    _range(s, L.G_ROUND, 0, d["limits"]["max_rounds"] + 1, "the round")
    _range(s, L.G_END_TRIGGER, 0, len(L.END_NAMES) - 1, "the end trigger")
    _range(s, L.G_END_SEAT, -1, n - 1, "the seat that triggered the end")
    _range(s, L.G_WINNER, -1, n - 1, "the winner")
    cent = _range(s, L.G_CENT_POS, 0, nsp - 1, "the Centurion's space")
    _range(s, L.G_WHITE_LEFT, 0, sup["white_stones"], "the white stones left")
    _range(s, L.G_MOVED, -1, workers - 1, "the worker moved")
    _range(s, L.G_CARD_SPACE, L.CARD_AT_CENTURION, nsp - 1, "the card space")
    _range(s, L.G_CARD_PLAYED, 0, 1, "the card-played flag")
    _range(s, L.G_SETUP_DONE, 0, n * workers, "the workers placed in setup")
    _range(s, L.G_TRACK, -1, L.NTRACK - 1, "the card being resolved")
    _range(s, L.G_TRACK_SCORE0, 0, MAX_VP, "the score when the card began")
    sp = _range(s, L.G_SP, 0, L.MAXDEPTH, "the pending effects")
    turns = _range(s, L.G_NTURNS, 0, MAX_COUNT, "the turns played")
    _range(s, L.G_END_TURN, -1, turns, "the turn the end was triggered in")
    _lot(s, n, rules)
    _columns(s, n, ncol, sup)
    _site(s, n, nsp, cent, workers, phase, rules)
    _players(s, n, ncol, nsp, workers, rules, sup, d)
    _stacks(s, _stack_counts(rules))
    _tiles(s, rules)
    for f in range(sp):
        _frame(s, L.FRAMES + f * L.FW, f, ncol)
    for i in range(L.STATS, L.SCRATCH):
        _range(s, i, 0, MAX_COUNT, f"statistic {i - L.STATS}")
    if phase != L.PH_TERMINAL:
        legal = np.zeros(L.N_ACTIONS, dtype=np.int32)
        probe = np.zeros(L.STATE_SIZE, dtype=np.int32)
        probe[:L.SCRATCH] = s[:L.SCRATCH]
        if E.legal_actions(probe, rules.packed, legal) < 1:
            raise _Bad("the game is not over, but no action is legal")


def _unused_as_fresh(s, fresh, n, nsp, ncol, stack_len) -> None:
    """Slots a game of this size never uses must hold what a new game holds."""
    regions = [(L.SITE + nsp, L.SITE + L.MAXS, "site space"),
               (L.COL_H + ncol, L.COL_H + L.MAXC, "column height"),
               (L.COL_PART + ncol * L.COLPARTS, L.COL_PART + L.MAXC * L.COLPARTS, "column part"),
               (L.COL_HOLDER + ncol, L.COL_HOLDER + L.MAXC, "column holder"),
               (L.COL_TILE + ncol, L.COL_TILE + L.MAXC, "column tile"),
               (L.PLAYERS + n * L.PSTRIDE, L.PLAYERS + L.MAXP * L.PSTRIDE, "seat"),
               (L.STATS + n * L.SSTRIDE, L.STATS + L.MAXP * L.SSTRIDE, "statistic")]
    regions += [(L.STACK_CARDS + t * L.MAXSTACK + stack_len, L.STACK_CARDS + (t + 1) * L.MAXSTACK, "stack card")
                for t in range(L.NTYPES)]
    for lo, hi, what in regions:
        bad = np.nonzero(s[lo:hi] != fresh[lo:hi])[0]
        if len(bad):
            raise _Bad(f"unused {what} slot {int(bad[0])} holds {int(s[lo + bad[0]])}")
    for i in (L.STACK_LEN + t for t in range(L.NTYPES)):
        if s[i] != fresh[i]:
            raise _Bad(f"a stack has {int(s[i])} cards, these rules make {int(fresh[i])}")


def _columns(s, n, ncol, sup) -> None:
    whites, stones, caps = 0, [0] * n, [0] * n
    for c in range(ncol):
        h = _range(s, L.COL_H + c, 0, 5, f"column {c}'s height")
        for k in range(L.COLPARTS):
            i = L.COL_PART + c * L.COLPARTS + k
            v = int(s[i])
            if k < min(h, 4):
                if not (0 <= v < n or v == L.WHITE):
                    raise _Bad(f"column {c}, part {k} has owner {v}, expected a seat or white")
                whites += v == L.WHITE
                if v != L.WHITE:
                    stones[v] += 1
            elif k == 4 and h == 5:
                if not 0 <= v < n:
                    raise _Bad(f"column {c}'s capital has owner {v}, expected a seat")
                caps[v] += 1
            elif v != L.EMPTY:
                raise _Bad(f"column {c} is {h} high but part {k} has owner {v}")
        _range(s, L.COL_HOLDER + c, -1, n - 1, f"column {c}'s majority holder")
        tile = int(s[L.COL_TILE + c])
        if tile != -1 and not 0 <= tile < 2 * n:
            raise _Bad(f"column {c}'s Emperor tile is {tile}, expected -1 or seat * 2 + tile")
    if whites + int(s[L.G_WHITE_LEFT]) != sup["white_stones"]:
        raise _Bad(f"{whites} white stones placed and {int(s[L.G_WHITE_LEFT])} left, the Quarry has "
                   f"{sup['white_stones']}")
    for p in range(n):
        b = L.PLAYERS + p * L.PSTRIDE
        if stones[p] + int(s[b + L.P_STONES]) != sup["stones"] or caps[p] + int(s[b + L.P_CAPS]) != sup["capitals"]:
            raise _Bad(f"seat {p}'s parts placed and left do not add up to its supply")
    counts = np.zeros(L.STATE_SIZE, dtype=np.int32)
    counts[:L.SCRATCH] = s[:L.SCRATCH]
    E.count_heights(counts)
    if not np.array_equal(counts[L.H_COUNT:L.H_COUNT + 5 * L.NOWNERS], s[L.H_COUNT:L.H_COUNT + 5 * L.NOWNERS]):
        raise _Bad("the per-height part counts do not match the columns")


def _site(s, n, nsp, cent, workers, phase, rules) -> None:
    expected = np.full(nsp, L.EMPTY, dtype=np.int64)
    expected[cent] = L.OCC_CENTURION
    for p in range(n):
        b = L.PLAYERS + p * L.PSTRIDE
        for k in range(2):
            x = int(s[b + L.P_WPOS + k])
            if k >= workers and x != -1:
                raise _Bad(f"seat {p} has no worker {k}, but it stands on space {x}")
            if x == -1:
                continue
            if not 0 <= x < nsp or expected[x] != L.EMPTY:
                raise _Bad(f"seat {p}'s worker {k} stands on space {x}, which is not a free space")
            expected[x] = p * 2 + k
    _setup_progress(s, n, workers, phase, rules.packed)
    got = s[L.SITE:L.SITE + nsp]
    if not np.array_equal(got, expected):
        x = int(np.nonzero(got != expected)[0][0])
        raise _Bad(f"site space {x} holds {int(got[x])}, but the workers and the Centurion say {int(expected[x])}")


def _lot(s, n, rules) -> None:
    """V4's lot: a permutation of the seats under a shared victory, else nothing."""
    lot = int(s[L.G_LOT])
    places = sorted((lot >> (2 * p)) & 3 for p in range(n))
    if rules.shared_victory and (lot >> (2 * n) or places != list(range(n))):
        raise _Bad(f"the lot of a shared victory is {lot}, which orders no {n} seats")
    if not rules.shared_victory and lot:
        raise _Bad(f"the lot is {lot}, but these rules share no victory (end.tie_break)")


def _setup_progress(s, n, workers, phase, R) -> None:
    """Setup places workers in seat order (or the reverse, V5), first workers first, and no worker
    ever leaves the site: so the count of placed workers fixes which workers stand, whose turn it
    is, and the phase."""
    done, total = int(s[L.G_SETUP_DONE]), n * workers
    if phase == L.PH_SETUP:
        if done >= total:
            raise _Bad(f"the game is in setup, but all {total} workers are placed")
        nxt = int(E.setup_seat(R, done, n))
        if int(s[L.G_CUR]) != nxt:
            raise _Bad(f"setup has placed {done} workers, so seat {nxt} places next, not seat {int(s[L.G_CUR])}")
        if int(s[L.G_ROUND]) != 0:
            raise _Bad(f"the game is in setup, but the round is {int(s[L.G_ROUND])}")
    elif done != total:
        raise _Bad(f"the game is past setup, but {done} of {total} workers were placed")
    moved = int(s[L.G_MOVED])
    if phase == L.PH_CHOOSE_WORKER and workers < 2:
        raise _Bad(f"the game waits for a choice of worker, but each seat has {workers} worker here")
    if phase in (L.PH_SETUP, L.PH_CHOOSE_WORKER) and moved != -1:
        raise _Bad(f"no worker has moved yet in the {L.PHASE_NAMES[phase]} phase, but the worker moved is {moved}")
    if phase in (L.PH_MOVE, L.PH_MAIN, L.PH_AFTER) and moved == -1:
        raise _Bad(f"the {L.PHASE_NAMES[phase]} phase needs the worker that moves, but none is set")
    for p in range(n):
        for k in range(workers):
            placed = k * n + int(E.setup_seat(R, p, n)) < done
            stands = int(s[L.PLAYERS + p * L.PSTRIDE + L.P_WPOS + k]) != -1
            if placed != stands:
                raise _Bad(f"seat {p}'s worker {k} {'stands' if stands else 'is missing'}, but setup has "
                           f"placed {done} workers")


def _stack_counts(rules) -> list[set[tuple[int, int, int]]]:
    """Per stack, the copies of its 3 effects it may hold: ``cards.copies`` each, or with an
    effect removed (P12) none of it and its copies split between the other two."""
    copies = rules.data["cards"]["copies"]
    removed = int(rules.packed[L.R_REMOVE])
    out = [{(copies,) * 3} for _ in range(L.NTYPES)]
    if 0 <= removed < L.NEFF:
        t, k = divmod(removed, 3)
        more, less = copies + (copies + 1) // 2, copies + copies // 2
        splits = set()
        for a, b in ((more, less), (less, more)):
            counts = [0, 0, 0]
            counts[(k + 1) % 3], counts[(k + 2) % 3] = a, b
            splits.add(tuple(counts))
        out[t] = splits
    return out


def _most_copies(rules, seat: int) -> list[int]:
    """Per effect, the most cards of it ``seat`` can hold: every copy in the stacks (P12 may
    add some), and one more if it is the seat given that effect (P11)."""
    most = [max(c[e % 3] for c in _stack_counts(rules)[e // 3]) for e in range(L.NEFF)]
    give = int(rules.packed[L.R_GIVE])
    if 0 <= give < L.NEFF and seat == int(rules.packed[L.R_GIVE_SEAT]):
        most[give] += 1
    return most


def _tiles(s, rules) -> None:
    """Each instant tile: in the Temple (unless removed, P12), and held by the seat given it
    (P11); no other bit."""
    give, seat, removed = (int(rules.packed[i]) for i in (L.R_GIVE, L.R_GIVE_SEAT, L.R_REMOVE))
    for t in range(L.NITILE):
        allowed = 0 if removed == L.NEFF + t else L.TILE_PUBLIC
        if give == L.NEFF + t:
            allowed |= 2 << seat
        v = int(s[L.ITILE_AVAIL + t])
        if v & ~allowed:
            raise _Bad(f"bonus tile {t} is {v}, expected a subset of the bits {allowed}")


def _players(s, n, ncol, nsp, workers, rules, sup, d) -> None:
    for p in range(n):
        most = _most_copies(rules, p)
        b = L.PLAYERS + p * L.PSTRIDE
        who = f"seat {p}'s"
        _range(s, b + L.P_SCORE, 0, MAX_VP, f"{who} score")
        _range(s, b + L.P_STONES, 0, sup["stones"], f"{who} stones left")
        _range(s, b + L.P_CAPS, 0, sup["capitals"], f"{who} capitals left")
        _range(s, b + L.P_WORKERS, 0, sup["workers"], f"{who} majority workers")
        _range(s, b + L.P_TURNS, 0, MAX_COUNT, f"{who} turns")
        for k in range(2):
            c = _range(s, b + L.P_TPOS + k, -1, ncol - 1, f"{who} Emperor tile {k}")
            if c >= 0 and int(s[L.COL_TILE + c]) != p * 2 + k:
                raise _Bad(f"{who} Emperor tile {k} is beside column {c}, which does not hold it")
            _range(s, b + L.P_TVAL + k, 0, 1, f"{who} Emperor tile {k}'s side")
        hand = [_range(s, b + L.P_HAND + e, 0, most[e], f"{who} cards of effect {e}") for e in range(L.NEFF)]
        if int(s[b + L.P_HANDN]) != sum(hand):
            raise _Bad(f"{who} hand size is {int(s[b + L.P_HANDN])}, its cards add up to {sum(hand)}")
        for e in range(L.NEFF):
            _range(s, b + L.P_PENDING + e, 0, most[e], f"{who} pending cards of effect {e}")
        for i in range(L.P_VP_BUILD, L.P_FINAL + 1):
            _range(s, b + i, 0, MAX_VP, f"{who} VP slot {i - L.P_VP_BUILD}")
    for c in range(ncol):
        tile = int(s[L.COL_TILE + c])
        if tile >= 0 and int(s[L.PLAYERS + (tile // 2) * L.PSTRIDE + L.P_TPOS + tile % 2]) != c:
            raise _Bad(f"column {c} holds seat {tile // 2}'s Emperor tile {tile % 2}, which is elsewhere")


def _stacks(s, counts) -> None:
    for t in range(L.NTYPES):
        m = int(s[L.STACK_LEN + t])
        _range(s, L.STACK_TOP + t, 0, m, f"stack {t}'s top")
        cards = s[L.STACK_CARDS + t * L.MAXSTACK:L.STACK_CARDS + t * L.MAXSTACK + m]
        if ((cards < 3 * t) | (cards > 3 * t + 2)).any() or \
                tuple(int(x) for x in np.bincount(cards - 3 * t, minlength=3)) not in counts[t]:
            want = " or ".join("/".join(map(str, c)) for c in sorted(counts[t]))
            raise _Bad(f"stack {t} does not hold its 3 effects' cards as these rules deal them ({want})")


_FRAME_ARGS = {   # kind -> allowed (a, b, c) ranges; c of a build is a bitmask of columns
    L.F_BUILD: ((0, L.NPAT - 1), (0, 3), None),
    L.F_EMP_PLACE: ((-1, 1), (0, 0), (0, 0)),
    L.F_EMP_FLIP: ((0, 0), (0, 0), (0, 0)),
    L.F_TEMPLE: ((0, (1 << L.NTYPES) - 1), (0, 1), (0, 0)),
    L.F_CENT: ((0, 2), (0, 1), (0, 0)),
    L.F_GOV_COLUMN: ((0, 0), (0, 0), (0, 0)),
    L.F_GOV_HEIGHT: ((0, 0), (0, 0), (0, 0)),
    L.F_DISCARD: ((1, 3), (0, L.NEFF), (0, 0)),     # a frame with nothing left to pay is popped
    L.F_ITILE: ((0, L.NITILE - 1), (0, 0), (0, 0)),
    L.F_DRAW: ((0, 0), (0, 0), (0, 0)),
}


def _frame(s, f, i, ncol) -> None:
    kind = int(s[f])
    if kind not in _FRAME_ARGS:
        raise _Bad(f"pending effect {i} has kind {kind}")
    for j, rng in enumerate(_FRAME_ARGS[kind]):
        lo, hi = rng if rng is not None else (0, (1 << ncol) - 1)
        _range(s, f + 1 + j, lo, hi, f"pending effect {i}'s argument {j}")
