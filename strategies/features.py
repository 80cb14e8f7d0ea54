"""The learned evaluation's view of a position: the features an expert's value is fitted on.

Why these and not the hand-weighted FEATURES of ``compiled``: a hand weight is one number for
the whole game, but what a thing is worth changes as the game runs out. A card in hand is worth
a play while there are turns left to play it and nothing at the end; a majority held early can
still be taken, one held on a finished column cannot. So every feature here enters the value
twice, once alone and once times the game's ``progress`` (0 at the start, 1 once the end is
triggered): its weight moves linearly from the start of the game to its end. Weights are fitted
to strong play (``evora train``), never set by hand.

One definition serves play and training: ``write_features`` puts a position's features in the
state's own scratch space (``layout.SCR_FEAT``; an evaluated position is always a scratch copy),
the value reads them there, and training reads the same cells (``features_of``).

Nothing here reads what the seat cannot see: no card below a stack's top (P10), and of another
seat only what lies on the table (its parts, tiles, majorities, its number of cards).
"""
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from evora_sim import engine as E
from evora_sim.layout import (
    COL_H, G_END_TRIGGER, G_NCOLS, G_NPLAYERS, G_NSPACES, G_PHASE, H_COUNT, ITILE_AVAIL,
    NOWNERS, P_CAPS, P_HAND, P_PENDING, P_SCORE, P_STONES, P_TPOS, P_TVAL, P_VP_EMPTY, P_WORKERS,
    PH_TERMINAL, PLAYERS, PSTRIDE, R_STONES, SCR_FEAT, SCR_FEAT_SIZE, NITILE, TILE_PUBLIC,
    A_SPACE, NTYPES, P_WPOS, TYPE_NAMES, R_SITE_WORKERS, R_SPACE_ACTION, R_SPACE_COLOUR, SCR_REACH,
)

# Cards in hand are counted by type, never by effect: a turn may draw twice from one stack (a
# draw, then a Centurion card moved onto a draw-2 space), and the second card's effect was
# below the top when the turn was planned (P10). Its type is the stack's: known.
HAND_FEATURES = tuple(f"hand_{name}" for name in TYPE_NAMES)
# What each feature measures, for the seat whose value it is (training and docs read this).
FEATURE_HELP = {
    "scored": "VP scored so far, except the VP of drawing from an empty stack",
    "empty_stack": "VP scored by drawing from empty stacks",
    "column": "VP its column-majority workers would score now",
    "column_safe": "... of them, on columns already capped (no part can change them)",
    "h1": "VP its height-1 majority would score now",
    "h2": "VP its height-2 majority would score now",
    "h3": "VP its height-3 majority would score now",
    "h4": "VP its height-4 majority would score now",
    "capitals": "VP its capitals majority would score now",
    "heights_safe": "height-majority VP at levels no column can still reach",
    "emperor": "Emperor bonus its placed tiles would score now",
    "best_other": "the best other seat's total if the game were scored now",
    **{f: f"{f[5:].capitalize()} cards in hand (drawn this turn included)" for f in HAND_FEATURES},
    "stones_left": "own stones not yet placed",
    "capitals_left": "own capitals not yet placed",
    "tiles_unplaced": "own Emperor tiles not yet beside a column",
    "tiles_flipped": "own Emperor tiles on their high side",
    "tiles_growing": "own placed Emperor tiles beside a column that can still take parts",
    "lead_h1": "own parts at height 1 minus the most of any other colour (white included), within -4..4",
    "lead_h2": "... at height 2",
    "lead_h3": "... at height 3",
    "lead_h4": "... at height 4",
    "lead_capitals": "... among the capitals",
    "last_turns_after": "once the end is triggered, the seats that still play after it this round",
    "tile_plays": "instant tiles it could take with the cards in hand (3 cards each)",
    "markers_left": "majority workers left in its supply (none left: no new column majority, D7)",
    # where its workers stand decides its next turn: the spaces a move can reach from there (the
    # next run of 3 empty spaces, D4, as the site stands now), their actions, and which cards
    # in hand match a reachable space's colour (only those can be played, D10)
    "reach_build": "reachable spaces next turn whose action builds",
    "reach_emperor": "... that place an Emperor tile",
    "reach_draw2": "... that draw 2 cards",
    "reach_centurion": "... that use the Centurion",
    "reach_temple": "... that use a card in the Temple",
    "playable_governor": "Governor cards in hand, if a reachable space is Governor-coloured",
    "playable_emperor": "Emperor cards in hand, if a reachable space is Emperor-coloured",
    "playable_architect": "Architect cards in hand, if a reachable space is Architect-coloured",
    "playable_centurion": "Centurion cards in hand, if a reachable space is Centurion-coloured",
}
FEATURE_NAMES = tuple(FEATURE_HELP)
NB = len(FEATURE_NAMES)        # base features; the value has 2 * NB weights (alone, times progress)
NL = 2 * NB
(B_SCORED, B_EMPTY, B_COLUMN, B_COLUMN_SAFE, B_H1) = 0, 1, 2, 3, 4
B_HEIGHTS_SAFE, B_EMPEROR, B_OTHER, B_HAND = 9, 10, 11, 12
B_STONES = B_HAND + NTYPES
(B_CAPS, B_TILES_UNPLACED, B_TILES_FLIPPED, B_TILES_GROWING, B_LEAD) = range(B_STONES + 1, B_STONES + 6)
B_LAST_TURNS, B_TILE_PLAYS, B_MARKERS = B_LEAD + 5, B_LEAD + 6, B_LEAD + 7
B_REACH = B_MARKERS + 1          # + site action (layout.SA_*)
B_PLAYABLE = B_REACH + 5         # + card type
assert B_PLAYABLE + NTYPES == NB and NB <= SCR_FEAT_SIZE and FEATURE_NAMES[B_HAND] == HAND_FEATURES[0]
assert NB <= 64                  # learned_value keeps the features that are not zero in one mask
assert FEATURE_NAMES[B_LEAD] == "lead_h1" and FEATURE_NAMES[B_STONES] == "stones_left"
LEAD_CLIP = 4


@njit(cache=True, inline="always")
def progress(s, R):
    """How far the game has run towards its end, 0 to 1: the larger of the Temple's stone spaces
    filled and the most any seat has used of its stones (either ends the game, D16); 1 once the
    end is triggered."""
    if s[G_END_TRIGGER] != 0:
        return 1.0
    filled = 0
    ncols = s[G_NCOLS]
    for c in range(ncols):
        filled += min(s[COL_H + c], 4)
    t = filled / max(4.0 * ncols, 1.0)
    for q in range(s[G_NPLAYERS]):
        used = (R[R_STONES] - s[PLAYERS + q * PSTRIDE + P_STONES]) / max(R[R_STONES], 1)
        t = max(t, used)
    return t


@njit(cache=True, inline="always")
def write_features(s, R, p):
    """Seat ``p``'s base features of position ``s`` into ``s[SCR_FEAT:SCR_FEAT + NB]``."""
    n = s[G_NPLAYERS]
    E.height_majorities(s, R, 0, n)                      # every seat's standing (best_other)
    census, lowest = E.column_census(s)
    b = PLAYERS + p * PSTRIDE
    f = SCR_FEAT
    s[f + B_SCORED] = s[b + P_SCORE] - s[b + P_VP_EMPTY]
    s[f + B_EMPTY] = s[b + P_VP_EMPTY]
    s[f + B_COLUMN] = E.column_vp(R, E.census_count(census, p, False))
    s[f + B_COLUMN_SAFE] = E.column_vp(R, E.census_count(census, p, True))
    caps_left = 0
    for q in range(n):
        caps_left += s[PLAYERS + q * PSTRIDE + P_CAPS]
    safe = 0
    for level in range(1, 6):
        vp = E.height_points(s, level, p)
        s[f + B_H1 + level - 1] = vp
        if level <= lowest or (level == 5 and caps_left == 0):
            safe += vp
    s[f + B_HEIGHTS_SAFE] = safe
    s[f + B_EMPEROR] = E.emperor_points(s, R, p)
    best = -(1 << 30)
    for q in range(n):
        if q != p:
            best = max(best, E.total_holding(s, R, q, E.census_count(census, q, False)))
    s[f + B_OTHER] = best
    hand = 0
    for c in range(NTYPES):
        k = 0
        for e in range(3 * c, 3 * c + 3):
            k += s[b + P_HAND + e] + s[b + P_PENDING + e]
        s[f + B_HAND + c] = k
        hand += k
    s[f + B_STONES] = s[b + P_STONES]
    s[f + B_CAPS] = s[b + P_CAPS]
    unplaced, flipped, growing = 0, 0, 0
    for k in range(2):
        c = s[b + P_TPOS + k]
        unplaced += c < 0
        flipped += s[b + P_TVAL + k]
        if c >= 0 and s[COL_H + c] < 5:
            growing += 1
    s[f + B_TILES_UNPLACED] = unplaced
    s[f + B_TILES_FLIPPED] = flipped
    s[f + B_TILES_GROWING] = growing
    for level in range(1, 6):
        row = H_COUNT + (level - 1) * NOWNERS
        other = 0
        for o in range(NOWNERS):
            if o != p:
                other = max(other, s[row + o])
        s[f + B_LEAD + level - 1] = min(max(s[row + p] - other, -LEAD_CLIP), LEAD_CLIP)
    after = 0
    if s[G_END_TRIGGER] != 0 and s[G_PHASE] != PH_TERMINAL:
        after = n - 1 - p
    s[f + B_LAST_TURNS] = after
    tiles = 0
    for t in range(NITILE):
        tiles += (s[ITILE_AVAIL + t] & (TILE_PUBLIC | (2 << p))) != 0
    s[f + B_TILE_PLAYS] = min(hand // 3, tiles)
    s[f + B_MARKERS] = s[b + P_WORKERS]
    _write_reach(s, R, p, f)


@njit(cache=True, inline="always")
def _write_reach(s, R, p, f):
    """The reach features: the spaces seat ``p``'s site workers could move to now (D4), their
    actions, and the cards in hand of their colours."""
    b = PLAYERS + p * PSTRIDE
    for k in range(5):
        s[f + B_REACH + k] = 0
    colours = 0
    reached = np.uint64(0)
    empty = E.empty_spaces(s)           # one site for every worker: built once
    ns = s[G_NSPACES]
    for k in range(R[R_SITE_WORKERS + s[G_NPLAYERS]]):
        x = s[b + P_WPOS + k]
        if x < 0:
            continue
        m = E.destinations_in(empty, ns, np.int64(x), s[SCR_REACH:SCR_REACH + 3], 0)
        for j in range(m):
            y = s[SCR_REACH + j] - A_SPACE
            bit = np.uint64(1) << np.uint64(y)
            if reached & bit:
                continue
            reached |= bit
            s[f + B_REACH + R[R_SPACE_ACTION + y]] += 1
            colours |= 1 << R[R_SPACE_COLOUR + y]
    for c in range(NTYPES):
        s[f + B_PLAYABLE + c] = s[f + B_HAND + c] if (colours >> c) & 1 else 0


@njit(cache=True, inline="always")
def learned_value(s, R, p, W, me, col):
    """Seat ``p``'s value of ``s`` under the learned weights of row ``me`` of ``W``: the weights
    of the base features alone at ``col``, times progress at ``col + NB``; a game it has won is
    worth ``W[me, col + NL]`` more (the win weight, set, not fitted: as every built-in's), a
    victory shared by k seats (V4) a k-th of it (``engine.victory_share``).

    Summed in feature order over the features that are not zero (more than half of them are zero
    in a turn search's positions): adding a zero term (+0 or -0) to a sum that starts at +0
    leaves it the same to the last bit, and the sum is a chain of dependent additions, the
    longest wait of a search's evaluation. Progress is found first, for the same reason: its
    divisions then overlap the features' work."""
    t = progress(s, R)
    write_features(s, R, p)
    nonzero = np.uint64(0)
    for k in range(NB):
        nonzero |= np.uint64(s[SCR_FEAT + k] != 0) << np.uint64(k)
    v = 0.0
    while nonzero != 0:
        k = np.int64(trailing_zeros(nonzero))
        nonzero &= nonzero - np.uint64(1)
        v += (W[me, col + k] + t * W[me, col + NB + k]) * s[SCR_FEAT + k]
    return v + win_bonus(s, R, p, W[me, col + NL])


@njit(cache=True, inline="always")
def win_bonus(s, R, p, weight):
    """What a win weight ``weight`` adds to seat ``p``'s value of ``s``: all of it once the game is
    over and won, nothing in play. A victory shared by k seats under V4 adds a k-th of it, whichever
    seat the lot records (``engine.victory_share``): the lot is drawn at the start and shown to no
    one (P10), so no player may value a tie by it."""
    if s[G_PHASE] != PH_TERMINAL:
        return 0.0
    return weight * E.victory_share(s, R, p)


@njit(cache=True)
def features_into(s, R, p, out):
    """``out[:NB]`` = seat ``p``'s base features of ``s``, ``out[NB:]`` the same times progress
    (the columns the learned weights multiply); ``s`` is used as scratch."""
    write_features(s, R, p)
    t = progress(s, R)
    for k in range(NB):
        x = s[SCR_FEAT + k]
        out[k] = x
        out[NB + k] = t * x


def features_of(state, R, p) -> np.ndarray:
    """The learned evaluation's feature row (``2 * NB`` values) of seat ``p`` in ``state`` (a
    copy is used), for training and tests."""
    s = np.array(state, dtype=np.int32, copy=True)
    out = np.zeros(NL, dtype=np.float64)
    features_into(s, R, np.int64(p), out)
    return out


__all__ = ["FEATURE_NAMES", "FEATURE_HELP", "NB", "NL", "progress", "write_features", "learned_value", "win_bonus",
           "features_into", "features_of"]
