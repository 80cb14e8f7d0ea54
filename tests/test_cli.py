"""The command line: `evora score`, `evora replay`, savegames, strategy specs, and bad input.

Every bad input ends with exactly one line `evora: error: ...` on stderr, exit status 2, no
traceback and nothing on stdout.
"""
from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evora_sim import api
from evora_sim import layout as L
from evora_sim import savegame
from evora_sim.batch import play_game
from evora_sim.cli import main
from evora_sim.position import position_state, scoring_table
from evora_sim.replay import AFTER_TRIGGER, PLACEMENT, scoring_lines
from evora_sim.rules import load_rules
from strategies.builtin import BUILTINS, GREEDY, NAMES, RANDOM
KNOWN = ", ".join(sorted(NAMES + ("expert", "mcts")))
from strategies.registry import StrategyError, parse_strategies
from cli_results import ok

RULES = load_rules()

# ---------------------------------------------------------------------------------------------
# a hand-made position, scored by hand from the rules
# ---------------------------------------------------------------------------------------------
# 3 players. Parts bottom to top; "W" is a white stone.
POSITION = {
    "players": 3,
    "columns": [
        {"parts": [0, 0, 1, 0], "capital": 0, "emperor": {"seat": 0, "value": 3}},   # c0
        {"parts": [1, 1, "W"], "emperor": {"seat": 1, "value": 5}},                  # c1
        {"parts": [2, "W", "W", 2]},                                                 # c2
        {"parts": [0, 2]},                                                           # c3
        {"parts": [1, 2, 1, 1], "capital": 1},                                       # c4
        {"parts": [2, 2, 2, 1], "capital": 1},                                       # c5
    ],
    "vp": [10, 20, 5],
}
# Emperor (tile value x own parts in the column, capital included):
#   seat 0: 3 x 4 (c0: 3 stones + capital) = 12; seat 1: 5 x 2 (c1) = 10; seat 2: none.
# Column majority (>= 2 parts, most parts, a tie goes to the higher top part; 5 VP per worker):
#   c0 seat 0 (4 parts); c1 seat 1 (2 vs 1 white); c2 seat 2 (2 vs 2 white, seat 2 higher);
#   c3 nobody (1 + 1); c4 seat 1 (4); c5 seat 2 (3 vs 2)  -> 5 / 10 / 10.
# Height majorities (>= 2 parts, white is an imaginary player; alone h1 5, h2 10, h3 15,
# h4 5, capitals 10; tied h1 3, h2 5, h3 8, h4 3, capitals 5):
#   h1: seat 0 {c0,c3}, seat 1 {c1,c4}, seat 2 {c2,c5} -> three-way tie: 3 each
#   h2: seat 0 1, seat 1 1, white 1, seat 2 3 {c3,c4,c5} -> seat 2 alone: 10
#   h3: seat 1 {c0,c4}, white {c1,c2}, seat 2 {c5} -> seat 1 tied with white: 8
#   h4: seat 0 {c0}, seat 2 {c2}, seat 1 {c4,c5} -> seat 1 alone: 5
#   capitals: seat 0 {c0}, seat 1 {c4,c5} -> seat 1 alone: 10
# Parts left (14 stones + 6 capitals each): seat 0 4+1 placed -> 15; seat 1 7+2 -> 11; seat 2 7 -> 13.
EXPECTED = [
    {"seat": 0, "vp": 10, "emperor": 12, "column_majority": 5, "height_1": 3, "height_2": 0,
     "height_3": 0, "height_4": 0, "capitals": 0, "parts_left": 15, "total": 30},
    {"seat": 1, "vp": 20, "emperor": 10, "column_majority": 10, "height_1": 3, "height_2": 0,
     "height_3": 8, "height_4": 5, "capitals": 10, "parts_left": 11, "total": 66},
    {"seat": 2, "vp": 5, "emperor": 0, "column_majority": 10, "height_1": 3, "height_2": 10,
     "height_3": 0, "height_4": 0, "capitals": 0, "parts_left": 13, "total": 28},
]

DEFAULT_TOML = Path(__file__).resolve().parents[1] / "evora_sim" / "data" / "rules.toml"


@pytest.fixture
def runner():
    return CliRunner()


def write_json(tmp_path, name, obj):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return str(path)


def write_toml(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# ---------------------------------------------------------------------------------------------
# evora score
# ---------------------------------------------------------------------------------------------
def test_score_json_matches_the_hand_computed_scoring(runner, tmp_path):
    path = write_json(tmp_path, "pos.json", POSITION)
    doc = json.loads(ok(runner.invoke(main, ["score", path, "--json"])))
    assert doc == {"seats": EXPECTED, "winner": 1}


def test_score_text_table(runner, tmp_path):
    path = write_json(tmp_path, "pos.json", POSITION)
    lines = ok(runner.invoke(main, ["score", path])).splitlines()
    assert lines[0] == "Final scoring"
    assert lines[1].split() == ["seat", "in-game", "emperor", "col.maj", "h1", "h2", "h3", "h4",
                                "capitals", "total", "parts", "left"]
    keys = ["seat", "vp", "emperor", "column_majority", "height_1", "height_2", "height_3",
            "height_4", "capitals", "total", "parts_left"]
    for line, row in zip(lines[2:5], EXPECTED):
        assert [int(x) for x in line.split()] == [row[k] for k in keys]
    assert lines[-1] == "Winner: seat 1 with 66 VP"
    # the same table code serves `score` and `replay`
    assert lines == scoring_lines(scoring_table(position_state(POSITION)))


def test_score_tie_on_vp_goes_to_fewer_parts_left(runner, tmp_path):
    # no majorities anywhere (1 part each); 10 VP each; seat 0 has fewer parts left (D18)
    pos = {"players": 2, "columns": [{"parts": [0]}, {"parts": [1]}], "vp": [10, 10],
           "parts_left": [5, 19]}
    path = write_json(tmp_path, "tie.json", pos)
    doc = json.loads(ok(runner.invoke(main, ["score", path, "--json"])))
    assert [s["total"] for s in doc["seats"]] == [10, 10]
    assert doc["winner"] == 0
    text = ok(runner.invoke(main, ["score", path]))
    assert "Winner: seat 0 with 10 VP (tied on VP with seat 1; decided by fewer parts left" in text


def test_score_uses_the_rules_file(runner, tmp_path):
    rules = write_toml(tmp_path, "variant.toml", "[majority]\ncolumn_vp = 7\n")
    path = write_json(tmp_path, "pos.json", POSITION)
    doc = json.loads(ok(runner.invoke(main, ["score", path, "--json", "--rules", rules])))
    assert [s["column_majority"] for s in doc["seats"]] == [7, 14, 14]
    assert [s["total"] for s in doc["seats"]] == [32, 70, 32]


# ---------------------------------------------------------------------------------------------
# evora replay
# ---------------------------------------------------------------------------------------------
REPLAY_ARGS = ["replay", "--players", "4", "--seed", "7", "--strategies", "greedy,random,greedy,random"]


def test_replay_is_deterministic_and_ends_with_the_scoring_table(runner):
    first = ok(runner.invoke(main, REPLAY_ARGS))
    second = ok(runner.invoke(main, REPLAY_ARGS))
    assert first == second
    lines = first.splitlines()
    assert lines[0].startswith("Evora replay: 4 players, seed 7")
    assert "Round 1, seat 0 (greedy), turn 1" in lines
    assert "Round 1, seat 1 (random), turn 2" in lines
    assert any(line.startswith("  seat 0 (greedy) [setup] space ") for line in lines)
    assert any(line.startswith("    column ") and "VP)" in line for line in lines)

    # the game is the one the batch driver plays, and the log ends with its scoring table
    final, log = play_game(RULES, 4, 7, [GREEDY, RANDOM, GREEDY, RANDOM])
    names = ["greedy", "random", "greedy", "random"]
    table = scoring_lines(scoring_table(api.State(final, RULES, 7)), names)
    assert lines[-len(table):] == table
    assert lines[-1].startswith("Winner: seat ")
    assert f"{len(log)} decisions" in first

    # the end trigger is named where it fires and in the summary, as the rulebook words it
    from evora_sim.names import END_TITLES

    code = L.END_NAMES[int(final[L.G_END_TRIGGER])]
    assert code in ("temple_full", "out_of_stones")
    trigger = END_TITLES[code]
    fired = [line for line in lines if "END TRIGGER:" in line]
    assert len(fired) == 1 and trigger in fired[0]
    assert any(line.startswith("Game over after round ") and f"end trigger {trigger}" in line
               for line in lines)


def test_replay_keeps_events_in_order_says_when_a_site_action_does_nothing_and_scores_each_round(runner):
    texts = [ok(runner.invoke(main, ["replay", "-n", "4", "--seed", str(seed), "--strategies", "random"]))
             for seed in range(1, 7)]
    lines = texts[0].splitlines()
    rounds = [x for x in lines if x.startswith("  Scores after round ")]
    final_round = int(next(x for x in lines if x.startswith("Game over after round ")).split()[4].rstrip(":"))
    assert len(rounds) == final_round - 1 and rounds[0].startswith("  Scores after round 1: seat 0 ")
    assert all(re.fullmatch(r"  Scores after round \d+: (seat \d \d+, ){3}seat 3 \d+", x) for x in rounds)
    # drawn cards join the hand when the turn ends: the last event of a turn, never inside a build
    for text in texts:
        turn_lines = text.split("\nRound ")
        for turn in turn_lines:
            events = [x for x in turn.splitlines() if x.startswith("    ")]
            joined = [i for i, x in enumerate(events) if "join the hand" in x]
            assert all(not events[i + 1:] or all("join the hand" in y or "END TRIGGER" in y for y in events[i + 1:])
                       for i in joined), turn
    assert any("does nothing: nothing it offers can be done now" in t for t in texts)


def test_replay_names_things_as_the_rulebook_does(runner):
    """Issue 44: replay printed internal codes (`cent_any`, `tile_flip_both`, `build_two_stones`,
    `[choose_worker]`). Its log names cards, tiles, spaces, decisions and end triggers in the
    rulebook's words; the codes stay in the CSV tables only."""
    from evora_sim import layout as L
    from evora_sim.names import CARD_TITLES

    texts = "\n".join(ok(runner.invoke(main, ["replay", "-n", str(n), "--seed", str(seed), "--strategies", "cards"]))
                      for n, seed in ((2, 3), (4, 5), (3, 8)))
    codes = [*L.CARD_NAMES, *L.SITE_ACTIONS, "choose_worker", "temple_full", "out_of_stones"]
    assert not [c for c in codes if c in texts]
    assert any(title in texts for title in CARD_TITLES.values())
    assert "(Governor: " in texts or "(Architect: " in texts        # a space by its colour and action


def test_replay_single_strategy_name_fills_every_seat(runner):
    out = ok(runner.invoke(main, ["replay", "-n", "2", "--seed", "3", "--strategies", "greedy"]))
    assert "Seats: 0 greedy, 1 greedy" in out
    assert "[choose a worker]" in out        # D5: two players choose which worker moves
    assert out.splitlines()[-1].startswith("Winner: seat ")


def test_replay_under_a_rules_file(runner, tmp_path):
    rules = write_toml(tmp_path, "white3.toml", "[white_stone]\nvp = 3\n")
    out = ok(runner.invoke(main, ["replay", "-n", "3", "--seed", "2", "--strategies", "greedy",
                                  "--rules", rules]))
    assert f"(hash {load_rules(rules).hash})" in out.splitlines()[0]
    whites = [line for line in out.splitlines() if "white stone at height" in line]
    assert whites and all(line.endswith("(+3 VP)") for line in whites)


@pytest.mark.parametrize("after, more", [("finish_round", None), ("finish_turn", 0), ("one_more_turn", 3)])
def test_replay_says_what_follows_the_end_trigger_under_the_rules_in_force(runner, after, more):
    """Issue 50, item 8: the trigger line said "the round is played to its end" under every V3
    value. It names the rules' value, and the turns the log then shows agree with it (the round's
    remaining seats, none, or one turn for every seat)."""
    lines = ok(runner.invoke(main, ["replay", "-n", "3", "--seed", "4", "--strategies", "greedy",
                                    "--set", f"end.after_trigger={after}"])).splitlines()
    at = next(i for i, line in enumerate(lines) if "END TRIGGER:" in line)
    assert lines[at].endswith("; " + AFTER_TRIGGER[after])
    header = next(line for line in reversed(lines[:at]) if line.startswith("Round "))
    seat = int(header.split("seat ")[1].split()[0])
    turns_after = [line for line in lines[at:] if line.startswith("Round ")]
    assert len(turns_after) == (2 - seat if more is None else more)


@pytest.mark.parametrize("order, first", [("seat_order", 0), ("reverse", 3)])
def test_replay_says_in_which_order_the_workers_are_placed(runner, order, first):
    """Issue 50, item 8: "Setup: workers placed in seat order" was printed under V5's reverse
    order too."""
    lines = ok(runner.invoke(main, ["replay", "-n", "4", "--seed", "3", "--strategies", "random",
                                    "--set", f"setup.placement_order={order}"])).splitlines()
    at = lines.index("Setup: " + PLACEMENT[order])
    assert lines[at + 1].startswith(f"  seat {first} (random) [setup] ")
    assert ("reverse" in lines[at]) == (order == "reverse")


def test_evora_console_script_end_to_end(tmp_path):
    exe = Path(sys.executable).with_name("evora")
    if not exe.exists():
        pytest.skip("the evora console script is not installed next to this Python")
    path = write_json(tmp_path, "pos.json", POSITION)
    done = subprocess.run([str(exe), "score", path, "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"seats": EXPECTED, "winner": 1}
    bad = subprocess.run([str(exe), "replay", "-n", "5", "--seed", "1", "--strategies", "greedy"],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr == "evora: error: player count must be 2, 3 or 4, got 5\n"


# ---------------------------------------------------------------------------------------------
# savegames
# ---------------------------------------------------------------------------------------------
def _midgame(n=3, seed=11, sids=(GREEDY, RANDOM, GREEDY), k=60):
    final, log = play_game(RULES, n, seed, list(sids))
    state = api.new_game(RULES, n, seed)
    for a in log[:k]:
        api.apply_action(state, int(a))
    return state, final, log


def test_save_load_round_trip_then_play_on_identically(tmp_path):
    state, final, log = _midgame()
    path = tmp_path / "game.json"
    savegame.save_state(state, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == savegame.FORMAT
    assert doc["rules_hash"] == RULES.hash and doc["seed"] == 11
    assert doc["layout"] == {"state_size": savegame.GAME_SIZE, "signature": savegame.LAYOUT_SIGNATURE}
    assert doc["summary"]["current_player"] == api.current_player(state)
    assert doc["summary"]["scores"] == [state.player(p, L.P_SCORE) for p in range(3)]
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]          # no temp file left

    loaded = savegame.load_state(path)
    assert loaded.seed == state.seed and loaded.rules.hash == RULES.hash
    assert savegame.same_game(loaded, state)
    assert api.legal_actions(loaded) == api.legal_actions(state)
    for a in log[60:]:
        api.apply_action(state, int(a))
        api.apply_action(loaded, int(a))
        assert savegame.same_game(loaded, state)
    assert api.is_terminal(loaded)
    assert np.array_equal(loaded.arr[:savegame.GAME_SIZE], final[:savegame.GAME_SIZE])
    assert api.final_scoring(loaded) == api.final_scoring(api.State(final, RULES, 11))


def test_save_replaces_an_existing_file(tmp_path):
    state, _, _ = _midgame(k=10)
    path = tmp_path / "game.json"
    path.write_text("old", encoding="utf-8")
    savegame.save_state(state, path)
    assert savegame.same_game(savegame.load_state(path), state)


def test_load_refuses_other_rules(tmp_path):
    state, _, _ = _midgame(k=10)
    path = tmp_path / "game.json"
    savegame.save_state(state, path)
    other = load_rules(write_toml(tmp_path, "white3.toml", "[white_stone]\nvp = 3\n"))
    with pytest.raises(savegame.SaveError, match="rules with hash .* but the rules given have hash"):
        savegame.load_state(path, other)
    assert savegame.same_game(savegame.load_state(path, load_rules(DEFAULT_TOML)), state)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["layout"].update(signature="0123456789abcdef"), "different state layout"),
    (lambda d: d["layout"].update(state_size=12), "different state layout"),
    (lambda d: d.update(format="something else"), "not an evora-sim save file"),
    (lambda d: d.update(version=99), "format version 99"),
    (lambda d: d.update(state=d["state"][:-1]), "'state' must be a list of"),
    (lambda d: d.update(seed=-3), "'seed' must be"),
])
def test_load_refuses_incompatible_files(tmp_path, edit, message):
    state, _, _ = _midgame(k=10)
    path = tmp_path / "game.json"
    savegame.save_state(state, path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    edit(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(savegame.SaveError, match=message):
        savegame.load_state(path)


def test_load_refuses_missing_and_malformed_files(tmp_path):
    with pytest.raises(savegame.SaveError, match="save file not found"):
        savegame.load_state(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(savegame.SaveError, match="not valid JSON"):
        savegame.load_state(bad)


# ---------------------------------------------------------------------------------------------
# strategy specs
# ---------------------------------------------------------------------------------------------
def test_parse_strategies():
    def names(text, n):
        return [s.name for s in parse_strategies(text, n)]

    assert parse_strategies("greedy", 3) == [BUILTINS[GREEDY]] * 3
    assert names("greedy,random,greedy,random", 4) == ["greedy", "random", "greedy", "random"]
    assert names(" Random , greedy ", 2) == ["random", "greedy"]
    assert parse_strategies("random,greedy", 2) == [BUILTINS[RANDOM], BUILTINS[GREEDY]]


@pytest.mark.parametrize("text, n, message", [
    ("greedy,foo", 2, "unknown strategy 'foo' (known strategies: " + KNOWN + ")"),
    ("greedy,random", 4, "2 strategies given for 4 seats"),
    ("greedy,,random", 3, "empty strategy name"),
    ("", 2, "no strategy given"),
])
def test_parse_strategies_errors(text, n, message):
    with pytest.raises(StrategyError) as info:
        parse_strategies(text, n)
    assert isinstance(info.value, ValueError)
    assert message in str(info.value)


# ---------------------------------------------------------------------------------------------
# bad input: one line on stderr, exit status 2, no traceback, nothing on stdout
# ---------------------------------------------------------------------------------------------
BAD_RULES = {
    "missing_colour.toml": ('[[board.spaces]]\naction = "build_two_stones"\n', "board.spaces.0.colour"),
    "missing_stacks.toml": ('[[board.spaces]]\ncolour = "emperor"\naction = "draw2"\n',
                            "board.spaces.0.stacks: draw2 needs a list of 2 stacks"),
    "action.toml": ('[[board.spaces]]\ncolour = "architect"\naction = "fly"\n', "unknown action 'fly'"),
    "colour.toml": ('[[board.spaces]]\ncolour = "pink"\naction = "build_one_stone"\n',
                    "unknown card type or colour 'pink'"),
    "small.toml": ('[[board.spaces]]\ncolour = "architect"\naction = "build_two_stones"\n',
                   "board too small: 1 spaces"),
    "key.toml": ("[supply]\nstone = 3\n", "unknown rules key 'supply.stone'"),
    "syntax.toml": ("[height_vp\n", "is not valid TOML"),
    "min3.toml": ("[players]\nmin = 3\n", "player count 2 is outside the rules' players.min..players.max (3 to 4)"),
}

BAD_POSITIONS = {
    "five.json": ({"players": 2, "columns": [{"parts": [0, 0, 1, 1, 0]}]},
                  "columns[0]: 5 stones, but a column holds at most 4"),
    "capital.json": ({"players": 2, "columns": [{"parts": [0, 0, 1], "capital": 1}]},
                     "columns[0]: a capital needs 4 stones below it, the column has 3"),
    "seat.json": ({"players": 2, "columns": [{"parts": [0, 3]}]},
                  "columns[0].parts[1]: seat must be 0..1 for 2 players, got 3"),
    "emperor_seat.json": ({"players": 3, "columns": [{"parts": [0], "emperor": {"seat": 3, "value": 3}}]},
                          "columns[0].emperor.seat: seat must be 0..2"),
    "players.json": ({"players": 5, "columns": []}, "player count must be 2, 3 or 4, got 5"),
    "invalid.json": ('{"players": 2, "columns": [', "is not valid JSON"),
}


def _replay(n="2", seed="1", strategies="greedy", *extra):
    return ["replay", "--players", n, "--seed", seed, "--strategies", strategies, *extra]


BAD_COMMANDS = [
    ("players_5", _replay("5"), "player count must be 2, 3 or 4, got 5"),
    ("players_1", _replay("1"), "player count must be 2, 3 or 4, got 1"),
    ("players_not_a_number", _replay("x"), "Invalid value for '--players'"),
    ("seed_negative", _replay("2", "-1"), "seed must be a whole number from 0 to 2**63-1, got -1"),
    ("missing_option", ["replay", "--players", "2", "--strategies", "greedy"], "Missing option '--seed'"),
    ("unknown_strategy", _replay("4", "1", "greedy,foo,greedy,random"),
     "unknown strategy 'foo' (known strategies: " + KNOWN + ")"),
    ("too_few_strategies", _replay("4", "1", "greedy,random"), "2 strategies given for 4 seats"),
    ("too_many_strategies", _replay("2", "1", "greedy,random,greedy"), "3 strategies given for 2 seats"),
    ("rules_not_found", _replay("2", "1", "greedy", "--rules", "{tmp}/nope.toml"), "rules file not found"),
    ("rules_is_a_directory", _replay("2", "1", "greedy", "--rules", "{tmp}"), "Is a directory"),
    ("position_not_found", ["score", "{tmp}/nope.json"], "position file not found"),
    ("position_is_a_directory", ["score", "{tmp}"], "Is a directory"),
    ("unknown_command", ["frobnicate"], "No such command 'frobnicate'"),
]
BAD_COMMANDS += [(f"replay_rules_{name}", _replay("2", "1", "greedy", "--rules", f"{{tmp}}/{name}"), msg)
                 for name, (_, msg) in BAD_RULES.items()]
BAD_COMMANDS += [(f"score_rules_{name}", ["score", "{tmp}/good.json", "--rules", f"{{tmp}}/{name}"], msg)
                 for name, (_, msg) in BAD_RULES.items()]
BAD_COMMANDS += [(f"score_{name}", ["score", f"{{tmp}}/{name}"], msg) for name, (_, msg) in BAD_POSITIONS.items()]
BAD_COMMANDS += [(f"score_json_{name}", ["score", f"{{tmp}}/{name}", "--json"], msg)
                 for name, (_, msg) in BAD_POSITIONS.items()]


@pytest.fixture
def bad_files(tmp_path):
    for name, (text, _) in BAD_RULES.items():
        write_toml(tmp_path, name, text)
    for name, (obj, _) in BAD_POSITIONS.items():
        write_json(tmp_path, name, obj)
    write_json(tmp_path, "good.json", {"players": 2, "columns": [{"parts": [0, 1]}]})
    return tmp_path


@pytest.mark.parametrize("args, message", [c[1:] for c in BAD_COMMANDS], ids=[c[0] for c in BAD_COMMANDS])
def test_bad_input_is_one_line_exit_2(runner, bad_files, args, message):
    before = sorted(os.listdir(bad_files))
    result = runner.invoke(main, [a.replace("{tmp}", str(bad_files)) for a in args])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    err = result.stderr.splitlines()
    assert len(err) == 1, result.stderr
    assert err[0].startswith("evora: error: ")
    assert message in err[0]
    assert sorted(os.listdir(bad_files)) == before          # nothing written
