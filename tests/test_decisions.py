"""One test (or more) per rules decision (docs/RULES.md): D1-D20 and the project's
P1-P12 and the variant keys V1-V5. Every test drives the engine through the public API from a position
written into the state (tests/helpers.py), on the default rules and board.
"""
import copy
from collections import Counter

import numpy as np
import pytest

from evora_sim import api, replay
from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim.batch import play_batch
from evora_sim.position import position_state, scoring_table
from evora_sim.rules import RulesError, load_rules, validate
from strategies.registry import STRATEGY_IDS

from helpers import (
    MAIN_OPTIONS, NSPACES, W, about_to_move, act, begin_main, buy_tile, cols, colour_of, column, decision,
    draw, empty_stack, give_cards, hand, holder, legal, pending, pget, phase, place_tile, plays, pset,
    quiet_turn, score, scores, seat_scoring, set_column, set_heights, set_top, setup_game, site,
    space, spaces, stack_top, stacks, tile_payments, tiles, to_move, turn_on, turn_over,
)

# ---- the default board (D1), by action ------------------------------------------------------
SP_TWO = space("build_two_stones")                 # 0  architect
SP_EMP = space("emperor_tile")                     # 1  emperor
SP_ONE = space("build_one_stone")                  # 2  governor
SP_DRAW_GE = space("draw2")                        # 3  centurion: governor + emperor stacks
SP_STONE_THEN_WHITE = space("build_stone_then_white")   # 4  architect
SP_TEMPLE_GA = space("temple")                     # 5  governor: governor + architect
SP_CAPITAL = space("build_capital")                # 6  emperor
SP_CENT = space("centurion")                       # 7  centurion
SP_STONE_AND_WHITE = space("build_stone_and_white")     # 8  architect
SP_DRAW_AC = space("draw2", nth=1)                 # 9  emperor: architect + centurion stacks
SP_TEMPLE_EC = space("temple", nth=1)              # 11 centurion: emperor + centurion
SP_CAP_WHITE = space("build_capital_and_white")    # 12 architect
SP_EMP_2 = space("emperor_tile", nth=1)            # 13 emperor
SP_ONE_CENT = space("build_one_stone", nth=1)      # 14 centurion
SP_TEMPLE_GC = space("temple", nth=2)              # 15 governor: governor + centurion

GOV, EMP, ARCH, CENT = L.GOVERNOR, L.EMPEROR, L.ARCHITECT, L.CENTURION
ALL14 = cols(*range(14))
ALL_TILES = tiles(0, 1, 2, 3)
EMPTILES = {L.A_EMPTILE, L.A_EMPTILE + 1}


# =============================================================================================
# D1 board, D2 validation, D3 Temple
# =============================================================================================
def test_d01_default_board_meets_constraints_and_says_reconstruction():
    board = load_rules().data["board"]
    sp = board["spaces"]
    assert len(sp) == 16
    assert Counter(x["colour"] for x in sp) == {t: 4 for t in L.TYPE_NAMES}
    actions = [x["action"] for x in sp]
    assert {"build_two_stones", "build_one_stone", "build_capital", "build_stone_and_white",
            "build_capital_and_white", "build_stone_then_white"} <= set(actions)
    assert actions.count("emperor_tile") >= 2
    pairs = [x["stacks"] for x in sp if x["action"] == "draw2"]
    assert len(pairs) >= 2
    assert all(len(set(p)) == 2 for p in pairs)
    assert len({frozenset(p) for p in pairs}) == len(pairs)
    assert actions.count("centurion") == 1
    temples = [x["types"] for x in sp if x["action"] == "temple"]
    assert len(temples) >= 2 and all(len(set(t)) == 2 for t in temples)
    assert all(actions[i] != actions[(i + 1) % 16] for i in range(16)), "neighbours share an action"
    assert "reconstruction" in board["note"].lower()


def test_d01_layout_these_tests_use():
    # the geometry below (which spaces a move reaches) is that of the shipped reconstruction
    assert [SP_TWO, SP_EMP, SP_ONE, SP_DRAW_GE, SP_STONE_THEN_WHITE, SP_TEMPLE_GA, SP_CAPITAL,
            SP_CENT, SP_STONE_AND_WHITE, SP_DRAW_AC, SP_TEMPLE_EC, SP_CAP_WHITE, SP_EMP_2,
            SP_ONE_CENT, SP_TEMPLE_GC] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15]
    assert [colour_of(x) for x in range(NSPACES)] == [ARCH, EMP, GOV, CENT, ARCH, GOV, EMP, CENT,
                                                     ARCH, EMP, GOV, CENT, ARCH, EMP, CENT, GOV]


def test_d01_engine_plays_on_the_data_board():
    rules = load_rules()
    state = api.new_game(n_players=4)
    assert state.get(L.G_NSPACES) == 16
    for x, sp in enumerate(rules.data["board"]["spaces"]):
        assert rules.packed[L.R_SPACE_COLOUR + x] == L.TYPE_NAMES.index(sp["colour"])
        assert rules.packed[L.R_SPACE_ACTION + x] == L.SITE_ACTIONS[sp["action"]][0]


def _default_data():
    return copy.deepcopy(load_rules().data)


def test_d02_default_board_is_valid_at_the_minimum():
    rules = validate(_default_data())   # 16 = 3 * (4 workers + Centurion) + 1
    assert rules.n_spaces == 16


def test_d02_board_below_minimum_is_rejected():
    data = _default_data()
    data["board"]["spaces"].pop()
    with pytest.raises(RulesError, match=r"board too small: 15 spaces.*3 \* 5 \+ 1 = 16"):
        validate(data)


def test_d02_minimum_counts_every_piece_on_the_site():
    data = _default_data()
    data["players"]["workers_on_site"]["3"] = 2            # 3 * 2 workers + Centurion = 7 pieces
    base = data["board"]["spaces"]
    data["board"]["spaces"] = base + base[:5]               # 21 spaces
    with pytest.raises(RulesError, match=r"21 spaces.*3 \* 7 \+ 1 = 22"):
        validate(data)
    data["board"]["spaces"] = base + base[:6]               # 22 spaces
    assert validate(data).n_spaces == 22


@pytest.mark.parametrize("x,key,value,match", [
    (3, "action", "build_tower", "unknown action 'build_tower'"),
    (3, "colour", "purple", "unknown card type or colour 'purple'"),
    (3, "stacks", ["governor", "senator"], "'senator'"),
    (5, "types", ["governor", "bishop"], "'bishop'"),
])
def test_d02_unknown_action_or_colour_names_are_rejected(x, key, value, match):
    data = _default_data()
    data["board"]["spaces"][x][key] = value
    with pytest.raises(RulesError, match=match):
        validate(data)


@pytest.mark.parametrize("n,ncols", [(2, 10), (3, 12), (4, 14)])
def test_d03_temple_has_14_12_10_column_spaces(n, ncols):
    state = turn_on(SP_ONE, n_players=n)
    assert state.get(L.G_NCOLS) == ncols
    act(state, L.A_SITE)
    assert legal(state) == cols(*range(ncols))


# =============================================================================================
# D4, D5 moving
# =============================================================================================
def test_d04_scan_wraps_around_the_loop():
    state = about_to_move({(0, 0): 12, (1, 0): 14, (2, 0): 2, (3, 0): 8}, centurion=5)
    assert legal(state) == spaces(15, 0, 1)
    act(state, L.A_SPACE + 0)
    assert site(state, 0) == 0 and site(state, 12) == L.EMPTY
    assert pget(state, 0, L.P_WPOS) == 0
    assert phase(state) == L.PH_MAIN and state.get(L.G_CARD_SPACE) == 0


def test_d04_own_space_counts_as_occupied():
    # 4 and 5 are empty right after the worker on 3: with its own space they would be a run
    state = about_to_move({(0, 0): 3, (1, 0): 6, (2, 0): 13, (3, 0): 15}, centurion=0)
    assert legal(state) == spaces(7, 8, 9)


def test_d04_first_three_of_first_run_beyond_workers_and_centurion():
    # rulebook example 2: the run lies beyond another worker and the Centurion; it is 4 long
    state = about_to_move({(0, 0): 0, (1, 0): 2, (2, 0): 9, (3, 0): 12}, centurion=4)
    assert legal(state) == spaces(5, 6, 7)


def d4_walk(occupied, start, ns):
    """D4 read plainly: walk the loop from the space after ``start`` (``start`` itself never
    counts) and return the first 3 spaces of the first run of 3 empty ones, or none."""
    run = []
    for i in range(1, ns):
        x = (start + i) % ns
        run = run + [x] if x not in occupied else []
        if len(run) == 3:
            return run
    return []


@pytest.mark.parametrize("ns", [4, 5, 7, 10, 13, 16])
def test_d04_destinations_agree_with_a_walk_of_the_loop_on_every_site(ns):
    """Every occupancy of a loop of ``ns`` spaces and every start (16 spaces: every occupancy
    of up to 9 spaces, then random ones), against a plain walk: the compiled search of the
    runs, with bit masks, must find the same three spaces."""
    rng = np.random.default_rng(ns)
    arr = E.new_state()
    arr[L.G_NSPACES] = ns
    out = np.zeros(L.N_ACTIONS, dtype=np.int32)
    masks = range(1 << ns) if ns <= 13 else rng.integers(0, 1 << ns, 20_000)
    for m in masks:
        occupied = {x for x in range(ns) if (int(m) >> x) & 1}
        for x in range(ns):
            arr[L.SITE + x] = 0 if x in occupied else L.EMPTY
        for start in (range(ns) if ns <= 10 else rng.integers(0, ns, 3)):
            n = E.destinations(arr, np.int64(start), out, 0)
            want = d4_walk(occupied | {int(start)}, int(start), ns)
            assert [a - L.A_SPACE for a in out[:n]] == want, (ns, sorted(occupied), int(start))
    for x in range(L.MAXS):                  # the largest board the engine allows
        arr[L.SITE + x] = L.EMPTY if x % 4 else 0
    arr[L.G_NSPACES] = L.MAXS
    n = E.destinations(arr, np.int64(L.MAXS - 2), out, 0)
    assert [a - L.A_SPACE for a in out[:n]] == [1, 2, 3]


def test_d05_two_players_choose_worker_and_colour_follows_it():
    # 2 players: seat 0 has workers on 1 (emperor) and 9, seat 1 on 4 and 12
    state = setup_game(2, placements=[1, 4, 9, 12])
    assert phase(state) == L.PH_CHOOSE_WORKER and state.get(L.G_CUR) == 0
    assert legal(state) == {L.A_WORKER, L.A_WORKER + 1}
    other = state.clone()
    act(other, L.A_WORKER + 0)
    assert legal(other) == spaces(5, 6, 7)
    give_cards(state, 0, L.E_EMP_FLIP, L.E_CENT_MOVE)
    act(state, L.A_WORKER + 1)
    assert legal(state) == spaces(13, 14, 15)
    act(state, L.A_SPACE + SP_ONE_CENT)                      # 14, a centurion space
    assert site(state, 9) == L.EMPTY and site(state, 14) == 1 and site(state, 1) == 0
    assert pget(state, 0, L.P_WPOS) == 1 and pget(state, 0, L.P_WPOS + 1) == 14
    # the card colour is the moved worker's space (centurion), not the other one's (emperor)
    assert legal(state) == plays(L.E_CENT_MOVE) | MAIN_OPTIONS


# =============================================================================================
# D6 building as completely as possible
# =============================================================================================
def test_d06_legal_columns_are_those_keeping_the_most_parts():
    state = turn_on(SP_STONE_AND_WHITE)                      # architect space
    heights = {c: 3 for c in range(14)}
    heights.update({1: 4, 7: 4, 2: 2, 4: 0})
    set_heights(state, heights, capped=(9,))
    give_cards(state, 0, L.E_ARCH_TWO_STONES)
    act(state, L.A_PLAY + L.E_ARCH_TWO_STONES)
    assert legal(state) == cols(2, 4)                        # only these take both stones
    act(state, L.A_COLUMN + 2)
    assert column(state, 2) == [W, W, 0, 0]
    assert score(state, 0) == 1 + 3


def test_d06_one_part_columns_when_none_takes_two():
    state = turn_on(SP_STONE_AND_WHITE)
    heights = {c: 3 for c in range(14)}
    heights.update({1: 4, 7: 4})
    set_heights(state, heights, capped=(9,))
    give_cards(state, 0, L.E_ARCH_TWO_STONES)
    act(state, L.A_PLAY + L.E_ARCH_TWO_STONES)
    assert legal(state) == cols(0, 2, 3, 4, 5, 6, 8, 10, 11, 12, 13)
    act(state, L.A_COLUMN + 3)
    assert column(state, 3) == [W, W, W, 0] and score(state, 0) == 3


def test_d06_own_stone_then_white_on_the_same_space():
    state = turn_on(SP_STONE_THEN_WHITE)
    heights = {c: 4 for c in range(14)}
    heights.update({0: 3, 1: 2})
    set_heights(state, heights)
    act(state, L.A_SITE)
    assert legal(state) == cols(1)                           # column 0 would take only 1 part
    act(state, L.A_COLUMN + 1)
    assert column(state, 1) == [W, W, 0, W]
    assert score(state, 0) == 1 + 2
    assert state.get(L.G_WHITE_LEFT) == 11 and pget(state, 0, L.P_STONES) == 13


def test_d06_stone_then_white_without_own_stone_places_white_alone():
    state = turn_on(SP_STONE_THEN_WHITE)
    pset(state, 0, L.P_STONES, 0)
    set_heights(state, {0: 3})
    act(state, L.A_SITE)
    assert legal(state) == ALL14                             # the white stone fits everywhere
    act(state, L.A_COLUMN + 0)
    assert column(state, 0) == [W, W, W, W]
    assert score(state, 0) == 2 and state.get(L.G_WHITE_LEFT) == 11


def test_d06_capital_only_on_exactly_four_stones():
    state = turn_on(SP_CAPITAL)
    set_heights(state, {0: 4, 1: 3, 3: 4, 4: 2}, capped=(2,))
    act(state, L.A_SITE)
    assert legal(state) == cols(0, 3)
    act(state, L.A_COLUMN + 3)
    assert state.get(L.COL_H + 3) == 5 and state.get(L.COL_PART + 3 * L.COLPARTS + 4) == 0
    assert score(state, 0) == 5 and pget(state, 0, L.P_CAPS) == 5


def test_d06_capital_with_no_four_stone_column_places_nothing():
    state = turn_on(SP_CAPITAL)
    set_heights(state, {0: 3, 1: 2}, capped=(2,))
    act(state, L.A_SITE)
    assert turn_over(state)
    assert score(state, 0) == 0 and pget(state, 0, L.P_CAPS) == 6


@pytest.mark.parametrize("stones", [1, 2])
def test_d06_two_stones_with_one_left_places_it_and_skips_last(stones):
    # D6 with P5: with one own stone, "skip, then place" would repeat "place, then skip"
    state = turn_on(SP_TWO)
    pset(state, 0, L.P_STONES, stones)
    act(state, L.A_SITE)
    assert legal(state) == ALL14
    act(state, L.A_COLUMN + 3)
    if stones == 1:
        assert column(state, 3) == [0] and pget(state, 0, L.P_STONES) == 0
        assert L.A_SKIP not in legal(state) and L.A_COLUMN + 4 not in legal(state)
    else:
        assert legal(state) == ALL14 - cols(3)


def test_d06_skip_offered_when_a_different_group_still_fits():
    state = turn_on(SP_CAP_WHITE)                            # capital cannot fit, white can
    act(state, L.A_SITE)
    assert legal(state) == {L.A_SKIP}


def test_d06_part_that_cannot_be_placed_is_skipped_rest_placed():
    state = turn_on(SP_CAP_WHITE)                            # no column has 4 stones
    act(state, L.A_SITE)
    assert legal(state) == {L.A_SKIP}
    act(state, L.A_SKIP)
    assert legal(state) == ALL14
    act(state, L.A_COLUMN + 5)
    assert column(state, 5) == [W] and score(state, 0) == 2 and pget(state, 0, L.P_CAPS) == 6


@pytest.mark.parametrize("stones,room,expected", [
    (3, None, ALL14),                                # 3 stones, room everywhere: no skip
    (2, None, ALL14),                                # only 2 own stones: the last group is skipped (P5)
    (3, (4, 9), cols(4, 9)),                         # only 2 columns have room: likewise
])
def test_d06_three_stones_tile_keeps_the_most(stones, room, expected):
    state = turn_on(SP_ONE)
    if room is not None:
        set_heights(state, {c: 4 for c in range(14) if c not in room})
    pset(state, 0, L.P_STONES, stones)
    buy_tile(state, 0, L.T_THREE_STONES)
    assert legal(state) == expected


def test_d06_two_capitals_on_two_different_columns():
    state = turn_on(SP_ONE)
    set_heights(state, {3: 4, 8: 4, 10: 3})
    buy_tile(state, 0, L.T_TWO_CAPITALS)
    assert legal(state) == cols(3, 8)
    act(state, L.A_COLUMN + 8)
    assert legal(state) == cols(3)                           # not the column just capped
    act(state, L.A_COLUMN + 3)
    assert state.get(L.COL_H + 3) == 5 and state.get(L.COL_H + 8) == 5 and score(state, 0) == 10


def test_d06_no_skip_when_the_capital_fits():
    state = turn_on(SP_CAP_WHITE)
    set_heights(state, {6: 4})
    act(state, L.A_SITE)
    assert legal(state) == cols(6)


# =============================================================================================
# D7 column majority
# =============================================================================================
def test_d07_majority_worker_moves_to_new_holder_capital_counts():
    state = turn_on(SP_CAPITAL)
    set_column(state, 0, [1, 0, 0, 1], holder=1)             # 2-2, seat 1's part is higher
    assert pget(state, 0, L.P_WORKERS) == 10 and pget(state, 1, L.P_WORKERS) == 9
    act(state, L.A_SITE)
    assert legal(state) == cols(0)
    act(state, L.A_COLUMN + 0)
    assert holder(state, 0) == 0
    assert pget(state, 0, L.P_WORKERS) == 9 and pget(state, 1, L.P_WORKERS) == 10


def test_d07_column_majority_tie_higher_part():
    state = turn_on(SP_ONE)
    set_column(state, 0, [1, 1, 0], holder=1)
    act(state, L.A_SITE, L.A_COLUMN + 0)
    assert column(state, 0) == [1, 1, 0, 0]
    assert holder(state, 0) == 0                             # 2-2: seat 0 has the higher part
    assert pget(state, 0, L.P_WORKERS) == 9 and pget(state, 1, L.P_WORKERS) == 10


def test_d07_white_majority_returns_worker_and_marks_nobody():
    state = turn_on(SP_STONE_AND_WHITE)
    set_column(state, 0, [1, 1, W], holder=1)
    act(state, L.A_SITE)
    assert legal(state) == ALL14
    act(state, L.A_COLUMN + 5)                               # own stone elsewhere
    assert legal(state) == ALL14 - cols(5)
    act(state, L.A_COLUMN + 0)                               # white on top: 2-2, white higher
    assert column(state, 0) == [1, 1, W, W]
    assert holder(state, 0) == -1
    assert pget(state, 1, L.P_WORKERS) == 10 and pget(state, 0, L.P_WORKERS) == 10
    assert score(state, 0) == 3 + 2


def test_d07_two_parts_needed_to_hold_a_column():
    state = turn_on(SP_ONE)
    set_column(state, 0, [1])
    act(state, L.A_SITE, L.A_COLUMN + 0)
    assert column(state, 0) == [1, 0] and holder(state, 0) == -1
    assert pget(state, 0, L.P_WORKERS) == 10 and pget(state, 1, L.P_WORKERS) == 10


def test_d07_holder_without_worker_in_supply_leaves_column_unmarked():
    state = turn_on(SP_ONE)
    pset(state, 0, L.P_WORKERS, 0)
    set_column(state, 0, [1, 1, 0], holder=1)
    act(state, L.A_SITE, L.A_COLUMN + 0)
    assert holder(state, 0) == -1                            # seat 0 leads but has no worker
    assert pget(state, 1, L.P_WORKERS) == 10 and pget(state, 0, L.P_WORKERS) == 0
    assert seat_scoring(state, 0)["vp_column_majority"] == 0
    assert seat_scoring(state, 1)["vp_column_majority"] == 0
    # a worker comes back to seat 0's supply: the column stays unmarked until a placement there
    pset(state, 0, L.P_WORKERS, 1)
    assert holder(state, 0) == -1
    begin_main(state, 0, SP_CAPITAL)                         # a later turn of seat 0
    act(state, L.A_SITE, L.A_COLUMN + 0)
    assert holder(state, 0) == 0 and pget(state, 0, L.P_WORKERS) == 0
    assert seat_scoring(state, 0)["vp_column_majority"] == 5


# =============================================================================================
# D8 white stones
# =============================================================================================
@pytest.mark.parametrize("below", [0, 1, 2, 3])
def test_d08_white_stone_scores_two_at_any_height(below):
    state = turn_on(SP_STONE_AND_WHITE)
    set_heights(state, {c: 4 for c in range(2, 14)})               # only columns 0 and 1 have room
    set_heights(state, {1: below})
    act(state, L.A_SITE)
    assert legal(state) == cols(0, 1)
    act(state, L.A_COLUMN + 0, L.A_COLUMN + 1)
    assert state.get(L.COL_H + 1) == below + 1
    assert pget(state, 0, L.P_VP_WHITE) == 2 and pget(state, 0, L.P_VP_BUILD) == 3
    assert score(state, 0) == 5 and state.get(L.G_WHITE_LEFT) == 11


def test_d08_quarry_starts_with_twelve_and_empty_quarry_skips_white_part():
    state = turn_on(SP_STONE_AND_WHITE)
    assert state.get(L.G_WHITE_LEFT) == 12
    state.arr[L.G_WHITE_LEFT] = 0
    act(state, L.A_SITE)
    assert legal(state) == ALL14                             # no skip: the stone is the build
    act(state, L.A_COLUMN + 3)
    assert turn_over(state)                                  # nothing left of the build
    assert column(state, 3) == [0] and score(state, 0) == 3
    assert pget(state, 0, L.P_VP_WHITE) == 0 and sum(state.get(L.COL_H + c) for c in range(14)) == 1


# =============================================================================================
# D9 drawing
# =============================================================================================
def test_d09_drawn_card_usable_only_from_next_turn():
    state = turn_on(SP_ONE)                                  # governor space
    set_top(state, GOV, L.E_GOV_COLUMN)
    give_cards(state, 0, L.E_GOV_WORKERS)
    draw(state, GOV)
    assert pending(state, 0) == [L.E_GOV_COLUMN] and hand(state, 0) == [L.E_GOV_WORKERS]
    assert legal(state) == plays(L.E_GOV_WORKERS) | {L.A_END}   # the drawn card waits
    act(state, L.A_END)
    assert hand(state, 0) == [L.E_GOV_COLUMN, L.E_GOV_WORKERS] and pending(state, 0) == []
    for _ in range(3):
        quiet_turn(state, stack=ARCH)
    assert state.get(L.G_CUR) == 0 and phase(state) == L.PH_MOVE
    x = next(y for y in (SP_TEMPLE_GA, 10, SP_TEMPLE_GC) if site(state, y) == L.EMPTY)
    begin_main(state, 0, x)
    assert legal(state) == plays(L.E_GOV_COLUMN, L.E_GOV_WORKERS) | MAIN_OPTIONS


def test_d09_draw_takes_the_public_top_card():
    state = turn_on(SP_ONE)
    set_top(state, CENT, L.E_CENT_SWAP)
    top_before = state.get(L.STACK_TOP + CENT)
    draw(state, CENT)
    assert turn_over(state) and hand(state, 0) == [L.E_CENT_SWAP]
    assert state.get(L.STACK_TOP + CENT) == top_before + 1


def test_d09_cards_drawn_by_site_action_wait_too():
    state = turn_on(SP_DRAW_GE)                              # centurion space, draws gov + emp
    give_cards(state, 0, L.E_GOV_COLUMN, L.E_ARCH_STONE)
    set_top(state, GOV, L.E_GOV_HEIGHT)
    set_top(state, EMP, L.E_EMP_FLIP)
    act(state, L.A_SITE)
    # 4 cards in front of seat 0, but only 2 in hand: no instant tile, so the turn is over
    assert turn_over(state)
    assert hand(state, 0) == [L.E_GOV_COLUMN, L.E_GOV_HEIGHT, L.E_EMP_FLIP, L.E_ARCH_STONE]


def test_d09_empty_stack_gives_two_vp():
    state = turn_on(SP_ONE)
    empty_stack(state, EMP)
    act(state, L.A_DRAW)
    assert legal(state) == stacks(GOV, EMP, ARCH, CENT)     # the empty stack may be named
    act(state, L.A_STACK + EMP)
    assert score(state, 0) == 2 and pget(state, 0, L.P_VP_EMPTY) == 2
    assert pending(state, 0) == [] and hand(state, 0) == []


def test_d09_draw2_with_one_empty_stack():
    state = turn_on(SP_DRAW_AC)                              # architect + centurion stacks
    empty_stack(state, CENT)
    set_top(state, ARCH, L.E_ARCH_STONE)
    act(state, L.A_SITE)
    assert score(state, 0) == 2 and pending(state, 0) == [] and hand(state, 0) == [L.E_ARCH_STONE]


# =============================================================================================
# D10 playing cards
# =============================================================================================
def test_d10_one_card_per_turn():
    state = turn_on(SP_ONE)
    give_cards(state, 0, L.E_GOV_WORKERS, L.E_GOV_COLUMN)
    assert legal(state) == plays(L.E_GOV_WORKERS, L.E_GOV_COLUMN) | MAIN_OPTIONS
    act(state, L.A_PLAY + L.E_GOV_WORKERS)
    assert legal(state) == MAIN_OPTIONS
    draw(state, ARCH)
    assert turn_over(state)                                  # no second card after the draw
    assert pget(state, 0, L.P_HAND + L.E_GOV_COLUMN) == 1


@pytest.mark.parametrize("x", [SP_ONE, SP_EMP, SP_TWO, SP_DRAW_GE])
def test_d10_card_colour_matches_moved_worker_space(x):
    one_of_each = [L.E_GOV_WORKERS, L.E_EMP_FLIP, L.E_ARCH_STONE, L.E_CENT_MOVE]
    state = turn_on(x)
    give_cards(state, 0, *one_of_each)
    assert legal(state) == plays(one_of_each[colour_of(x)]) | ALL_TILES | MAIN_OPTIONS


def test_d10_three_cards_of_any_colours_for_a_tile():
    state = turn_on(SP_ONE)                                  # governor space
    give_cards(state, 0, L.E_EMP_FLIP, L.E_ARCH_STONE)
    assert legal(state) == MAIN_OPTIONS
    give_cards(state, 0, L.E_CENT_MOVE)
    assert legal(state) == ALL_TILES | MAIN_OPTIONS
    act(state, L.A_TILE + L.T_FLIP_BOTH,
        L.A_DISCARD + L.E_EMP_FLIP, L.A_DISCARD + L.E_ARCH_STONE, L.A_DISCARD + L.E_CENT_MOVE)
    assert hand(state, 0) == []
    assert pget(state, 0, L.P_TVAL) == 1 and pget(state, 0, L.P_TVAL + 1) == 1
    # the paid cards' effects are not used
    assert state.get(L.G_CENT_POS) == 0 and sum(state.get(L.COL_H + c) for c in range(14)) == 0
    assert legal(state) == MAIN_OPTIONS                      # that was the turn's card play


def test_d10_tile_never_costs_fewer_than_three_cards():
    state = turn_on(SP_ONE)
    give_cards(state, 0, L.E_GOV_COLUMN, L.E_EMP_FLIP, L.E_EMP_FLIP, L.E_CENT_SWAP)
    act(state, L.A_TILE + L.T_FLIP_BOTH)
    paid = tile_payments(state)
    assert all(len(p) == 3 for p in paid), paid


def test_d10_after_centurion_action_card_matches_centurion_space():
    state = turn_on(SP_CENT, centurion=8, others={(1, 0): 13, (2, 0): 15, (3, 0): 3})
    give_cards(state, 0, L.E_CENT_MOVE, L.E_EMP_FLIP)
    assert legal(state) == plays(L.E_CENT_MOVE) | MAIN_OPTIONS    # worker on a centurion space
    act(state, L.A_SITE)
    assert legal(state) == spaces(9, 10, 11)
    act(state, L.A_SPACE + SP_DRAW_AC)                       # emperor space: draws 2
    assert len(pending(state, 0)) == 2
    assert legal(state) == plays(L.E_EMP_FLIP) | {L.A_END}


def test_d10_after_centurion_action_card_matches_centurions_final_space():
    state = turn_on(SP_CENT, centurion=8, others={(1, 0): 13, (2, 0): 2, (3, 0): 4})
    set_top(state, CENT, L.E_CENT_ANY)
    give_cards(state, 0, L.E_CENT_MOVE, L.E_EMP_FLIP)
    act(state, L.A_SITE, L.A_SPACE + SP_TEMPLE_EC)           # Centurion on 11 (centurion colour)
    act(state, L.A_STACK + CENT, L.A_SPACE + SP_DRAW_AC)     # ... Temple card moves it to 9 (emperor)
    assert state.get(L.G_CENT_POS) == SP_DRAW_AC
    # "the same color as the space the Centurion is now standing on": emperor
    assert legal(state) == plays(L.E_EMP_FLIP) | {L.A_END}


# =============================================================================================
# D11 Temple card
# =============================================================================================
def test_d11_empty_stack_cannot_be_chosen():
    state = turn_on(SP_TEMPLE_GA)                            # governor + architect
    empty_stack(state, GOV)
    act(state, L.A_SITE)
    assert legal(state) == stacks(ARCH)


@pytest.mark.parametrize("emp_top,expected", [
    (L.E_EMP_TEMPLE, stacks(CENT)), (L.E_EMP_FLIP, stacks(EMP, CENT))])
def test_d11_stack_topped_by_temple_card_cannot_be_chosen(emp_top, expected):
    state = turn_on(SP_TEMPLE_EC)                            # emperor + centurion
    set_top(state, EMP, emp_top)
    act(state, L.A_SITE)
    assert legal(state) == expected


def test_d11_nothing_choosable_means_nothing_happens():
    state = turn_on(SP_TEMPLE_EC)
    set_top(state, EMP, L.E_EMP_TEMPLE)
    empty_stack(state, CENT)
    act(state, L.A_SITE)
    assert turn_over(state) and score(state, 0) == 0


def test_d11_used_card_stays_on_its_stack():
    state = turn_on(SP_TEMPLE_GA)
    set_top(state, ARCH, L.E_ARCH_STONE)
    top_before = state.get(L.STACK_TOP + ARCH)
    act(state, L.A_SITE, L.A_STACK + ARCH)
    assert legal(state) == ALL14
    act(state, L.A_COLUMN + 0)
    assert column(state, 0) == [0] and score(state, 0) == 3
    assert state.get(L.STACK_TOP + ARCH) == top_before and stack_top(state, ARCH) == L.E_ARCH_STONE
    assert hand(state, 0) == [] and pending(state, 0) == []


def test_d11_emperor_temple_card_from_hand_same_limits():
    state = turn_on(SP_EMP)                                  # emperor space
    give_cards(state, 0, L.E_EMP_TEMPLE)
    set_top(state, EMP, L.E_EMP_TEMPLE)
    empty_stack(state, GOV)
    act(state, L.A_PLAY + L.E_EMP_TEMPLE)
    assert legal(state) == stacks(ARCH, CENT)


# =============================================================================================
# D12 Centurion
# =============================================================================================
def test_d12_centurion_landing_on_centurion_space_does_nothing():
    state = turn_on(SP_ONE_CENT, centurion=0, others={(1, 0): 3, (2, 0): 8, (3, 0): 11})
    give_cards(state, 0, L.E_CENT_ANY)
    act(state, L.A_PLAY + L.E_CENT_ANY)
    assert legal(state) == spaces(1, 2, 4, 5, 6, 7, 9, 10, 12, 13, 15)
    act(state, L.A_SPACE + SP_CENT)
    assert state.get(L.G_CENT_POS) == SP_CENT and site(state, 0) == L.EMPTY
    assert state.get(L.G_SP) == 0 and legal(state) == MAIN_OPTIONS
    assert score(state, 0) == 0 and pending(state, 0) == []


def test_d12_swap_worker_takes_centurion_old_space():
    state = turn_on(SP_ONE_CENT, centurion=0, others={(1, 0): SP_EMP_2, (2, 0): 4, (3, 0): 9})
    give_cards(state, 0, L.E_CENT_SWAP)
    act(state, L.A_PLAY + L.E_CENT_SWAP)
    assert legal(state) == spaces(4, 9, SP_EMP_2, SP_ONE_CENT)   # any worker, own included
    act(state, L.A_SPACE + SP_EMP_2)
    assert state.get(L.G_CENT_POS) == SP_EMP_2 and site(state, SP_EMP_2) == L.OCC_CENTURION
    assert site(state, 0) == 2 and pget(state, 1, L.P_WPOS) == 0
    # the Centurion uses its new space's action: place an Emperor tile
    assert decision(state) == "Emperor tile" and legal(state) == ALL14
    act(state, L.A_COLUMN + 3)
    assert state.get(L.COL_TILE + 3) == 0 and pget(state, 0, L.P_TPOS) == 3


def test_d12_swap_onto_centurion_space_does_nothing():
    state = turn_on(SP_ONE_CENT, centurion=0, others={(1, 0): SP_CENT, (2, 0): 4, (3, 0): 9})
    give_cards(state, 0, L.E_CENT_SWAP)
    act(state, L.A_PLAY + L.E_CENT_SWAP, L.A_SPACE + SP_CENT)
    assert state.get(L.G_CENT_POS) == SP_CENT and pget(state, 1, L.P_WPOS) == 0
    assert state.get(L.G_SP) == 0 and legal(state) == MAIN_OPTIONS


def test_d12_centurion_card_moves_it_like_a_worker():
    state = turn_on(SP_ONE_CENT, centurion=4, others={(1, 0): 5, (2, 0): 8, (3, 0): 13})
    give_cards(state, 0, L.E_CENT_MOVE)
    act(state, L.A_PLAY + L.E_CENT_MOVE)
    assert legal(state) == spaces(9, 10, 11)
    act(state, L.A_SPACE + SP_DRAW_AC)
    assert site(state, 4) == L.EMPTY and state.get(L.G_CENT_POS) == SP_DRAW_AC
    assert len(pending(state, 0)) == 2                       # the Centurion drew 2 cards


# =============================================================================================
# D13 Governor cards
# =============================================================================================
@pytest.mark.parametrize("c,vp", [(0, 3 + 2 + 1 + 3 + 5), (1, 0), (2, 2 + 3), (3, 0)])
def test_d13_governor_column_card(c, vp):
    state = turn_on(SP_ONE)
    set_column(state, 0, [0, 0, 0, 0], capital=0)
    set_column(state, 1, [0, 0, 0, 0], capital=0)
    place_tile(state, 0, 0, 1)                               # own Emperor tile: column yields 0
    set_column(state, 2, [1, 0, W, 0])
    place_tile(state, 1, 0, 2)                               # another seat's tile: counts
    set_column(state, 3, [1, 1])
    give_cards(state, 0, L.E_GOV_COLUMN)
    act(state, L.A_PLAY + L.E_GOV_COLUMN)
    assert legal(state) == ALL14
    act(state, L.A_COLUMN + c)
    assert scores(state) == [vp, 0, 0, 0] and pget(state, 0, L.P_VP_CARDS) == vp


@pytest.mark.parametrize("held,vp", [(0, 0), (1, 5), (2, 10), (3, 15), (4, 15)])
def test_d13_governor_workers_card_capped_at_15(held, vp):
    state = turn_on(SP_ONE)
    for c in range(held):
        set_column(state, c, [0, 0], holder=0)
    set_column(state, 10, [1, 1], holder=1)
    give_cards(state, 0, L.E_GOV_WORKERS)
    act(state, L.A_PLAY + L.E_GOV_WORKERS)
    assert scores(state) == [vp, 0, 0, 0]


def _height_position(state):
    # h1: seat 1 leads (seat 0 has 1); h2: seat 0 and white 2-2; h3: seat 0 alone (3);
    # h4: seats 2 and 3 tie; capitals: seats 0 and 1 tie
    set_column(state, 0, [1, 0, 0, 2], capital=0)
    set_column(state, 1, [1, 0, 0, 2], capital=1)
    set_column(state, 2, [2, W, 0, 3], capital=0)
    set_column(state, 3, [0, W, 1, 3], capital=1)


def test_d13_governor_height_card_offers_heights_where_leading():
    state = turn_on(SP_ONE)
    _height_position(state)
    give_cards(state, 0, L.E_GOV_HEIGHT)
    act(state, L.A_PLAY + L.E_GOV_HEIGHT)
    assert legal(state) == {L.A_HEIGHT + 1, L.A_HEIGHT + 2, L.A_HEIGHT + 4}


@pytest.mark.parametrize("level,vp", [(2, 5), (3, 15), (5, 5)])
def test_d13_governor_height_card_value_or_tie_value_nobody_else(level, vp):
    state = turn_on(SP_ONE)
    _height_position(state)
    give_cards(state, 0, L.E_GOV_HEIGHT)
    act(state, L.A_PLAY + L.E_GOV_HEIGHT, L.A_HEIGHT + level - 1)
    assert scores(state) == [vp, 0, 0, 0]


# =============================================================================================
# D14 Emperor tiles, D15 instant bonus tiles
# =============================================================================================
@pytest.mark.parametrize("k,value", [(0, 5), (1, 3)])
def test_d14_placing_a_tile_never_flips_it(k, value):
    state = turn_on(SP_EMP)
    place_tile(state, 0, 0, -1, flipped=True)                # tile 0 flipped, in supply
    set_column(state, 2, [0, 0])
    act(state, L.A_SITE)
    assert legal(state) == EMPTILES                          # different sides: a real choice
    act(state, L.A_EMPTILE + k)
    assert legal(state) == ALL14
    act(state, L.A_COLUMN + 2)
    assert pget(state, 0, L.P_TPOS + k) == 2 and pget(state, 0, L.P_TPOS + 1 - k) == -1
    assert pget(state, 0, L.P_TVAL + k) == (1 if k == 0 else 0)
    assert state.get(L.COL_TILE + 2) == k
    assert seat_scoring(state, 0)["vp_emperor"] == 2 * value


def test_d14_one_tile_per_column_space():
    state = turn_on(SP_EMP)
    place_tile(state, 1, 0, 0)                               # another seat's tile
    place_tile(state, 0, 1, 5)                               # own tile 1
    act(state, L.A_SITE)
    assert legal(state) == ALL14 - cols(0, 5)
    act(state, L.A_COLUMN + 7)
    assert state.get(L.COL_TILE + 7) == 0 and pget(state, 0, L.P_TPOS) == 7


def test_d14_no_tile_left_places_nothing():
    state = turn_on(SP_EMP)
    place_tile(state, 0, 0, 3)
    place_tile(state, 0, 1, 5)
    act(state, L.A_SITE)
    assert turn_over(state)
    assert [state.get(L.COL_TILE + c) for c in range(14)].count(-1) == 12


@pytest.mark.parametrize("k", [0, 1])
def test_d14_flip_applies_to_tile_on_board_or_in_supply(k):
    state = turn_on(SP_DRAW_AC)                              # emperor space
    place_tile(state, 0, 0, 4)                               # tile 0 on the board, tile 1 in supply
    give_cards(state, 0, L.E_EMP_FLIP)
    act(state, L.A_PLAY + L.E_EMP_FLIP)
    assert legal(state) == EMPTILES
    act(state, L.A_EMPTILE + k)
    assert pget(state, 0, L.P_TVAL + k) == 1 and pget(state, 0, L.P_TVAL + 1 - k) == 0
    assert pget(state, 0, L.P_TPOS) == 4 and pget(state, 0, L.P_TPOS + 1) == -1


def test_d14_flip_offers_only_unflipped_tiles():
    state = turn_on(SP_DRAW_AC)
    place_tile(state, 0, 0, 4, flipped=True)
    give_cards(state, 0, L.E_EMP_FLIP)
    act(state, L.A_PLAY + L.E_EMP_FLIP)
    assert legal(state) == {L.A_EMPTILE + 1}


def test_d15_instant_tile_usable_once_per_game():
    state = turn_on(SP_ONE)
    place_tile(state, 0, 0, 3)                               # flip both: placed or not
    buy_tile(state, 0, L.T_FLIP_BOTH)
    assert pget(state, 0, L.P_TVAL) == 1 and pget(state, 0, L.P_TVAL + 1) == 1
    assert [state.get(L.ITILE_AVAIL + t) for t in range(4)] == [1, 0, 1, 1]
    draw(state, ARCH)
    assert turn_over(state)
    give_cards(state, 1, L.E_EMP_FLIP, L.E_ARCH_STONE, L.E_CENT_MOVE)
    begin_main(state, 1, 10)                                 # governor space: no card matches
    assert legal(state) == tiles(0, 2, 3) | MAIN_OPTIONS


# =============================================================================================
# D16 end trigger
# =============================================================================================
def test_d16_end_checked_after_every_part():
    state = turn_on(SP_STONE_AND_WHITE)
    pset(state, 0, L.P_STONES, 1)
    act(state, L.A_SITE)
    assert legal(state) == ALL14
    act(state, L.A_COLUMN + 0)                               # the last own stone
    assert state.get(L.G_END_TRIGGER) == L.END_OUT_OF_STONES and state.get(L.G_END_SEAT) == 0
    assert decision(state) == "build" and legal(state) == ALL14 - cols(0)   # white still to come
    act(state, L.A_COLUMN + 1)
    assert column(state, 1) == [W] and turn_over(state)


def test_d16_temple_full_ends_game_capitals_not_needed():
    state = turn_on(SP_ONE)
    set_heights(state, {c: 4 for c in range(1, 14)})
    set_column(state, 0, [W, W, W], from_supply=False)
    act(state, L.A_SITE)
    assert state.get(L.G_END_TRIGGER) == L.END_NONE
    assert legal(state) == cols(0)
    act(state, L.A_COLUMN + 0)
    assert state.get(L.G_END_TRIGGER) == L.END_TEMPLE_FULL and state.get(L.G_END_SEAT) == 0
    assert turn_over(state)


@pytest.mark.parametrize("trigger_seat", [0, 1, 2, 3])
def test_d16_round_is_finished_so_turns_are_equal(trigger_seat):
    state = setup_game(4)
    for _ in range(trigger_seat):
        quiet_turn(state)
    assert state.get(L.G_CUR) == trigger_seat
    pset(state, trigger_seat, L.P_STONES, 1)
    begin_main(state, trigger_seat, next(y for y in (SP_ONE, SP_ONE_CENT) if site(state, y) == L.EMPTY))
    act(state, L.A_SITE, L.A_COLUMN + 0)
    assert state.get(L.G_END_TRIGGER) == L.END_OUT_OF_STONES
    for seat in range(trigger_seat + 1, 4):
        assert not api.is_terminal(state) and state.get(L.G_CUR) == seat
        quiet_turn(state)
    assert api.is_terminal(state)
    assert [pget(state, p, L.P_TURNS) for p in range(4)] == [1, 1, 1, 1]
    assert state.get(L.G_ROUND) == 1


# =============================================================================================
# D17 height majorities, D18 ties for the win, D19 no wrap at 100
# =============================================================================================
def test_d17_height_majorities():
    pos = {"players": 3, "columns": [
        {"parts": [0, 0, W, 0], "capital": 2},
        {"parts": [0, W, W, 1], "capital": 2},
        {"parts": [1, 0, W, 2], "capital": 1},
        {"parts": [W, W, 1]},
        {"parts": [2, 2, 1]},
    ]}
    # h1: seat 0 2, seats 1/2 and white 1 -> seat 0 alone (5)
    # h2: seat 0 2, white 2, seat 2 1 -> tie: seat 0 the tie value (5), white nothing
    # h3: white 3, seat 1 2 -> white alone: nobody scores
    # h4: one part each -> nobody has 2
    # capitals: seat 2 2, seat 1 1 -> seat 2 (10)
    seats = api.final_scoring(position_state(pos))["seats"]
    heights = [[s[f"vp_height_{h}"] for h in range(1, 5)] + [s["vp_capitals"]] for s in seats]
    assert heights == [[5, 5, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 10]]


def test_d17_three_way_tie_all_score_tie_value():
    pos = {"players": 4, "columns": [
        {"parts": [0]}, {"parts": [0]}, {"parts": [1]}, {"parts": [1]},
        {"parts": [2]}, {"parts": [2]}, {"parts": [3]},
    ]}
    seats = api.final_scoring(position_state(pos))["seats"]
    assert [s["vp_height_1"] for s in seats] == [3, 3, 3, 0]


@pytest.mark.parametrize("vp,left,winner", [
    ([11, 10], [20, 0], 0),              # more VP wins, whatever is left
    ([10, 10], [3, 5], 0),               # tie: fewer parts left in supply wins
    ([10, 10], [5, 3], 1),
    ([10, 10], [4, 4], 1),               # still tied: later in turn order
    ([10, 10, 9], [4, 4, 0], 1),
    ([10, 10, 10], [4, 6, 4], 2),
    ([10, 10, 10], [4, 4, 6], 1),
])
def test_d18_ties_for_the_win(vp, left, winner):
    pos = {"players": len(vp), "columns": [], "vp": vp, "parts_left": left}
    assert api.final_scoring(position_state(pos))["winner"] == winner


def test_d19_scores_above_100_are_plain_integers():
    state = turn_on(SP_ONE)
    pset(state, 0, L.P_SCORE, 99)
    act(state, L.A_SITE, L.A_COLUMN + 0)
    assert score(state, 0) == 102
    pos = {"players": 2, "columns": [{"parts": [0, 0]}, {"parts": [0, 0]}], "vp": [150, 99]}
    result = api.final_scoring(position_state(pos))
    # 2 majority workers (10), height 1 (5) and height 2 (10) on top of 150
    assert result["seats"][0]["total"] == 175 and result["winner"] == 0


# =============================================================================================
# D20 setup
# =============================================================================================
@pytest.mark.parametrize("n", [3, 4])
def test_d20_centurion_on_space_0_and_one_worker_each_in_seat_order(n):
    state = api.new_game(n_players=n, seed=3)
    assert state.get(L.G_CENT_POS) == 0 and site(state, 0) == L.OCC_CENTURION
    assert phase(state) == L.PH_SETUP
    taken = {0}
    for p, x in enumerate([5, 6, 12, 15][:n]):
        assert state.get(L.G_CUR) == p
        assert legal(state) == spaces(*(set(range(NSPACES)) - taken))   # empty spaces only
        act(state, L.A_SPACE + x)
        taken.add(x)
        assert site(state, x) == p * 2 and pget(state, p, L.P_WPOS) == x
    assert phase(state) == L.PH_MOVE and state.get(L.G_CUR) == 0 and state.get(L.G_ROUND) == 1


def test_d20_two_players_alternate_until_each_has_two():
    state = api.new_game(n_players=2, seed=3)
    order = []
    for x in [5, 6, 12, 15]:
        order.append(state.get(L.G_CUR))
        assert phase(state) == L.PH_SETUP
        act(state, L.A_SPACE + x)
    assert order == [0, 1, 0, 1]
    assert [pget(state, 0, L.P_WPOS), pget(state, 0, L.P_WPOS + 1)] == [5, 12]
    assert [pget(state, 1, L.P_WPOS), pget(state, 1, L.P_WPOS + 1)] == [6, 15]
    assert [site(state, x) for x in (5, 6, 12, 15)] == [0, 2, 1, 3]
    assert phase(state) == L.PH_CHOOSE_WORKER and state.get(L.G_CUR) == 0


def test_d20_setup_only_on_empty_spaces():
    state = api.new_game(n_players=4)
    act(state, L.A_SPACE + 5)
    assert legal(state) == spaces(*range(1, NSPACES)) - spaces(5)
    with pytest.raises(api.IllegalActionError):
        api.apply_action(state, L.A_SPACE + 5)


# =============================================================================================
# project decisions P1-P8
# =============================================================================================
def test_p1_temple_space_reached_by_centurion_during_temple_card_does_nothing():
    state = turn_on(SP_TEMPLE_EC, centurion=0, others={(1, 0): 3, (2, 0): 8, (3, 0): 13})
    set_top(state, CENT, L.E_CENT_ANY)
    act(state, L.A_SITE, L.A_STACK + CENT)
    assert L.A_SPACE + SP_TEMPLE_GC in legal(state)
    act(state, L.A_SPACE + SP_TEMPLE_GC)
    assert state.get(L.G_CENT_POS) == SP_TEMPLE_GC
    assert turn_over(state) and score(state, 0) == 0


def test_p1_same_landing_from_a_hand_card_uses_the_temple():
    state = turn_on(SP_ONE_CENT, centurion=0, others={(1, 0): 3, (2, 0): 8, (3, 0): 13})
    give_cards(state, 0, L.E_CENT_ANY)
    act(state, L.A_PLAY + L.E_CENT_ANY, L.A_SPACE + SP_TEMPLE_GC)
    assert decision(state) == "Temple card" and legal(state) == stacks(GOV, CENT)


def test_p1_temple_centurion_card_still_uses_other_spaces():
    state = turn_on(SP_TEMPLE_EC, centurion=0, others={(1, 0): 3, (2, 0): 8, (3, 0): 13})
    set_top(state, CENT, L.E_CENT_ANY)
    act(state, L.A_SITE, L.A_STACK + CENT, L.A_SPACE + SP_DRAW_AC)
    assert turn_over(state) and len(hand(state, 0)) == 2    # the Centurion drew 2 cards


def test_p2_capital_two_stones_tile_puts_both_stones_on_one_other_column():
    state = turn_on(SP_ONE)
    heights = {c: 4 for c in range(14)}
    heights.update({1: 2, 2: 3})
    set_heights(state, heights)
    buy_tile(state, 0, L.T_CAPITAL_TWO_STONES)
    assert legal(state) == ALL14 - cols(1, 2)                # the capital: any 4-stone column
    act(state, L.A_COLUMN + 0)
    assert legal(state) == cols(1)                           # both stones fit only on column 1
    act(state, L.A_COLUMN + 1)
    assert column(state, 1) == [W, W, 0, 0] and state.get(L.COL_H + 0) == 5
    assert score(state, 0) == 5 + 1 + 3


def test_p3_site_action_follows_the_moved_worker_after_a_swap():
    state = turn_on(SP_DRAW_GE, centurion=SP_ONE, others={(1, 0): 8, (2, 0): 11, (3, 0): 13})
    give_cards(state, 0, L.E_CENT_SWAP)
    act(state, L.A_PLAY + L.E_CENT_SWAP)
    assert legal(state) == spaces(SP_DRAW_GE, 8, 11, 13)
    act(state, L.A_SPACE + SP_DRAW_GE)                       # swap with own moved worker
    assert pget(state, 0, L.P_WPOS) == SP_ONE and len(pending(state, 0)) == 2
    act(state, L.A_SITE)                                     # now the worker's space: build 1 stone
    assert decision(state) == "build" and legal(state) == ALL14
    act(state, L.A_COLUMN + 0)
    assert column(state, 0) == [0] and score(state, 0) == 3
    assert turn_over(state) and len(hand(state, 0)) == 2    # no second draw from space 3


@pytest.mark.parametrize("start_round,turns_to_end", [(200, 4), (199, 8)])
def test_p4_round_limit_scores_the_game(start_round, turns_to_end):
    assert load_rules().data["limits"]["max_rounds"] == 200
    state = setup_game(4)
    state.arr[L.G_ROUND] = start_round
    for _ in range(turns_to_end - 1):
        quiet_turn(state)
        assert not api.is_terminal(state)
    quiet_turn(state)
    assert api.is_terminal(state) and state.get(L.G_END_TRIGGER) == L.END_ROUND_LIMIT


@pytest.mark.parametrize("name", sorted(STRATEGY_IDS))
def test_p4_builtin_strategies_never_reach_the_round_limit(name):
    sid = STRATEGY_IDS[name]
    for n in (2, 3, 4):
        res = play_batch(load_rules(), n, np.arange(100), [sid] * n)
        assert (res.games[:, 2] != L.END_NONE).all()
        assert (res.games[:, 2] != L.END_ROUND_LIMIT).all(), f"{n} players"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_p4_mixed_random_and_greedy_never_reach_the_round_limit(n):
    sids = [STRATEGY_IDS["random"], STRATEGY_IDS["greedy"]] * 2
    res = play_batch(load_rules(), n, np.arange(100), sids[:n])
    assert (res.games[:, 2] != L.END_ROUND_LIMIT).all()


def test_p5_emperor_tiles_with_same_side_up_are_one_choice():
    state = turn_on(SP_EMP)
    act(state, L.A_SITE)
    assert legal(state) == ALL14                             # no "which tile" question
    state = turn_on(SP_EMP)
    place_tile(state, 0, 1, -1, flipped=True)
    act(state, L.A_SITE)
    assert legal(state) == EMPTILES


def test_p5_flip_with_both_front_tiles_in_supply_is_one_choice():
    state = turn_on(SP_DRAW_AC)
    give_cards(state, 0, L.E_EMP_FLIP)
    act(state, L.A_PLAY + L.E_EMP_FLIP)
    assert legal(state) == {L.A_EMPTILE}


def test_p5_tile_cards_are_paid_in_non_decreasing_order():
    state = turn_on(SP_ONE)
    give_cards(state, 0, L.E_GOV_COLUMN, L.E_EMP_FLIP, L.E_EMP_FLIP, L.E_CENT_SWAP, L.E_CENT_SWAP)
    act(state, L.A_TILE + L.T_FLIP_BOTH)
    # first card: cent_swap is not offered, since only 1 more card >= it would be left for 2
    assert legal(state) == {L.A_DISCARD + L.E_GOV_COLUMN, L.A_DISCARD + L.E_EMP_FLIP}
    act(state, L.A_DISCARD + L.E_EMP_FLIP)
    # then nothing below emp_flip
    assert legal(state) == {L.A_DISCARD + L.E_EMP_FLIP, L.A_DISCARD + L.E_CENT_SWAP}
    act(state, L.A_DISCARD + L.E_CENT_SWAP)
    assert legal(state) == {L.A_DISCARD + L.E_CENT_SWAP}
    act(state, L.A_DISCARD + L.E_CENT_SWAP)
    assert hand(state, 0) == [L.E_GOV_COLUMN, L.E_EMP_FLIP]


def test_p5_each_set_of_three_cards_is_exactly_one_payment():
    state = turn_on(SP_ONE)
    give_cards(state, 0, L.E_GOV_COLUMN, L.E_EMP_FLIP, L.E_EMP_FLIP, L.E_CENT_SWAP)
    act(state, L.A_TILE + L.T_FLIP_BOTH)
    paid = tile_payments(state)
    g, f, s = L.E_GOV_COLUMN, L.E_EMP_FLIP, L.E_CENT_SWAP
    assert sorted(paid) == sorted([(g, f, f), (g, f, s), (f, f, s)])


def test_p6_parts_placed_in_pattern_order_each_scoring_at_once():
    state = turn_on(SP_ONE)
    set_column(state, 0, [1, 0, 0, 1], holder=1)
    buy_tile(state, 0, L.T_CAPITAL_TWO_STONES)
    assert legal(state) == cols(0)                           # the capital comes first
    act(state, L.A_COLUMN + 0)
    # the capital scored and took the majority before the stones are placed
    assert score(state, 0) == 5 and holder(state, 0) == 0
    assert decision(state) == "build" and legal(state) == ALL14 - cols(0)
    act(state, L.A_COLUMN + 4)
    assert column(state, 4) == [0, 0] and score(state, 0) == 5 + 3 + 2 and holder(state, 4) == 0


def test_p6_stone_then_white_own_stone_below():
    state = turn_on(SP_STONE_THEN_WHITE)
    act(state, L.A_SITE, L.A_COLUMN + 6)
    assert column(state, 6) == [0, W] and score(state, 0) == 3 + 2


def test_p7_governor_column_card_may_name_any_column():
    state = turn_on(SP_ONE)
    set_column(state, 3, [1, 1])
    give_cards(state, 0, L.E_GOV_COLUMN)
    act(state, L.A_PLAY + L.E_GOV_COLUMN)
    assert legal(state) == ALL14
    act(state, L.A_COLUMN + 9)                               # an empty column: 0 VP
    assert score(state, 0) == 0 and state.get(L.G_SP) == 0 and hand(state, 0) == []


def test_p7_emperor_tile_may_go_beside_any_column_without_one():
    state = turn_on(SP_EMP)
    set_heights(state, {0: 4, 1: 2}, capped=(2,))
    place_tile(state, 1, 0, 3)
    act(state, L.A_SITE)
    assert legal(state) == ALL14 - cols(3)


def test_p7_card_with_no_effect_may_be_played():
    state = turn_on(SP_ONE)                                  # no majority anywhere
    give_cards(state, 0, L.E_GOV_HEIGHT)
    assert L.A_PLAY + L.E_GOV_HEIGHT in legal(state)
    act(state, L.A_PLAY + L.E_GOV_HEIGHT)
    assert hand(state, 0) == [] and score(state, 0) == 0
    assert state.get(L.G_SP) == 0 and legal(state) == MAIN_OPTIONS


def test_p7_drawing_may_name_an_empty_stack():
    state = turn_on(SP_ONE)
    for t in range(4):
        empty_stack(state, t)
    assert legal(state) == MAIN_OPTIONS
    act(state, L.A_DRAW)
    assert legal(state) == stacks(GOV, EMP, ARCH, CENT)
    act(state, L.A_STACK + ARCH)
    assert turn_over(state) and score(state, 0) == 2


def test_p8_card_vp_credited_to_the_card_played():
    state = turn_on(SP_TWO)                                  # architect space, builds 2 stones
    give_cards(state, 0, L.E_ARCH_STONE)
    act(state, L.A_PLAY + L.E_ARCH_STONE, L.A_COLUMN + 0)
    assert state.stat(0, L.S_PLAYS + L.E_ARCH_STONE) == 1
    assert state.stat(0, L.S_PLAY_VP + L.E_ARCH_STONE) == 3
    act(state, L.A_SITE, L.A_COLUMN + 1, L.A_COLUMN + 2)     # the site action is not the card's
    assert score(state, 0) == 3 + 3 + 3
    assert state.stat(0, L.S_PLAY_VP + L.E_ARCH_STONE) == 3


def test_p8_tile_vp_credited_end_value_not():
    state = turn_on(SP_EMP)
    set_column(state, 5, [0, 0])
    give_cards(state, 0, L.E_EMP_PLACE)
    act(state, L.A_PLAY + L.E_EMP_PLACE, L.A_COLUMN + 5)
    assert state.stat(0, L.S_PLAYS + L.E_EMP_PLACE) == 1
    assert state.stat(0, L.S_PLAY_VP + L.E_EMP_PLACE) == 0   # the 6 VP come at the end
    assert seat_scoring(state, 0)["vp_emperor"] == 6
    state = turn_on(SP_ONE)
    buy_tile(state, 0, L.T_THREE_STONES)
    act(state, L.A_COLUMN + 0, L.A_COLUMN + 1, L.A_COLUMN + 2)
    assert state.stat(0, L.S_PLAY_VP + L.NEFF + L.T_THREE_STONES) == 9
    assert state.stat(0, L.S_PLAYS + L.NEFF + L.T_THREE_STONES) == 1


# =============================================================================================
# V1 variant keys: players.start_vp (the rulebook gives no starting VP)
# =============================================================================================
def test_v1_start_vp_default_is_zero_and_leaves_the_rules_hash_as_before():
    rules = load_rules()
    assert rules.data["players"]["start_vp"] == [0, 0, 0, 0]
    older = copy.deepcopy(rules.data)
    del older["players"]["start_vp"]                        # rules (and runs) from before the key
    assert validate(older).hash == rules.hash
    assert validate(older).data["players"]["start_vp"] == [0, 0, 0, 0]
    assert load_rules(overrides=["players.start_vp=0,0,0,8"]).hash != rules.hash


def test_v1_start_vp_counts_in_the_total_and_decides_the_winner():
    pos = {"players": 3, "columns": [], "vp": [20, 15, 10], "parts_left": [4, 4, 4]}
    plain = api.final_scoring(position_state(pos))
    assert plain["winner"] == 0 and "start_vp" not in plain["seats"][0]
    rules = load_rules(overrides=["players.start_vp=0,0,11"])
    state = position_state(pos, rules)
    assert [api.score_now(state, p) for p in range(3)] == [20, 15, 21]   # the standing counts them
    result = api.final_scoring(state)
    assert [s["total"] for s in result["seats"]] == [20, 15, 21]
    assert [s["start_vp"] for s in result["seats"]] == [0, 0, 11]
    assert result["seats"][2]["vp_build"] == 0               # in no category: the total only
    assert result["winner"] == 2


def test_v1_start_vp_in_played_games_and_its_values():
    rules = load_rules(overrides=["players.start_vp=0,0,0,8"])
    plain = play_batch(load_rules(), 4, np.arange(20), ["greedy"] * 4)
    given = play_batch(rules, 4, np.arange(20), ["greedy"] * 4)
    col = L.NBREAK                                            # the total, after the 11 categories
    assert (given.seats[:, :, col] == given.seats[:, :, :L.NBREAK].sum(axis=2) + [0, 0, 0, 8]).all()
    assert (plain.seats[:, :, col] == plain.seats[:, :, :L.NBREAK].sum(axis=2)).all()
    assert (given.games[:, 3] == 3).sum() > (plain.games[:, 3] == 3).sum()   # seat 3 wins more
    # a shorter list: the seats past it start with 0; a 2-player game reads the first 2
    assert load_rules(overrides=["players.start_vp=0,3"]).data["players"]["start_vp"] == [0, 3, 0, 0]
    for bad in ("0,0,0,0,1", "-1", "1000", "x", ""):
        with pytest.raises(RulesError, match="players.start_vp"):
            load_rules(overrides=[f"players.start_vp={bad}"])


# =============================================================================================
# V2: half points of starting VP (players.start_vp x.5), Go's komi
# =============================================================================================
def _standings(pos, start_vp):
    """Who is ahead in ``pos`` under ``start_vp``, as every reader of the order sees it: the
    final scoring, the result tables' ranks, the seat compensation's re-scoring, the search
    player's win reward, and the standing the strategies read (``api.score_now``)."""
    from analysis.compensation_stats import winners
    from evora_sim.result_tables import ranks
    from strategies.mcts import L_SCORE, R_WIN, WIDTH, seat_rewards

    rules = load_rules(overrides=[f"players.start_vp={start_vp}"])
    state = position_state(pos, rules)
    n = state.n_players
    result = api.final_scoring(state)
    totals = np.array([[s["total"] for s in result["seats"]]])
    parts = np.array([pos["parts_left"]])
    half = rules.half_points(n)
    rank = ranks(totals, parts, half)[0]
    rescored = winners(2 * totals + half, parts)[0]
    rew, tot = np.zeros(L.MAXP), np.zeros(L.MAXP)
    seat_rewards(state.arr.copy(), rules.packed, R_WIN, L_SCORE, np.zeros((1, WIDTH)), rew, tot)
    scored = state.clone()
    E.final_scoring(scored.arr, rules.packed)
    return {"final": result["winner"], "rank 1": int(np.argmin(rank)), "re-scored": int(rescored),
            "search": int(np.argmax(rew[:n])), "score_now": [api.score_now(state, p) for p in range(n)],
            "seats": result["seats"], "table": scoring_table(scored)}


def test_v2_half_point_decides_a_tie_on_vp_before_the_parts_left():
    pos = {"players": 3, "columns": [], "vp": [20, 18, 20], "parts_left": [4, 4, 2]}
    plain = _standings(pos, "0,0,0")
    assert {plain[k] for k in ("final", "rank 1", "re-scored", "search")} == {2}   # D18: fewer parts left
    half = _standings(pos, "0.5,0,0")
    assert {half[k] for k in ("final", "rank 1", "re-scored", "search")} == {0}    # the half point first
    assert [s["total"] for s in half["seats"]] == [20, 18, 20]                    # totals stay whole
    assert [s["start_vp"] for s in half["seats"]] == [0.5, 0, 0]
    assert half["score_now"] == [20.5, 18, 20]
    assert "decided by the half point" in replay.winner_line(half["table"])
    assert "start" in "\n".join(replay.scoring_lines(half["table"]))
    # a half point does not outweigh a whole VP: 2.5 is 2 VP and the tie-break, never 3
    more = _standings({**pos, "vp": [20, 18, 21]}, "0.5,0,0")
    assert more["final"] == more["search"] == 2


@pytest.mark.parametrize("left,winner", [([3, 4, 1], 0), ([4, 4, 1], 1), ([4, 3, 1], 1)])
def test_v2_two_half_points_tied_fall_to_d18(left, winner):
    pos = {"players": 3, "columns": [], "vp": [20, 20, 22], "parts_left": left}
    got = _standings(pos, "2.5,2.5,0")              # 22 and a half point each against a whole 22
    assert {got[k] for k in ("final", "rank 1", "re-scored", "search")} == {winner}
    assert "fewer parts left" in replay.winner_line(got["table"])


def test_v2_whole_values_keep_their_hash_and_play_as_before(tmp_path):
    # the hashes of before half points existed: the goldens' default rules and the planted
    # variant of reports/tune_balance_compensation
    assert load_rules().hash == "52475ee4d695f4ec"
    assert load_rules(overrides=["players.start_vp=0,0,0,8"]).hash == "bb37829d5deb27f3"
    written = tmp_path / "whole.toml"
    written.write_text("[players]\nstart_vp = [2.0, 2, 2.0, 0]\n")
    whole = load_rules(overrides=["players.start_vp=2,2,2,0"])
    assert load_rules(written).hash == whole.hash and whole.data["players"]["start_vp"] == [2, 2, 2, 0]
    assert not whole.half_points(4).any()
    half = load_rules(overrides=["players.start_vp=2.5,2.5,2.5,0"])
    assert half.hash != whole.hash and list(half.half_points(4)) == [1, 1, 1, 0]
    seeds = np.arange(40)
    a, b = play_batch(whole, 4, seeds, ["greedy"] * 4), play_batch(half, 4, seeds, ["greedy"] * 4)
    assert (a.seats[:, :, L.NBREAK] == b.seats[:, :, L.NBREAK]).all()   # the same whole totals
    # the half point moves the win only where seats 0-2 tie seat 3 on VP and would lose to it
    tied = (a.seats[:, :3, L.NBREAK] == a.seats[:, 3:, L.NBREAK]).any(axis=1)
    assert ((a.games[:, 3] != b.games[:, 3]) <= (tied & (a.games[:, 3] == 3))).all()


def test_v2_played_games_rank_their_winner_first_under_half_points(tmp_path):
    from evora_sim.runner import Execution, simulate

    rules = load_rules(overrides=["players.start_vp=0.5,0.5,0.5,0"])
    run = simulate(4, 200, ["greedy"], seed=3, out=tmp_path / "r", rules=rules, execution=Execution(jobs=1))
    games, seats = run.table("games"), run.table("seats")
    first = seats[seats["rank"] == 1].set_index("game_id")["seat"]
    assert (first.loc[games["game_id"]].to_numpy() == games["winner_seat"].to_numpy()).all()
    assert (seats["win"] == (seats["rank"] == 1)).all()


@pytest.mark.parametrize("bad", ["2.3", "-1", "nan", "inf", "1000", "2.5.1", "0,0,0,0,0.5"])
def test_v2_bad_start_vp_values_are_refused_naming_the_key(tmp_path, bad):
    from click.testing import CliRunner

    from evora_sim.cli import main

    with pytest.raises(RulesError, match="players.start_vp"):
        load_rules(overrides=[f"players.start_vp={bad}"])
    pos = tmp_path / "pos.json"
    pos.write_text('{"players": 2, "columns": [], "vp": [3, 4]}')
    res = CliRunner().invoke(main, ["score", str(pos), "--set", f"players.start_vp={bad}"])
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.output
    assert lines[0].startswith("evora: error: ") and "players.start_vp" in lines[0] and "steps of 0.5" in lines[0]


@pytest.mark.parametrize("value", ["2.3", "nan", "-0.5", "true", '"2"'])
def test_v2_bad_start_vp_values_in_a_rules_file_are_refused(tmp_path, value):
    path = tmp_path / "bad.toml"
    path.write_text(f"[players]\nstart_vp = [{value}, 0]\n")
    with pytest.raises(RulesError, match="players.start_vp.*steps of 0.5"):
        load_rules(path)


def test_p10_players_see_every_drawn_card_but_not_the_order_below_the_tops():
    """P10: both kinds of strategy decide the same when only the order below the tops differs."""
    from evora_sim.batch import play_game
    from evora_sim.gameloop import buffers
    from strategies.decide import choose
    from strategies.registry import parse_spec, seat_arrays

    rules = load_rules()
    final, log = play_game(rules, 3, 77, ["balanced"] * 3)
    state = api.new_game(rules, 3, 77)
    for a in log[:40]:
        api.apply_action(state, int(a))
    while len(api.legal_actions(state)) < 2:
        api.apply_action(state, api.legal_actions(state)[0])
    other = state.clone()
    for t in range(L.NTYPES):                  # reverse every stack below its top card
        base = L.STACK_CARDS + t * L.MAXSTACK
        lo, hi = other.arr[L.STACK_TOP + t] + 1, other.arr[L.STACK_LEN + t]
        other.arr[base + lo:base + hi] = other.arr[base + lo:base + hi][::-1].copy()
    assert (other.arr != state.arr).any()
    legal = np.array(api.legal_actions(state), dtype=np.int32)
    for spec in ("balanced", "mcts(iterations=50, rollout=greedy(plan=action), horizon=3)"):
        s = parse_spec(spec)
        picks = []
        for st in (state, other):
            kinds, W = seat_arrays([s] * 3)
            _, _, rs, work, _ = buffers(3, [s])
            rs[0] = np.uint64(5)
            p = to_move(st.arr)
            picks.append(int(choose(kinds[p], W, p, st.arr.copy(), rules.packed, legal, len(legal), rs, work)))
        assert picks[0] == picks[1], spec


# =============================================================================================
# P11, P12: the card-value experiment keys (evora card-value)
# =============================================================================================
def _experiment(**keys):
    return load_rules(overrides=[f"experiment.{k}={v}" for k, v in keys.items()])


STACK_SLOTS = slice(L.STACK_CARDS, L.STACK_CARDS + L.NTYPES * L.MAXSTACK)


def test_p11_given_card_is_in_the_seats_hand_at_the_start_and_playable_on_its_first_turn():
    rules = _experiment(give="emp_flip", give_seat=2)
    state, plain = api.new_game(rules, 4, 3), api.new_game(None, 4, 3)
    assert [hand(state, p) for p in range(4)] == [[], [], [L.E_EMP_FLIP], []]
    assert pending(state, 2) == []                           # in the hand, not drawn (D9)
    assert (state.arr[STACK_SLOTS] == plain.arr[STACK_SLOTS]).all()   # from outside the game
    state = turn_on(SP_DRAW_AC, seat=2, rules=rules)         # seat 2's first turn, an emperor space
    plain = turn_on(SP_DRAW_AC, seat=2)
    assert pget(state, 2, L.P_TURNS) == 0
    assert legal(state) == plays(L.E_EMP_FLIP) | MAIN_OPTIONS
    assert legal(plain) == MAIN_OPTIONS
    act(state, L.A_PLAY + L.E_EMP_FLIP)
    assert legal(state) == {L.A_EMPTILE} and hand(state, 2) == []     # both tiles alike (P5)


def test_p11_given_tile_is_its_seats_only_and_the_temples_copy_stays_for_the_others():
    rules = _experiment(give="tile_flip_both", give_seat=1)
    state = turn_on(SP_ONE, seat=0, rules=rules)             # others on 4, 7, 12; Centurion on 0
    assert [state.get(L.ITILE_AVAIL + t) for t in range(4)] == [1, 1 | 2 << 1, 1, 1]
    buy_tile(state, 0, L.T_FLIP_BOTH)                        # seat 0 takes the Temple's copy
    assert state.get(L.ITILE_AVAIL + L.T_FLIP_BOTH) == 2 << 1
    begin_main(state, 2, 10)
    give_cards(state, 2, L.E_EMP_FLIP, L.E_ARCH_STONE, L.E_CENT_MOVE)
    assert L.A_TILE + L.T_FLIP_BOTH not in legal(state)      # seat 1's own: nobody else's
    begin_main(state, 1, 13)
    buy_tile(state, 1, L.T_FLIP_BOTH)
    assert state.get(L.ITILE_AVAIL + L.T_FLIP_BOTH) == 0
    # the given seat takes the Temple's copy first and keeps its own for later
    state = turn_on(SP_ONE, seat=1, rules=rules)
    buy_tile(state, 1, L.T_FLIP_BOTH)
    assert state.get(L.ITILE_AVAIL + L.T_FLIP_BOTH) == 2 << 1
    begin_main(state, 1, 10)
    buy_tile(state, 1, L.T_FLIP_BOTH)
    assert state.get(L.ITILE_AVAIL + L.T_FLIP_BOTH) == 0


def test_p12_removed_effects_copies_become_the_other_two_and_every_stack_keeps_its_size():
    rules, splits = _experiment(remove="emp_flip"), set()
    emp = slice(L.STACK_CARDS + EMP * L.MAXSTACK, L.STACK_CARDS + EMP * L.MAXSTACK + 9)
    for seed in range(20):
        state, plain = api.new_game(rules, 4, seed), api.new_game(None, 4, seed)
        assert [state.get(L.STACK_LEN + t) for t in range(4)] == [plain.get(L.STACK_LEN + t) for t in range(4)]
        cards, was = state.arr[emp], plain.arr[emp]
        assert L.E_EMP_FLIP not in cards
        assert ((cards == was) | (was == L.E_EMP_FLIP)).all()     # the other cards lie where they lay
        splits.add((int((cards == L.E_EMP_PLACE).sum()), int((cards == L.E_EMP_TEMPLE).sum())))
        rest = np.r_[np.arange(STACK_SLOTS.start, emp.start), np.arange(emp.stop, STACK_SLOTS.stop)]
        assert (state.arr[rest] == plain.arr[rest]).all()
    assert splits == {(5, 4), (4, 5)}                          # 3 copies: 2 + 1, either way round


def test_p12_removed_tile_is_not_in_the_temple():
    state = turn_on(SP_ONE, rules=_experiment(remove="tile_three_stones"))
    assert [state.get(L.ITILE_AVAIL + t) for t in range(4)] == [1, 1, 1, 0]
    give_cards(state, 0, L.E_EMP_FLIP, L.E_ARCH_STONE, L.E_CENT_MOVE)
    assert legal(state) & tiles(0, 1, 2, 3) == tiles(0, 1, 2)


def test_p11_p12_keys_at_their_defaults_change_nothing_and_bad_values_are_refused():
    rules = load_rules()
    assert rules.data["experiment"] == {"give": "", "give_seat": 0, "remove": ""}
    older = copy.deepcopy(rules.data)
    del older["experiment"]                                  # rules (and runs) from before the table
    assert validate(older).hash == rules.hash
    assert _experiment(give="emp_flip").hash != rules.hash != _experiment(remove="emp_flip").hash
    for keys, message in (({"give": "emp_flips"}, "experiment.give"), ({"remove": "x"}, "experiment.remove"),
                          ({"give_seat": 4}, "experiment.give_seat"),
                          ({"give": "cent_any", "remove": "cent_any"}, "cannot be given and taken out")):
        with pytest.raises(RulesError, match=message):
            _experiment(**keys)
    with pytest.raises(ValueError, match="give_seat' is 3, but 2 players"):
        api.new_game(_experiment(give="cent_any", give_seat=3), 2, 0)


@pytest.mark.parametrize("keys", [{"give": "gov_workers", "give_seat": 3}, {"give": "tile_two_capitals", "give_seat": 0},
                                  {"remove": "arch_two_stones"}, {"remove": "tile_flip_both"}])
def test_p11_p12_played_games_keep_the_engine_state_valid(keys):
    """Whole games with a card given or removed keep every engine invariant (conservation of the
    cards and tiles included) and pass the checks of saved games, at every step."""
    from evora_sim.batch import play_game
    from evora_sim.statecheck import state_problem
    from invariant_checks import check_state, check_step

    rules = _experiment(**keys)
    for seed in range(3):
        _, log = play_game(rules, 4, seed, ["balanced", "cards", "greedy", "random"])
        state = api.new_game(rules, 4, seed)
        assert check_state(state.arr, rules) == [] and state_problem(state.arr, rules) is None
        for a in log:
            prev = state.arr.copy()
            api.apply_action(state, int(a))
            assert check_state(state.arr, rules) + check_step(prev, state.arr, rules) == []
            assert state_problem(state.arr, rules) is None
        assert api.is_terminal(state)


# =============================================================================================
# V3-V5: mechanism switches (end.after_trigger, end.tie_break, setup.placement_order)
# =============================================================================================
def test_v3_v4_v5_switches_default_to_the_rulebook_and_leave_the_rules_hash_as_before():
    from evora_sim.rules import SWITCHES

    rules = load_rules()
    assert [rules.data[k.split(".")[0]][k.split(".")[1]] for k in SWITCHES] == ["finish_round", "rulebook",
                                                                               "seat_order"]
    older = copy.deepcopy(rules.data)
    del older["end"], older["setup"]                         # rules (and runs) from before the switches
    assert validate(older).hash == rules.hash == "52475ee4d695f4ec"
    hashes = {load_rules(overrides=[f"{k}={v}"]).hash for k, values in SWITCHES.items() for v in values[1:]}
    assert len(hashes) == 4 and rules.hash not in hashes
    for key in SWITCHES:
        with pytest.raises(RulesError, match=f"'{key}' must be one of .*got 'nonsense'"):
            load_rules(overrides=[f"{key}=nonsense"])


def _trigger_in_first_round(trigger_seat, rules):
    """A 4-player game under ``rules`` whose seat ``trigger_seat`` uses its last stone in round 1."""
    state = setup_game(4, rules=rules)
    for _ in range(trigger_seat):
        quiet_turn(state)
    pset(state, trigger_seat, L.P_STONES, 1)
    begin_main(state, trigger_seat, next(y for y in (SP_ONE, SP_ONE_CENT) if site(state, y) == L.EMPTY))
    act(state, L.A_SITE, L.A_COLUMN + 0)
    assert state.get(L.G_END_TRIGGER) == L.END_OUT_OF_STONES and state.get(L.G_END_TURN) == trigger_seat
    return state


@pytest.mark.parametrize("trigger_seat", [0, 1, 3])
def test_v3_finish_turn_ends_the_game_with_the_triggering_turn(trigger_seat):
    plain = _trigger_in_first_round(trigger_seat, load_rules())
    assert api.is_terminal(plain) == (trigger_seat == 3)    # the rulebook finishes the round
    state = _trigger_in_first_round(trigger_seat, load_rules(overrides=["end.after_trigger=finish_turn"]))
    assert api.is_terminal(state)                            # the turn had nothing left: it ended
    assert [pget(state, p, L.P_TURNS) for p in range(4)] == [1 if p <= trigger_seat else 0 for p in range(4)]


@pytest.mark.parametrize("trigger_seat", [0, 2, 3])
def test_v3_one_more_turn_gives_every_seat_one_turn_after_the_trigger(trigger_seat):
    state = _trigger_in_first_round(trigger_seat, load_rules(overrides=["end.after_trigger=one_more_turn"]))
    order = []
    while not api.is_terminal(state):
        order.append(state.get(L.G_CUR))
        quiet_turn(state)
    assert order == [(trigger_seat + 1 + i) % 4 for i in range(4)]       # the triggering seat last
    assert [pget(state, p, L.P_TURNS) for p in range(4)] == [2 if p <= trigger_seat else 1 for p in range(4)]


def test_v3_round_limit_still_ends_at_once():
    rules = load_rules(overrides=["end.after_trigger=one_more_turn", "limits.max_rounds=1"])
    state = setup_game(4, rules=rules)
    for _ in range(4):
        quiet_turn(state)
    assert api.is_terminal(state) and state.get(L.G_END_TRIGGER) == L.END_ROUND_LIMIT
    assert state.get(L.G_END_SEAT) == -1 and state.get(L.G_END_TURN) == 3


def test_v4_shared_victory_falls_to_each_tied_seat_by_lot():
    """Seats 0 and 1 tie on VP; seat 1 has the fewer parts left. The rulebook gives seat 1 the
    game; a shared victory gives it to either, by each game's own lot, about half each."""
    pos = {"players": 3, "columns": [], "vp": [10, 10, 9], "parts_left": [4, 3, 0]}
    assert api.final_scoring(position_state(pos))["winner"] == 1
    rules = load_rules(overrides=["end.tie_break=shared"])
    state = position_state(pos, rules)
    winners = []
    for seed in range(400):
        s = state.arr.copy()
        E.draw_lot(s, 3, seed)
        E.final_scoring(s, rules.packed)
        winners.append(int(s[L.G_WINNER]))
        again = state.arr.copy()
        E.draw_lot(again, 3, seed)
        assert again[L.G_LOT] == s[L.G_LOT]                  # the game's own seed decides it
    counts = Counter(winners)
    assert set(counts) == {0, 1} and abs(counts[0] - 200) < 4 * 10     # 200 +- 4 standard deviations
    assert api.new_game(load_rules(), 3, seed=5).arr[L.G_LOT] == 0    # without V4 no lot is drawn


def test_v4_shared_victory_in_played_games_ranks_the_lot_winner_first(tmp_path):
    from evora_sim.batch import play_game
    from evora_sim.runner import Execution, simulate
    from strategies.mcts import L_SCORE, R_WIN, WIDTH, seat_rewards

    rules = load_rules(overrides=["end.tie_break=shared", "height_vp.1=0", "height_vp.2=0", "height_vp.3=0"])
    run = simulate(2, 150, ["random"], seed=5, out=tmp_path / "r", rules=rules, execution=Execution(jobs=1))
    games, seats = run.table("games"), run.table("seats")
    first = seats[seats["rank"] == 1].set_index("game_id")["seat"]
    assert (first.loc[games["game_id"]].to_numpy() == games["winner_seat"].to_numpy()).all()
    lot = games[games["decided_by"] == "lot"]
    assert len(lot) >= 5 and set(games["decided_by"]) <= {"vp", "lot"}
    assert 0.25 < (lot["winner_seat"] == 1).mean() < 0.75     # not the later seat every time (D18)
    # the search player's win reward does not read the lot, which no player knows (P10): the
    # tied seats share the victory, half each, whichever of them the lot records
    final, _ = play_game(rules, 2, int(lot["seed"].iloc[0]), ["random"] * 2)
    rew, tot = np.zeros(L.MAXP), np.zeros(L.MAXP)
    seat_rewards(final, rules.packed, R_WIN, L_SCORE, np.zeros((1, WIDTH)), rew, tot)
    assert rew[:2].tolist() == [0.5, 0.5]


@pytest.mark.parametrize("n,order", [(4, [3, 2, 1, 0]), (3, [2, 1, 0]), (2, [1, 0, 1, 0])])
def test_v5_reverse_placement_order_lets_the_last_seat_place_first(n, order):
    from evora_sim.statecheck import state_problem

    rules = load_rules(overrides=["setup.placement_order=reverse"])
    state = api.new_game(rules, n_players=n, seed=3)
    seen = []
    for i, x in enumerate([5, 6, 12, 15][:len(order)]):
        seen.append(state.get(L.G_CUR))
        assert state_problem(state.arr, rules) is None        # a reversed setup is a valid state
        act(state, L.A_SPACE + x)
        p = order[i]
        assert site(state, x) == p * 2 + i // n
    assert seen == order
    assert state.get(L.G_CUR) == 0 and state.get(L.G_ROUND) == 1   # the start player still moves first
    assert state_problem(state.arr, rules) is None
    plain = api.new_game(load_rules(), n_players=n, seed=3)
    act(plain, L.A_SPACE + 5)
    assert state_problem(plain.arr, rules) is not None       # seat order is not this variant's setup
