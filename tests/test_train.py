"""``evora train`` (issue 40): the recipe end to end at a tiny size, resumed, its file usable as a
spec and recording what made it; every argument checked before anything is played."""
from __future__ import annotations

import os
import tomllib

import numpy as np
import pytest
from click.testing import CliRunner

from evora_sim.cli import main
from evora_sim.experiments.train import _read_trained, plan_training, previous_weights, write_weights
from evora_sim.rules import load_rules
from evora_sim.runner import RunError
from strategies.registry import parse_spec

from cli_results import one_error_line

TINY = ["--players", "2", "--games", "10", "--teacher", "mcts(iterations=20)", "--duel-games", "8",
        "--jobs", "1", "--start", "cardheights"]


@pytest.fixture
def cli():
    return CliRunner()



def test_a_tiny_training_writes_a_usable_file_that_says_how_it_was_made_and_resumes(tmp_path, cli):
    out = tmp_path / "t"
    first = cli.invoke(main, ["train", *TINY, "--out", str(out), "-q"])
    assert first.exit_code == 0, first.output
    assert "Trained at 2 players on" in first.stdout
    written = out / ("expert.toml" if "Written:" in first.stdout else "candidate.toml")
    assert written.is_file()
    doc = tomllib.loads(written.read_text())
    table = next(iter(doc.values()))
    assert "evora train" in table["made_by"] and "seed 1" in table["made_by"] and "mcts(iterations=20)" in table["made_by"]
    assert table["rules_hash"] == load_rules().hash
    name = next(iter(doc))
    player = parse_spec(f"{written}:{name}")
    assert player.is_learned and player.learned_for(2) is not None
    # the same command again plays no teacher game again and fits the same weights
    chunks = sorted(os.listdir(out / "teacher-2p" / "games"))
    again = cli.invoke(main, ["train", *TINY, "--out", str(out), "-q"])
    assert again.exit_code == 0, again.output
    assert sorted(os.listdir(out / "teacher-2p" / "games")) == chunks
    assert tomllib.loads(written.read_text())[name]["players"]["2"]["weights"] == table["players"]["2"]["weights"]


@pytest.mark.parametrize("args, words", [
    (["--players", "5"], "--players must be 2, 3 or 4, got 5"),
    (["--games", "3"], "--games must be a whole number of teacher games, at least 10, got 3"),
    (["--duel-games", "1"], "--duel-games must be at least 4"),
    (["--teacher", "nonesuch"], "--teacher: unknown strategy 'nonesuch'"),
    (["--start", "random"], "--start 'random': a weighted player"),
    (["--set", "white_stone.vp=x"], "white_stone.vp"),
    (["--replies", "33"], "--replies '33' is out of range (a whole number from 0 to 32)"),
    (["--replies", "two"], "--replies 'two' is not a whole number"),
])
def test_bad_arguments_are_one_line_and_write_nothing(tmp_path, cli, args, words):
    out = tmp_path / "t"
    line = one_error_line(cli.invoke(main, ["train", "--players", "2", *args, "--out", str(out)]))
    assert words in line
    assert not out.exists()


def test_weights_trained_for_other_rules_are_never_overwritten(tmp_path, cli):
    out = tmp_path / "t"
    out.mkdir()
    rules = load_rules()
    plan = type("P", (), {"players": 2, "rules": rules})()
    write_weights(out, plan, tuple(np.zeros(77)), "test", "test")
    before = (out / "expert.toml").read_text()
    line = one_error_line(cli.invoke(main, ["train", *TINY, "--set", "white_stone.vp=6", "--out", str(out)]))
    assert "trained for other rules" in line and "train into another --out" in line
    assert (out / "expert.toml").read_text() == before


def test_a_damaged_weight_file_in_the_folder_is_refused_not_overwritten(tmp_path, cli):
    out = tmp_path / "t"
    out.mkdir()
    (out / "expert.toml").write_text("[expert]\nformat = 1\nkind = \"learned\"\nfeatures = []\n")
    line = one_error_line(cli.invoke(main, ["train", *TINY, "--out", str(out)]))
    assert "expert.toml" in line and "evora train" in line
    assert (out / "expert.toml").read_text().startswith("[expert]\nformat = 1")


def test_the_counts_trained_in_a_folder_are_kept_when_another_is_added(tmp_path):
    out = tmp_path
    rules = load_rules()
    for n, value in ((4, 0.25), (2, 0.5)):
        plan = type("P", (), {"players": n, "rules": rules})()
        write_weights(out, plan, tuple(np.full(77, value)), f"made {n}", "test")
    got = _read_trained(out, RunError)
    assert got.counts == (2, 4)
    assert got.for_players(4)[0] == 0.25 and got.for_players(2)[0] == 0.5
    assert "2 players: made 2" in got.made_by and "4 players: made 4" in got.made_by


def test_the_trained_expert_looks_as_far_as_the_built_in_one_unless_told(tmp_path):
    """How far the planner looks is not a matter of the rules: by default a trained expert, and
    the weights its check duels, value as many best turns by the next seat's reply as the
    built-in expert at that player count (a variant's expert is compared at equal depth), and
    the file records it beside other counts'."""
    rules = load_rules(overrides=("white_stone.vp=6",))
    for n in (2, 3, 4):
        plan = plan_training(n, 10, "cardheights", 1, 100, rules, tmp_path / "a")
        assert plan.replies == parse_spec("expert").replies_for(n)
        assert plan.previous.replies_for(n) == plan.replies
    assert parse_spec("expert").replies_for(2) > 0
    plan = plan_training(2, 10, "cardheights", 1, 100, rules, tmp_path / "a", "cardheights", "3")
    assert plan.replies == 3 and plan.previous.replies == ((2, 3),)
    for n, k in ((2, 3), (4, 0)):
        plan = type("P", (), {"players": n, "rules": rules})()
        write_weights(tmp_path, plan, tuple(np.zeros(77)), "x", "x", k)
    got = _read_trained(tmp_path, RunError)
    assert got.replies == ((2, 3),) and "replies = 3" in (tmp_path / "expert.toml").read_text()


def test_the_start_is_the_folders_weights_then_the_built_in_expert_then_cardheights(tmp_path):
    rules = load_rules()
    _, label = previous_weights(2, rules, tmp_path, RunError)
    assert label == "the built-in expert"
    _, label = previous_weights(2, load_rules(overrides=("white_stone.vp=6",)), tmp_path, RunError)
    assert label == "cardheights (restated)"
    plan = type("P", (), {"players": 2, "rules": rules})()
    write_weights(tmp_path, plan, tuple(np.zeros(77)), "x", "x")
    start, label = previous_weights(2, rules, tmp_path, RunError)
    assert "expert.toml" in label and start.learned_for(2) == tuple(np.zeros(77))


def test_the_planner_is_never_asked_for_more_turns_than_its_buffers_hold(monkeypatch):
    """Compiled code checks no bounds: asking the planner for more than its TOP_MAX best turns
    wrote past its buffers (a crash, or worse, silent damage). Now it is refused before any row."""
    from evora_sim.experiments import train
    from strategies.imitation import check_want
    from strategies.planner import TOP_MAX

    assert check_want(train.WANT) == train.WANT
    monkeypatch.setattr(train, "WANT", TOP_MAX + 1)
    with pytest.raises(ValueError, match=f"1 to {TOP_MAX} turns, not {TOP_MAX + 1}"):
        train._rows_of(2, load_rules(), "cardheights", [(1, np.zeros(0, dtype=np.int64))])
