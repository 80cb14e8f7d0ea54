"""Issue 51: the Python API and the one parser of strategy options and weight files.

A state handed to the API is checked before compiled code reads it (the engine reads without
bounds checks: a damaged cell crashed the interpreter); a Strategy object built by hand is
checked as its spec would be. Weight files, specs, ``evora train``'s ``--replies`` and
``--start`` read every number through one bounded reader: nothing nested, long or infinite
reaches ``int()`` or ``float()`` unchecked. The API answers with a ValueError naming the field,
the command line with one line and exit status 2.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import evora_sim
from evora_sim import api
from evora_sim import layout as L
from evora_sim.cli import main
from strategies import learned
from strategies.errors import StrategyError
from strategies.registry import parse_spec
from cli_results import one_error_line

ROOT = Path(evora_sim.__file__).resolve().parents[1]

# (cell, value, words of the message): each of these crashed the interpreter or aborted it
# (exit 139 / 134) in api.choose for greedy, expert and mcts before the state was checked
DAMAGE = [(L.G_NSPACES, 100_000, "number of site spaces is 100000"),
          (L.G_NCOLS, 100_000, "number of columns is 100000"),
          (L.COL_H, -100_000, "column 0's height is -100000"),
          (L.COL_HOLDER, 100_000, "column 0's majority holder is 100000")]

# every public entry point that hands a state to compiled code, as ``CALL(state)``
CALLS = {
    "legal_actions": "api.legal_actions(state)",
    "apply_action": "api.apply_action(state, 0)",
    "distinct_actions": "api.distinct_actions(state)",
    "final_scoring": "api.final_scoring(state)",
    "score_now": "api.score_now(state, 0)",
    "column_leader": "api.column_leader(state, 0)",
    "finish": "api.finish(state)",
    "finish(callable)": "api.finish(state, lambda s, legal, rng: legal[0])",
    "choose(greedy)": "api.choose('greedy', state)",
    "choose(expert)": "api.choose('expert', state)",
    "choose(mcts)": "api.choose('mcts(iterations=20)', state)",
    "choose(random)": "api.choose('random', state)",
    "Bot.step": "api.Bot('greedy').step(state)",
}

POSITION = textwrap.dedent("""
    from evora_sim import api
    def position():
        state = api.new_game(n_players=2, seed=1)
        for _ in range(12):
            api.apply_action(state, api.legal_actions(state)[-1])
        return state
""")


def _in_child(code: str) -> list[str]:
    """The lines ``code`` prints, run in a process of its own: a crash of the interpreter fails
    the test instead of killing pytest (the last line printed names the case)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", POSITION + textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=900, env=env, cwd=ROOT)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, (done.returncode, lines[-3:], done.stderr[-2000:])
    return lines


def test_i51_a_damaged_state_is_an_exception_naming_the_field_never_a_crash():
    cases = [(cell, value) for cell, value, _ in DAMAGE]
    lines = _in_child(f"CASES = {cases!r}\nCALLS = {CALLS!r}\n" + textwrap.dedent("""
        for cell, value in CASES:
            for name, call in CALLS.items():
                state = position()
                state.arr[cell] = value
                print(cell, name, end=": ", flush=True)
                try:
                    eval(call)
                    print("ANSWERED", flush=True)
                except Exception as exc:
                    print(type(exc).__name__, exc, flush=True)
    """))
    assert len(lines) == len(DAMAGE) * len(CALLS)
    for (cell, _, words), chunk in zip(DAMAGE, (lines[i:i + len(CALLS)] for i in range(0, len(lines), len(CALLS)))):
        for name, line in zip(CALLS, chunk):
            assert line.startswith(f"{cell} {name}: StateError") and words in line, line


def _position() -> api.State:
    state = api.new_game(n_players=2, seed=1)
    for _ in range(12):
        api.apply_action(state, api.legal_actions(state)[-1])
    return state


@pytest.mark.parametrize("arr, words", [
    (np.zeros(L.STATE_SIZE, dtype=np.float64), "int32"),
    (np.zeros(10, dtype=np.int32), f"{L.STATE_SIZE} cells"),
    ([0] * L.STATE_SIZE, "numpy"),
    (np.zeros(2 * L.STATE_SIZE, dtype=np.int32)[::2], "contiguous"),
])
def test_i51_a_state_array_of_another_kind_is_refused(arr, words):
    state = _position()
    state.arr = arr
    with pytest.raises(api.StateError, match=words) as err:
        api.legal_actions(state)
    assert isinstance(err.value, ValueError) and "state.arr" in str(err.value)


def test_i51_a_seat_or_column_out_of_range_is_refused():
    state = _position()
    for bad in (-1, 2, 10**6, True, 1.0):
        with pytest.raises(ValueError, match="seat"):
            api.score_now(state, bad)
    for bad in (-1, api.n_columns(state), 10**6):
        with pytest.raises(ValueError, match="column"):
            api.column_leader(state, bad)
        with pytest.raises(ValueError, match="column"):
            api.column_parts(state, bad)


def test_i51_the_state_is_checked_once_not_at_every_call(monkeypatch):
    """A state played through the API is known good: the check (a millisecond) runs again only
    when its cells changed outside the engine, so a Python strategy's look-ahead stays fast."""
    from evora_sim import statecheck

    calls = []
    real = statecheck.state_problem
    monkeypatch.setattr(statecheck, "state_problem", lambda *a: calls.append(1) or real(*a))
    state = _position()
    for _ in range(20):
        if api.is_terminal(state):
            break
        api.apply_action(state, api.legal_actions(state)[0])
        api.score_now(state, 0)
        api.choose("greedy", state.clone())
    assert calls == []
    handmade = api.State(state.arr.copy(), state.rules, state.seed)     # from outside: checked once
    api.legal_actions(handmade)
    api.legal_actions(handmade)
    assert len(calls) == 1
    handmade.arr[L.G_NCOLS] = 99
    with pytest.raises(api.StateError):
        api.legal_actions(handmade)


def test_i51_a_hand_built_strategy_is_checked_as_its_spec_would_be():
    """A Strategy object (the API takes one) whose fields no spec can give crashed the
    interpreter (a search's candidates beyond the planner's buffer: a double free)."""
    lines = _in_child("""
        from dataclasses import replace
        from strategies.errors import StrategyError
        from strategies.registry import parse_spec
        search, expert = parse_spec("mcts(iterations=10)"), parse_spec("expert")
        bad = [replace(search, search=search.search[:9] + (1000.0,) + search.search[10:]),
               replace(search, search=(1e9,) + search.search[1:]),
               replace(expert, replies=((2, 1000),)),
               replace(expert, kind=77),
               replace(search, search=search.search[:2] + (99.0,) + search.search[3:]),
               replace(expert, weights=(1.0,) * len(expert.weights))]
        for strategy in bad:
            try:
                print("ANSWERED", api.choose(strategy, position()), flush=True)
            except StrategyError as exc:
                print("StrategyError", isinstance(exc, ValueError), exc, flush=True)
        print("fine", api.choose(replace(expert, description="mine"), position()) in api.legal_actions(position()))
    """)
    words = ["candidates=1000 is out of range", "iterations=1000000000 is out of range", "replies = 1000",
             "plan=None is not allowed", "plan=None is not allowed", "do not match"]
    assert len(lines) == len(words) + 1 and lines[-1] == "fine True", lines
    for line, want in zip(lines, words):
        assert line.startswith("StrategyError True") and want in line, line


# ---------------------------------------------------------------------------------------------
# weight files and options: one bounded reader
# ---------------------------------------------------------------------------------------------
HUGE = "9" * 400
BAD_FILES = {    # case: (the line it changes, by its start; the new line; words of the message)
    "learned features nested deeply": ("features = ", "features = " + "[" * 3000 + "]" * 3000, "nested too deeply"),
    "hand weights nested deeply": None,
    "features = 5": ("features = ", "features = 5", "other features than this version computes (features = 5, "),
    "format = true": ("format = ", "format = true", "format True, this version reads format 1"),
    "format = 1.0": ("format = ", "format = 1.0", "format 1.0, this version reads format 1"),
    "a 400-digit weight": ("win = ", f"win = {HUGE}", "players.2.win = 9999999999... (400 digits) is out of range"),
    "a 5000-digit weight": ("win = ", "win = " + "9" * 5000, "holds a number of 5000 digits"),
    "replies = inf": ("replies = ", "replies = inf", "replies = inf is not a whole number (a whole number from 0 to 32)"),
    "replies = 1e400": ("replies = ", "replies = 1e400", "replies = inf is not a whole number"),
    "a 400-digit replies": ("replies = ", f"replies = {HUGE}", "replies = 9999999999... (400 digits) is out of range"),
}


def _bad_file(tmp_path, case, name="w.toml") -> Path:
    path = tmp_path / name
    if case == "hand weights nested deeply":
        path.write_text("[mine]\nweights = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n")
        return path
    start, new, _ = BAD_FILES[case]
    lines = learned.to_table(learned.LearnedWeights("mine", ((2, tuple([0.5] * (learned.NL + 1))),), "t", "", "",
                                                    ((2, 3),))).splitlines()
    at = [i for i, line in enumerate(lines) if line.startswith(start)]
    assert len(at) == 1
    lines[at[0]] = new
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_i51_a_bad_weight_file_is_one_strategy_error(tmp_path, case):
    path = _bad_file(tmp_path, case)
    words = BAD_FILES[case][2] if BAD_FILES[case] else "nested too deeply"
    with pytest.raises(StrategyError) as err:
        parse_spec(f"{path}:mine")
    message = str(err.value)
    assert words in message and "\n" not in message and len(message) < 600, message


@pytest.mark.parametrize("spec, words", [
    ("expert(replies=inf)", "replies='inf' is not a whole number"),
    ("expert(replies=1e400)", "replies='1e400' is not a whole number"),
    (f"expert(replies={HUGE})", "is out of range"),
    ("expert(replies=-0)", None),
    (f"greedy(vp={HUGE})", "is out of range"),
    ("greedy(vp=" + "9" * 5000 + ")", "is out of range"),
    (f"mcts(iterations={HUGE})", "is out of range"),
    ("mcts(c=1e400)", "c='1e400' is out of range"),
    ("mcts(c=nan)", "c='nan' is not a number"),
    (f"mcts(root=turn, candidates={HUGE})", "is out of range"),
])
def test_i51_options_are_bounded_in_specs_and_the_api(spec, words):
    state = _position()
    if words is None:
        assert parse_spec(spec).replies_for(2) == 0
        return
    for attempt in (lambda: parse_spec(spec), lambda: api.choose(spec, state)):
        with pytest.raises(StrategyError) as err:
            attempt()
        assert words in str(err.value) and isinstance(err.value, ValueError)


def test_i51_the_replies_bound_is_the_planners_buffer():
    from strategies import planner, values

    assert values.MAX_REPLIES == planner.TOP_MAX


@pytest.fixture
def cli():
    return CliRunner()


@pytest.mark.parametrize("case", ["replies = inf", "a 5000-digit weight", "learned features nested deeply",
                                  "features = 5"])
def test_i51_a_bad_weight_file_on_the_command_line_is_one_line(tmp_path, cli, case):
    path = _bad_file(tmp_path, case)
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "1", "--strategies",
                                            f"{path}:mine,greedy"]))
    assert BAD_FILES[case][2] in line


@pytest.mark.parametrize("args, words", [
    (["--replies", "inf"], "--replies 'inf' is not a whole number"),
    (["--replies", "1e400"], "--replies '1e400' is not a whole number"),
    (["--replies", HUGE], "is out of range (a whole number from 0 to 32)"),
    (["--start", "expert(replies=inf)"], "replies='inf' is not a whole number"),
    (["--start", "expert(replies=1e400)"], "replies='1e400' is not a whole number"),
    (["--start", "FILE:mine"], "replies = inf is not a whole number"),
    (["--start", "DEEP:mine"], "nested too deeply"),
    (["--teacher", "expert(replies=inf)"], "replies='inf'"),
])
def test_i51_train_options_are_bounded(tmp_path, cli, args, words):
    args = [a.replace("FILE", str(_bad_file(tmp_path, "replies = inf")))
            .replace("DEEP", str(_bad_file(tmp_path, "learned features nested deeply", "deep.toml"))) for a in args]
    out = tmp_path / "t"
    line = one_error_line(cli.invoke(main, ["train", "--players", "2", *args, "--out", str(out)]))
    assert words in line, line


def test_i51_replies_inf_in_a_spec_is_one_line(cli):
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "1", "--strategies",
                                            "expert(replies=inf),greedy"]))
    assert "replies='inf' is not a whole number" in line
