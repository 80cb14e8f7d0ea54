"""Helpers shared by the rules tests: reach a decision point by writing the flat state.

Every helper writes only what a real game could hold at that point (pieces on the site, parts in
the Temple, cards in a hand, the phase of a turn), so what the tests then ask of the engine
(`api.legal_actions`, `api.apply_action`, `api.final_scoring`) is the rule under test.
"""
from __future__ import annotations

from evora_sim import api
from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim.rules import load_rules

RULES = load_rules()
R = RULES.packed
BOARD = RULES.data["board"]["spaces"]
NSPACES = len(BOARD)
W = "W"   # a white stone, in the part lists below


# ---- the default board ---------------------------------------------------------------------
def space(action, colour=None, nth=0):
    """Index of the ``nth`` space of the default board with this action (and colour)."""
    found = [i for i, sp in enumerate(BOARD)
             if sp["action"] == action and (colour is None or sp["colour"] == colour)]
    return found[nth]


def colour_of(x):
    return L.TYPE_NAMES.index(BOARD[x]["colour"])


# ---- action sets ---------------------------------------------------------------------------
def legal(state):
    return set(api.legal_actions(hand_made(state)))


def hand_made(state):
    """``state`` handed to the API as these tests vouch for it. Some positions here are ones no
    game reaches (set_heights' filler stones come from outside the supply; a seat is left its
    last stone without placing the others), every cell within its range: the API's check of a
    reachable position (issue 51) would refuse them."""
    return api.assume_reachable(state)


def cols(*cs):
    return {L.A_COLUMN + c for c in cs}


def spaces(*xs):
    return {L.A_SPACE + x for x in xs}


def stacks(*ts):
    return {L.A_STACK + t for t in ts}


def plays(*es):
    return {L.A_PLAY + e for e in es}


def tiles(*ts):
    return {L.A_TILE + t for t in ts}


# The main decision of a turn: draw 1 card (the stack is asked next) or use the site action.
MAIN_OPTIONS = {L.A_DRAW, L.A_SITE}


def draw(state, t):
    """At the main decision: draw 1 card from stack ``t``."""
    act(state, L.A_DRAW, L.A_STACK + t)


def act(state, *actions):
    """Apply actions in order; ``api.apply_action`` refuses (raises) any illegal one."""
    for a in actions:
        api.apply_action(hand_made(state), a)


def phase(state):
    return state.get(L.G_PHASE)


def decision(state):
    return api.decision_name(state)


# ---- players -------------------------------------------------------------------------------
def pidx(p, field):
    return L.PLAYERS + p * L.PSTRIDE + field


def pget(state, p, field):
    return int(state.arr[pidx(p, field)])


def pset(state, p, field, value):
    state.arr[pidx(p, field)] = value


def score(state, p):
    return pget(state, p, L.P_SCORE)


def scores(state):
    return [score(state, p) for p in range(state.n_players)]


def give_cards(state, p, *effects):
    for e in effects:
        state.arr[pidx(p, L.P_HAND + e)] += 1
        state.arr[pidx(p, L.P_HANDN)] += 1


def hand(state, p):
    """The hand as a sorted list of effects (with repeats)."""
    out = []
    for e in range(L.NEFF):
        out += [e] * pget(state, p, L.P_HAND + e)
    return out


def pending(state, p):
    out = []
    for e in range(L.NEFF):
        out += [e] * pget(state, p, L.P_PENDING + e)
    return out


# ---- game start and turns ------------------------------------------------------------------
def setup_game(n_players=4, seed=0, placements=None, rules=None):
    """A new game with the initial workers placed through the API (D20 order).

    ``placements`` lists the spaces in placement order; by default the first free spaces from
    space 1 on, spread out so that every worker has room to move. ``rules``: the default rules
    with some change that leaves the board as it is (the card-value keys, P11 and P12).
    """
    state = api.new_game(rules, n_players=n_players, seed=seed)
    n_site = n_players * int(R[L.R_SITE_WORKERS + n_players])
    if placements is None:
        placements = [1 + 3 * i for i in range(n_site)]
    assert len(placements) == n_site
    act(state, *[L.A_SPACE + x for x in placements])
    return state


def arrange_site(state, workers, centurion=0):
    """Put every piece of the Construction Site where a test wants it.

    ``workers`` maps (seat, k) -> space for every worker on the site; the Centurion goes to
    ``centurion``.
    """
    a = state.arr
    a[L.SITE:L.SITE + NSPACES] = L.EMPTY
    for p in range(state.n_players):
        for k in range(2):
            pset(state, p, L.P_WPOS + k, -1)
    taken = {centurion}
    for (p, k), x in workers.items():
        assert x not in taken, f"space {x} used twice"
        taken.add(x)
        a[L.SITE + x] = p * 2 + k
        pset(state, p, L.P_WPOS + k, x)
    a[L.SITE + centurion] = L.OCC_CENTURION
    a[L.G_CENT_POS] = centurion


def about_to_move(workers, centurion=0, n_players=4):
    """Seat 0 at the start of its first turn (about to move its worker 0), with every piece of
    the site where ``workers`` / ``centurion`` say (see ``arrange_site``)."""
    state = setup_game(n_players)
    assert phase(state) == L.PH_MOVE and state.get(L.G_CUR) == 0
    arrange_site(state, workers, centurion)
    return state


def site(state, x):
    return state.get(L.SITE + x)


def begin_main(state, seat, x, worker=0):
    """Seat ``seat`` has just moved its worker ``worker`` to the empty space ``x``: the turn is
    at its main decision (draw 1 card / use the site action / play cards), nothing played yet."""
    a = state.arr
    assert phase(state) != L.PH_SETUP and state.get(L.G_SP) == 0
    old = pget(state, seat, L.P_WPOS + worker)
    if old >= 0:
        a[L.SITE + old] = L.EMPTY
    assert a[L.SITE + x] == L.EMPTY, f"space {x} is occupied"
    a[L.SITE + x] = seat * 2 + worker
    pset(state, seat, L.P_WPOS + worker, x)
    a[L.G_CUR] = seat
    a[L.G_MOVED] = worker
    a[L.G_CARD_SPACE] = x
    a[L.G_CARD_PLAYED] = 0
    a[L.G_PHASE] = L.PH_MAIN


def turn_on(x, seat=0, n_players=4, worker=0, centurion=None, others=None, seed=0, rules=None):
    """A game after setup where ``seat`` has just moved its worker ``worker`` to space ``x``.

    The Centurion goes to ``centurion`` (default: space 0, or 8 when ``x`` is 0); ``others``
    maps (seat, k) -> space for every other worker on the site (default: spread away from ``x``).
    """
    state = setup_game(n_players, seed, rules=rules)
    if centurion is None:
        centurion = 0 if x != 0 else 8
    if others is None:
        keys = [(p, k) for k in range(int(R[L.R_SITE_WORKERS + n_players]))
                for p in range(n_players) if (p, k) != (seat, worker)]
        free = [y for y in ((x + d) % NSPACES for d in (2, 5, 10, 13, 7, 15, 4)) if y != centurion]
        others = dict(zip(keys, free))
    assert x not in others.values() and x != centurion
    arrange_site(state, others, centurion)
    begin_main(state, seat, x, worker)
    return state


def quiet_turn(state, stack=L.GOVERNOR):
    """Finish the current player's turn without placing any part: move to the first
    destination offered, draw 1 card, play nothing."""
    if phase(state) == L.PH_CHOOSE_WORKER:
        act(state, L.A_WORKER)
    if phase(state) == L.PH_MOVE:
        act(state, min(legal(state)))
    assert phase(state) == L.PH_MAIN and state.get(L.G_SP) == 0
    draw(state, stack)
    if phase(state) == L.PH_AFTER:
        act(state, L.A_END)


def turn_over(state, next_seat=1):
    """The turn has passed on to ``next_seat``: nothing was left for the player to decide."""
    return state.get(L.G_CUR) == next_seat and phase(state) == L.PH_MOVE


def buy_tile(state, p, tile, cards=(L.E_EMP_FLIP, L.E_ARCH_STONE, L.E_CENT_MOVE)):
    """Seat ``p`` (at its main decision) receives ``cards`` and pays them for instant tile
    ``tile``; what the tile then asks for is the next decision."""
    give_cards(state, p, *cards)
    act(state, L.A_TILE + tile, *[L.A_DISCARD + e for e in sorted(cards)])


def tile_payments(state):
    """Every way of paying for the tile being bought, as tuples of the effects paid."""
    if decision(state) != "pay a card for a tile":
        return [()]
    out = []
    for a in sorted(legal(state)):
        nxt = state.clone()
        act(nxt, a)
        out += [(a - L.A_DISCARD,) + rest for rest in tile_payments(nxt)]
    return out


def seat_scoring(state, p):
    """Seat ``p``'s row of the final scoring (as if the game ended now)."""
    return api.final_scoring(hand_made(state))["seats"][p]


# ---- card stacks ---------------------------------------------------------------------------
def stack_top(state, t):
    """The effect on top of stack ``t``, or None when it is empty."""
    i = state.get(L.STACK_TOP + t)
    if i >= state.get(L.STACK_LEN + t):
        return None
    return state.get(L.STACK_CARDS + t * L.MAXSTACK + i)


def set_top(state, t, effect):
    """Bring a card with ``effect`` to the top of stack ``t`` (a swap inside the stack)."""
    a = state.arr
    base = L.STACK_CARDS + t * L.MAXSTACK
    top_i = int(a[L.STACK_TOP + t])
    for i in range(top_i, int(a[L.STACK_LEN + t])):
        if a[base + i] == effect:
            a[base + i], a[base + top_i] = a[base + top_i], a[base + i]
            return
    raise AssertionError(f"no {L.EFFECT_NAMES[effect]} left in stack {t}")


def empty_stack(state, t):
    state.arr[L.STACK_TOP + t] = state.arr[L.STACK_LEN + t]


# ---- the Temple ----------------------------------------------------------------------------
def _owner(part):
    return L.WHITE if part == W else part


def set_column(state, c, parts, capital=None, holder=None, from_supply=True):
    """Write column ``c`` (parts bottom to top: seats or W, then an optional capital seat).

    With ``from_supply`` the parts leave their owners' supplies (and the Quarry); ``holder``
    puts that seat's majority worker on the column, taken from its supply.
    """
    a = state.arr
    base = L.COL_PART + c * L.COLPARTS
    assert a[L.COL_H + c] == 0, f"column {c} is not empty"
    assert len(parts) <= 4 and (capital is None or len(parts) == 4)
    for h, part in enumerate(parts):
        a[base + h] = _owner(part)
        if from_supply:
            if part == W:
                a[L.G_WHITE_LEFT] -= 1
            else:
                a[pidx(part, L.P_STONES)] -= 1
    height = len(parts)
    if capital is not None:
        a[base + 4] = capital
        if from_supply:
            a[pidx(capital, L.P_CAPS)] -= 1
        height = 5
    a[L.COL_H + c] = height
    E.count_heights(a)
    if holder is not None:
        a[L.COL_HOLDER + c] = holder
        a[pidx(holder, L.P_WORKERS)] -= 1


def set_heights(state, heights, capped=()):
    """Fill columns with white filler stones (not taken from the Quarry): ``heights`` maps
    column -> number of stones (0-4); each column in ``capped`` gets 4 stones and a capital."""
    for c, h in heights.items():
        if h and c not in capped:
            set_column(state, c, [W] * h, from_supply=False)
    for c in capped:
        set_column(state, c, [W] * 4, capital=1, from_supply=False)


def column(state, c):
    """Owners in column ``c``, bottom to top (seat numbers, W for white)."""
    h = state.get(L.COL_H + c)
    out = []
    for k in range(h):
        o = state.get(L.COL_PART + c * L.COLPARTS + k)
        out.append(W if o == L.WHITE else o)
    return out


def holder(state, c):
    return state.get(L.COL_HOLDER + c)


def place_tile(state, seat, k, c, flipped=False):
    """Seat's Emperor tile ``k`` lies beside column ``c`` (``c`` = -1: in supply)."""
    pset(state, seat, L.P_TPOS + k, c)
    pset(state, seat, L.P_TVAL + k, 1 if flipped else 0)
    if c >= 0:
        state.arr[L.COL_TILE + c] = seat * 2 + k


def to_move(arr):
    """The seat to move, typed as the game loop types it (int32).

    Why: a test that hands the compiled ``choose`` a Python int makes numba compile every player
    again for an int64 seat, minutes on a cold cache, where the int32 seat reuses what the game
    loop compiled.
    """
    return arr[L.G_CUR].astype("int32")


# ---- what no player knows (P10) ------------------------------------------------------------
def reorder_hidden(state, rng):
    """The same position (a copy of an ``api.State`` or of a state array) with each stack's
    cards below its top in another order, where they allow one: what no player may tell apart."""
    out = state.clone() if hasattr(state, "clone") else state.copy()
    arr = out.arr if hasattr(out, "arr") else out
    for t in range(L.NTYPES):
        base = L.STACK_CARDS + t * L.MAXSTACK
        lo, hi = arr[L.STACK_TOP + t] + 1, arr[L.STACK_LEN + t]
        if hi - lo > 1:
            seg = arr[base + lo:base + hi].copy()
            for _ in range(10):
                rng.shuffle(seg)
                if (seg != arr[base + lo:base + hi]).any():
                    break
            arr[base + lo:base + hi] = seg
    return out


def relot(state):
    """The same position (a copy of an ``api.State`` or of a state array) with V4's lot of a
    shared victory drawn otherwise: each seat's place in it moved one on (``engine.draw_lot``
    packs seat p's place in bits 2p..2p+1). The lot is drawn at the start and seen by no one."""
    out = state.clone() if hasattr(state, "clone") else state.copy()
    arr = out.arr if hasattr(out, "arr") else out
    n, lot = int(arr[L.G_NPLAYERS]), int(arr[L.G_LOT])
    assert lot != 0, "no lot is drawn without end.tie_break = shared"
    arr[L.G_LOT] = sum((((lot >> (2 * p)) & 3) + 1) % n << (2 * p) for p in range(n))
    return out
