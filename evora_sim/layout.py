"""Named offsets of the flat engine arrays: the game state, the packed rules, the action codes.

The engine keeps one int32 state array per game (pgx style): everything a rule needs to read
or write has a fixed offset here, so compiled code indexes it directly and a batch of games is
just a batch of arrays. Sizes are upper bounds (a designer's board may be larger than the
default); the actual counts of a game are stored in the state itself.

Module-level ints are read by numba as compile-time constants.
"""

# ---- upper bounds --------------------------------------------------------------------------
MAXP = 4            # players
MAXS = 32           # Construction Site spaces
MAXC = 20           # column spaces in the Temple
MAXSTACK = 24       # cards in one stack (3 effects x copies)
COLPARTS = 5        # 4 stones + 1 capital
NTYPES = 4          # card types = colours = stacks
NEFF = 12           # card effects (3 per type)
NITILE = 4          # instant bonus tiles
NTRACK = NEFF + NITILE
MAXDEPTH = 12       # pending-effect frames
FW = 4              # frame width

# ---- colours / card types -----------------------------------------------------------------
GOVERNOR, EMPEROR, ARCHITECT, CENTURION = 0, 1, 2, 3
TYPE_NAMES = ("governor", "emperor", "architect", "centurion")

# ---- card effects (type * 3 + i) -----------------------------------------------------------
E_GOV_COLUMN, E_GOV_WORKERS, E_GOV_HEIGHT = 0, 1, 2
E_EMP_PLACE, E_EMP_FLIP, E_EMP_TEMPLE = 3, 4, 5
E_ARCH_STONE_WHITE, E_ARCH_STONE, E_ARCH_TWO_STONES = 6, 7, 8
E_CENT_SWAP, E_CENT_ANY, E_CENT_MOVE = 9, 10, 11
EFFECT_NAMES = (
    "gov_column", "gov_workers", "gov_height",
    "emp_place", "emp_flip", "emp_temple",
    "arch_stone_white", "arch_stone", "arch_two_stones",
    "cent_swap", "cent_any", "cent_move",
)

# ---- instant bonus tiles -------------------------------------------------------------------
T_CAPITAL_TWO_STONES, T_FLIP_BOTH, T_TWO_CAPITALS, T_THREE_STONES = 0, 1, 2, 3
ITILE_NAMES = ("tile_capital_two_stones", "tile_flip_both", "tile_two_capitals", "tile_three_stones")

# An instant tile's availability is a bit set (P11): TILE_PUBLIC while it lies in the Temple for
# everyone; bit (2 << seat) while the seat holds its own copy, given at the start (card-value
# experiments). A default game only ever holds 1 or 0.
TILE_PUBLIC = 1
CARD_NAMES = EFFECT_NAMES + ITILE_NAMES    # the 16 things a seat can play: effects, then tiles

# ---- build patterns (groups of parts; groups go to pairwise different columns) -------------
K_NONE, K_STONE, K_WHITE, K_CAPITAL = 0, 1, 2, 3
PAT_TWO_STONES, PAT_ONE_STONE, PAT_CAPITAL, PAT_STONE_AND_WHITE = 0, 1, 2, 3
PAT_CAPITAL_AND_WHITE, PAT_STONE_THEN_WHITE = 4, 5
PAT_TWO_STONES_SAME, PAT_CAPITAL_TWO_STONES, PAT_TWO_CAPITALS, PAT_THREE_STONES = 6, 7, 8, 9
NPAT = 10
PATTERN_NAMES = (
    "two_stones", "one_stone", "capital", "stone_and_white", "capital_and_white",
    "stone_then_white", "two_stones_same", "capital_two_stones", "two_capitals", "three_stones",
)
# PATTERNS[pattern][group] = (part kind, part kind); K_NONE pads.
PATTERNS_LIST = (
    ((K_STONE, 0), (K_STONE, 0), (0, 0)),
    ((K_STONE, 0), (0, 0), (0, 0)),
    ((K_CAPITAL, 0), (0, 0), (0, 0)),
    ((K_STONE, 0), (K_WHITE, 0), (0, 0)),
    ((K_CAPITAL, 0), (K_WHITE, 0), (0, 0)),
    ((K_STONE, K_WHITE), (0, 0), (0, 0)),
    ((K_STONE, K_STONE), (0, 0), (0, 0)),
    ((K_CAPITAL, 0), (K_STONE, K_STONE), (0, 0)),
    ((K_CAPITAL, 0), (K_CAPITAL, 0), (0, 0)),
    ((K_STONE, 0), (K_STONE, 0), (K_STONE, 0)),
)

# ---- Construction Site actions -------------------------------------------------------------
SA_BUILD, SA_EMPEROR, SA_DRAW2, SA_CENTURION, SA_TEMPLE = 0, 1, 2, 3, 4
# Action names in rules data -> (site action, build pattern or -1)
SITE_ACTIONS = {
    "build_two_stones": (SA_BUILD, PAT_TWO_STONES),
    "build_one_stone": (SA_BUILD, PAT_ONE_STONE),
    "build_capital": (SA_BUILD, PAT_CAPITAL),
    "build_stone_and_white": (SA_BUILD, PAT_STONE_AND_WHITE),
    "build_capital_and_white": (SA_BUILD, PAT_CAPITAL_AND_WHITE),
    "build_stone_then_white": (SA_BUILD, PAT_STONE_THEN_WHITE),
    "emperor_tile": (SA_EMPEROR, -1),
    "draw2": (SA_DRAW2, -1),
    "centurion": (SA_CENTURION, -1),
    "temple": (SA_TEMPLE, -1),
}

# ---- action codes --------------------------------------------------------------------------
A_SPACE = 0                      # + space
A_COLUMN = A_SPACE + MAXS        # + column
A_SKIP = A_COLUMN + MAXC         # skip a build group that cannot add to the best build
A_STACK = A_SKIP + 1             # + card type (draw from / use the top card of that stack)
A_HEIGHT = A_STACK + NTYPES      # + height-1 (Governor height card)
A_WORKER = A_HEIGHT + 5          # + worker index (2 players: which worker moves)
A_PLAY = A_WORKER + 2            # + effect (play 1 card)
A_TILE = A_PLAY + NEFF           # + tile (play 3 cards for an instant bonus tile)
A_DISCARD = A_TILE + NITILE      # + effect (one of the 3 cards paid for a tile)
A_SITE = A_DISCARD + NEFF        # use the Construction Site action
A_END = A_SITE + 1               # end the turn without playing a card
A_EMPTILE = A_END + 1            # + tile index (which own Emperor tile)
A_DRAW = A_EMPTILE + 2           # draw 1 card (the stack is the next decision)
N_ACTIONS = A_DRAW + 1

# ---- phases --------------------------------------------------------------------------------
PH_SETUP, PH_CHOOSE_WORKER, PH_MOVE, PH_MAIN, PH_AFTER, PH_TERMINAL = 0, 1, 2, 3, 4, 5
PHASE_NAMES = ("setup", "choose_worker", "move", "main", "after", "terminal")

# ---- frames (pending effects) --------------------------------------------------------------
F_BUILD = 1        # a=pattern, b=next group, c=bitmask of columns used by earlier groups
F_EMP_PLACE = 2    # a=chosen tile index or -1
F_EMP_FLIP = 3
F_TEMPLE = 4       # a=mask of allowed stacks, b=nested
F_CENT = 5         # a=mode (0 move, 1 any empty, 2 swap), b=nested
F_GOV_COLUMN = 6
F_GOV_HEIGHT = 7
F_DISCARD = 8      # a=cards still to pay, b=lowest effect allowed (canonical order)
F_ITILE = 9        # a=tile: resolved once its cards are paid
F_DRAW = 10        # which stack to draw 1 card from
CENT_MOVE, CENT_ANY, CENT_SWAP = 0, 1, 2

# ---- end triggers --------------------------------------------------------------------------
END_NONE, END_TEMPLE_FULL, END_OUT_OF_STONES, END_ROUND_LIMIT = 0, 1, 2, 3
END_NAMES = ("none", "temple_full", "out_of_stones", "round_limit")

# ---- mechanism switches (rules keys; docs/RULES.md V3-V5; the first of each is the rulebook) --
# V3 end.after_trigger: once the end is triggered, the round is finished (D16), the triggering
# turn is the last, or every player plays one more turn (the triggering seat last)
AFTER_FINISH_ROUND, AFTER_FINISH_TURN, AFTER_ONE_MORE_TURN = 0, 1, 2
AFTER_TRIGGER_NAMES = ("finish_round", "finish_turn", "one_more_turn")
# V4 end.tie_break: seats tied on VP (and V2's half point): D18's steps, or a shared victory
TIE_RULEBOOK, TIE_SHARED = 0, 1
TIE_BREAK_NAMES = ("rulebook", "shared")
# V5 setup.placement_order: the setup placements in seat order (D20), or the last seat first
PLACE_SEAT_ORDER, PLACE_REVERSE = 0, 1
PLACEMENT_ORDER_NAMES = ("seat_order", "reverse")

# ---- site occupancy / column owners --------------------------------------------------------
EMPTY = -1
OCC_CENTURION = 8        # workers are seat*2 + k (0..7)
WHITE = 4                # owner code of a white stone
NOWNERS = 5

# ---- state layout (int32) ------------------------------------------------------------------
_o = 0


def _alloc(n):
    global _o
    start = _o
    _o += n
    return start


G_NPLAYERS = _alloc(1)
G_NSPACES = _alloc(1)
G_NCOLS = _alloc(1)
G_PHASE = _alloc(1)
G_CUR = _alloc(1)
G_ROUND = _alloc(1)
G_END_TRIGGER = _alloc(1)
G_END_SEAT = _alloc(1)
G_WINNER = _alloc(1)
G_CENT_POS = _alloc(1)
G_WHITE_LEFT = _alloc(1)
G_MOVED = _alloc(1)          # index of the worker moved this turn
G_CARD_SPACE = _alloc(1)     # space whose colour a card played now must match, or:
CARD_AT_CENTURION = -2       # ... wherever the Centurion stands (after the Centurion action)
G_CARD_PLAYED = _alloc(1)
G_SETUP_DONE = _alloc(1)     # workers placed during setup
G_TRACK = _alloc(1)          # card/tile being resolved (for its VP), -1 none
G_TRACK_SCORE0 = _alloc(1)
G_SP = _alloc(1)             # frames in use
G_NTURNS = _alloc(1)         # turns played in total
G_END_TURN = _alloc(1)       # the turn (G_NTURNS then) in which the end was triggered (V3), -1 before
G_LOT = _alloc(1)            # V4's lot: seat p's place among tied seats is bits 2p..2p+1 (0 without V4)
SITE = _alloc(MAXS)
COL_H = _alloc(MAXC)                 # parts in the column (5 = capital on top)
COL_PART = _alloc(MAXC * COLPARTS)   # owner of each part, bottom to top
COL_HOLDER = _alloc(MAXC)            # seat whose majority worker is on top, -1
COL_TILE = _alloc(MAXC)              # Emperor tile beside the column: seat*2+k, -1
STACK_CARDS = _alloc(NTYPES * MAXSTACK)
STACK_TOP = _alloc(NTYPES)           # index of the top card; == STACK_LEN when empty
STACK_LEN = _alloc(NTYPES)
ITILE_AVAIL = _alloc(NITILE)         # bit TILE_PUBLIC: in the Temple; bit 2 << seat: that seat's own
FRAMES = _alloc(MAXDEPTH * FW)
H_COUNT = _alloc(5 * NOWNERS)        # parts per (level - 1, owner): kept by each placement

# per player block
P_SCORE = 0
P_STONES = 1
P_CAPS = 2
P_WORKERS = 3        # majority markers in supply
P_TURNS = 4
P_WPOS = 5           # 2 slots: site space of each worker, -1 if not on the site
P_TPOS = 7           # 2 slots: column of each Emperor tile, -1 in supply
P_TVAL = 9           # 2 slots: 0 front side, 1 flipped
P_HANDN = 11
P_HAND = 12          # NEFF
P_PENDING = P_HAND + NEFF
P_VP_BUILD = P_PENDING + NEFF
P_VP_WHITE = P_VP_BUILD + 1
P_VP_EMPTY = P_VP_BUILD + 2
P_VP_CARDS = P_VP_BUILD + 3
P_VP_EMPEROR = P_VP_BUILD + 4
P_VP_COLMAJ = P_VP_BUILD + 5
P_VP_HEIGHT = P_VP_BUILD + 6   # 5 slots: heights 1-4 and capitals
P_FINAL = P_VP_HEIGHT + 5      # final total
PSTRIDE = P_FINAL + 1
PLAYERS = _alloc(MAXP * PSTRIDE)

# Everything above is the game; below are per-game statistics that no rule reads, so a
# lookahead copies only the CORE prefix.
CORE = _o

S_PLAYS = 0                      # NTRACK: cards per effect played from hand, tiles
S_PLAY_VP = NTRACK               # NTRACK: VP scored while resolving them
S_TEMPLE_USES = 2 * NTRACK       # NEFF: Temple card effects used
S_SPACE_USES = 2 * NTRACK + NEFF  # MAXS: site actions carried out, per space
SSTRIDE = S_SPACE_USES + MAXS
STATS = _alloc(MAXP * SSTRIDE)

# Scratch space for compiled helpers (legal-action lists, counters), so the hot path allocates
# nothing. Never part of the game: not copied by lookahead, not saved, not compared.
SCRATCH = _o          # the game and its statistics end here
SCR_LEGAL = _alloc(N_ACTIONS)
SCR_CLS = _alloc(6)
SCR_HVP = _alloc(5 * MAXP)           # height-majority VP per (level - 1, seat)
SCR_FEAT_SIZE = 48
SCR_FEAT = _alloc(SCR_FEAT_SIZE)     # the learned evaluation's features of a position (strategies.features)
SCR_REACH = _alloc(3)                # ... the spaces a worker could move to
SCR_BUILT = _alloc(1)                # columns given a part since a reader cleared it, bit c for column c
SCR_TILES = _alloc(1)                # seats that placed or turned an Emperor tile since a reader cleared it, bit p

STATE_SIZE = _o
del _o

# breakdown columns, in the order of the P_VP_* slots
BREAKDOWN_NAMES = (
    "vp_build", "vp_white", "vp_empty_stack", "vp_cards", "vp_emperor", "vp_column_majority",
    "vp_height_1", "vp_height_2", "vp_height_3", "vp_height_4", "vp_capitals",
)
NBREAK = len(BREAKDOWN_NAMES)
# ... those scored for majorities at the end (D7, D17)
MAJORITY_NAMES = ("vp_column_majority", "vp_height_1", "vp_height_2", "vp_height_3", "vp_height_4", "vp_capitals")

# ---- packed rules (int32) ------------------------------------------------------------------
_r = 0


def _ralloc(n):
    global _r
    start = _r
    _r += n
    return start


R_NSPACES = _ralloc(1)
R_SPACE_COLOUR = _ralloc(MAXS)
R_SPACE_ACTION = _ralloc(MAXS)
R_SPACE_ARG = _ralloc(MAXS)          # build pattern, or bitmask of stacks/types
R_HEIGHT_VP = _ralloc(6)             # index 1..5
R_WHITE_VP = _ralloc(1)
R_EMPTY_VP = _ralloc(1)
R_EMP_VALUES = _ralloc(2)
R_COLMAJ_VP = _ralloc(1)
R_MIN_PARTS = _ralloc(1)
R_HMAJ = _ralloc(6)                  # index 1..5
R_HMAJ_TIE = _ralloc(6)
R_GOV_COL = _ralloc(6)
R_GOV_WORKER_VP = _ralloc(1)
R_GOV_WORKER_CAP = _ralloc(1)
R_GOV_H = _ralloc(6)
R_GOV_H_TIE = _ralloc(6)
R_STONES = _ralloc(1)
R_CAPS = _ralloc(1)
R_WHITES = _ralloc(1)
R_WORKERS = _ralloc(1)
R_COPIES = _ralloc(1)
R_NCOLS = _ralloc(MAXP + 1)          # by player count
R_SITE_WORKERS = _ralloc(MAXP + 1)   # by player count
R_MAX_ROUNDS = _ralloc(1)
R_START_VP = _ralloc(MAXP)          # whole VP each seat starts with (variant key players.start_vp, V1)
R_START_HALF = _ralloc(MAXP)        # 1 when they carry the half point that breaks ties only (V2)
R_GIVE = _ralloc(1)                  # P11: card (effect, or NEFF + tile) given at the start, -1 none
R_GIVE_SEAT = _ralloc(1)             # ... to this seat
R_REMOVE = _ralloc(1)                # P12: card taken out of the game, -1 none
R_AFTER_TRIGGER = _ralloc(1)         # V3: AFTER_* (end.after_trigger)
R_TIE_BREAK = _ralloc(1)             # V4: TIE_* (end.tie_break)
R_PLACEMENT_ORDER = _ralloc(1)       # V5: PLACE_* (setup.placement_order)
RULES_SIZE = _r
del _r
