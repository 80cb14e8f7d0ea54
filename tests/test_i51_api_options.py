"""Issue 51: the one parser of strategy options and weight files.

Weight files, specs, ``evora train``'s ``--replies`` and
``--start`` read every number through one bounded reader: nothing nested, long or infinite
reaches ``int()`` or ``float()`` unchecked. The API answers with a ValueError naming the field,
the command line with one line and exit status 2.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from evora_sim import api
from evora_sim.cli import main
from strategies import learned
from strategies.errors import StrategyError
from strategies.registry import parse_spec
from cli_results import one_error_line


# ---------------------------------------------------------------------------------------------
# weight files and options: one bounded reader
# ---------------------------------------------------------------------------------------------
def _position() -> api.State:
    state = api.new_game(n_players=2, seed=1)
    for _ in range(12):
        api.apply_action(state, api.legal_actions(state)[-1])
    return state


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
