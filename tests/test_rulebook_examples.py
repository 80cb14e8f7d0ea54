"""The rulebook's worked examples, scored by the engine from positions (evora_sim.position).

Seats stand for the rulebook's colours where an example names them:
Blue = 0, Pink = 1, Yellow = 2, Green = 3; "W" is a white stone.
"""
import pytest

from evora_sim import api
from evora_sim import layout as L
from evora_sim.position import position_state

from helpers import W, holder

BLUE, PINK, YELLOW, GREEN = 0, 1, 2, 3


def scored(pos):
    state = position_state(pos)
    return state, api.final_scoring(state)


def heights(seat_row):
    return [seat_row[f"vp_height_{h}"] for h in range(1, 5)] + [seat_row["vp_capitals"]]


@pytest.mark.parametrize("side,vp", [(5, 20), (3, 12)])
def test_emperor_bonus_four_yellow_parts_times_tile_value(side, vp):
    # "4 yellow column parts (3 stones and 1 capital) ... 5 VP x 4 column parts = 20 VP"
    pos = {"players": 4, "columns": [
        {"parts": [YELLOW, YELLOW, PINK, YELLOW], "capital": YELLOW,
         "emperor": {"seat": YELLOW, "value": side}},
        {"parts": [YELLOW, YELLOW]},                         # no tile here: no bonus
    ]}
    _, result = scored(pos)
    assert [s["vp_emperor"] for s in result["seats"]] == [0, 0, vp, 0]


def test_emperor_bonus_counts_only_the_tile_owners_parts():
    pos = {"players": 4, "columns": [
        {"parts": [BLUE, BLUE, YELLOW, BLUE], "emperor": {"seat": YELLOW, "value": 5}},
    ]}
    _, result = scored(pos)
    assert [s["vp_emperor"] for s in result["seats"]] == [0, 0, 5, 0]


def test_height_majority_example():
    # Height 5: nobody has 2 capitals. Height 4 and 3: Blue. Height 2: Pink ties the white
    # stones and gets the tie value 5. Height 1: Yellow and Green tie, 3 VP each.
    pos = {"players": 4, "columns": [
        {"parts": [YELLOW, PINK, BLUE, BLUE], "capital": BLUE},
        {"parts": [YELLOW, PINK, BLUE, BLUE], "capital": PINK},
        {"parts": [GREEN, W, BLUE, PINK]},
        {"parts": [GREEN, W, YELLOW, GREEN]},
        {"parts": [BLUE]},
    ]}
    _, result = scored(pos)
    assert [heights(s) for s in result["seats"]] == [
        [0, 0, 15, 5, 0],     # Blue
        [0, 5, 0, 0, 0],      # Pink
        [3, 0, 0, 0, 0],      # Yellow
        [3, 0, 0, 0, 0],      # Green
    ]


def test_column_majority_tie_goes_to_higher_part():
    pos = {"players": 2, "columns": [
        {"parts": [0, 0, 1, 1]},                 # 2-2: seat 1 is higher
        {"parts": [1, 1, 0, 0]},                 # 2-2: seat 0 is higher
        {"parts": [0, 1, 1, 0], "capital": 1},   # the capital counts: 3-2 for seat 1
        {"parts": [0, 1]},                       # nobody has 2 parts
    ]}
    state, result = scored(pos)
    assert [holder(state, c) for c in range(4)] == [1, 0, 1, -1]
    assert [s["vp_column_majority"] for s in result["seats"]] == [5, 10]


def test_white_majority_on_columns_and_heights():
    pos = {"players": 2, "columns": [
        {"parts": [W, W, 0, 1]},                 # white leads: no worker
        {"parts": [0, 0, W, W]},                 # 2-2, white higher: no worker
        {"parts": [W, W, 0, 0]},                 # 2-2, seat 0 higher: seat 0
        {"parts": [1, 1]},                       # seat 1
        {"parts": [W, 1]},                       # nobody
    ]}
    # h1: white 3, seat 1 2 -> white leads, nobody scores; h2: white 2, seat 1 2 -> seat 1 the
    # tie value; h3: seat 0 2, white 1 -> seat 0; h4: one part each -> nobody
    state, result = scored(pos)
    assert [holder(state, c) for c in range(5)] == [-1, -1, 0, 1, -1]
    seats = result["seats"]
    assert [s["vp_column_majority"] for s in seats] == [5, 5]
    assert [heights(s) for s in seats] == [[0, 0, 15, 0, 0], [0, 5, 0, 0, 0]]


def test_white_majority_places_no_worker_during_play():
    pos = {"players": 2, "columns": [{"parts": [W, W, 1]}]}
    state, _ = scored(pos)
    assert holder(state, 0) == -1
    assert state.player(1, L.P_WORKERS) == 9       # 11 workers, 2 on the site, none on columns


@pytest.mark.parametrize("vp,left,winner", [
    ([30, 31, 30], [0, 12, 0], 1),               # most VP first
    ([30, 30, 30], [10, 8, 9], 1),               # tie: fewer parts left in supply
    ([30, 30, 30], [10, 8, 8], 2),               # still tied: later in turn order
    ([30, 30, 29], [8, 8, 0], 1),
])
def test_tiebreak_for_the_win(vp, left, winner):
    _, result = scored({"players": 3, "columns": [], "vp": vp, "parts_left": left})
    assert result["winner"] == winner
    assert [s["parts_left"] for s in result["seats"]] == left


def test_tiebreak_counts_parts_placed_in_the_temple():
    # equal VP; seat 0 placed one part more, so it has fewer left and wins despite the earlier seat
    pos = {"players": 2, "columns": [{"parts": [1, 0]}, {"parts": [0]}], "vp": [20, 20]}
    _, result = scored(pos)
    assert [s["total"] for s in result["seats"]] == [20, 20]
    assert [s["parts_left"] for s in result["seats"]] == [18, 19]
    assert result["winner"] == 0
