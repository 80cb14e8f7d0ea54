"""``evora train`` (issue 40): the recipe end to end at a tiny size, resumed, its file usable as a
spec and recording what made it; every argument checked before anything is played."""
from __future__ import annotations

import os
import tomllib

import numpy as np
import pytest
from click.testing import CliRunner

from evora_sim.cli import main
from evora_sim.experiments.train_runs import plan_training, previous_weights, read_weights, write_weights
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
    (["--games", "3"], "--games must be a whole number of teacher games from 10 to 1,000,000, got 3"),
    (["--duel-games", "1"], "--duel-games must be a whole number from 4 (one seed under every seat order)"),
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
    got = read_weights(out, RunError)
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
        # ... from the same point of the game (at 3 and 4 players the built-in looks ahead late)
        assert plan.ahead_from == parse_spec("expert").ahead_from_for(n) == plan.previous.ahead_from_for(n)
    assert parse_spec("expert").replies_for(2) > 0
    plan = plan_training(2, 10, "cardheights", 1, 100, rules, tmp_path / "a", "cardheights", "3")
    assert plan.replies == 3 and plan.previous.replies == ((2, 3),)
    plan = plan_training(3, 10, "cardheights", 1, 100, rules, tmp_path / "a", "cardheights", "0")
    assert plan.replies == 0 and plan.ahead_from == 0 and plan.previous.ahead_from == ()
    for n, k, t in ((2, 3, 0.0), (4, 0, 0.0), (3, 4, 0.8)):
        plan = type("P", (), {"players": n, "rules": rules})()
        write_weights(tmp_path, plan, tuple(np.zeros(77)), "x", "x", k, t)
    got = read_weights(tmp_path, RunError)
    assert got.replies == ((2, 3), (3, 4)) and "replies = 3" in (tmp_path / "expert.toml").read_text()
    assert got.ahead_from == ((3, 0.8),) and parse_spec(f"{tmp_path / 'expert.toml'}:expert").ahead_from_for(3) == 0.8


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
    from evora_sim.experiments import train_runs as train
    from strategies.imitation import check_want
    from strategies.planner import TOP_MAX

    assert check_want(train.WANT) == train.WANT
    monkeypatch.setattr(train, "WANT", TOP_MAX + 1)
    with pytest.raises(ValueError, match=f"1 to {TOP_MAX} turns, not {TOP_MAX + 1}"):
        train.teacher_rows(2, load_rules(), "cardheights", [(1, np.zeros(0, dtype=np.int64))])


def test_the_check_duels_the_player_the_weights_would_replace_in_the_target_rules(tmp_path, monkeypatch):
    """Issue 50, item 12: a variant's candidate started from cardheights beat cardheights and was
    written, though it lost to the built-in expert in that variant. The check now duels the player
    DIR/expert.toml would replace: the folder's weights, else the built-in expert, as it plays."""
    from evora_sim import duel as D
    from evora_sim.experiments.train_runs import check_candidate

    seen = {}

    def fake_duel(field, games, seed, jobs, rules, quiet, out):
        seen.update(field=field, rules=rules)
        raise RuntimeError("stop")

    monkeypatch.setattr(D, "duel", fake_duel)
    variant = load_rules(overrides=("white_stone.vp=6",))
    plan = plan_training(2, 10, "cardheights", 1, 8, variant, tmp_path / "a", "cardheights")
    assert plan.previous_label == "cardheights" and plan.rival_label == "the built-in expert"
    with pytest.raises(RuntimeError, match="stop"):
        check_candidate(plan, tuple(np.zeros(77)), tmp_path / "a", 1, True)
    expert = parse_spec("expert")
    assert seen["rules"].hash == variant.hash
    assert [s.learned_for(2) for s in seen["field"][1:]] == [expert.learned_for(2)]
    assert seen["field"][1].replies_for(2) == expert.replies_for(2)
    # weights already in the folder (for these rules) are the ones to beat, at their own depth
    mine = tmp_path / "b"
    mine.mkdir()
    write_weights(mine, type("P", (), {"players": 2, "rules": variant})(), tuple(np.full(77, 0.5)), "x", "x", 3)
    plan = plan_training(2, 10, "cardheights", 1, 8, variant, mine, "cardheights", "0")
    assert "expert.toml" in plan.rival_label
    assert plan.rival.learned_for(2) == tuple(np.full(77, 0.5)) and plan.rival.replies_for(2) == 3


@pytest.mark.parametrize("beats", [True, False])
def test_new_weights_are_written_only_when_they_beat_that_player_significantly(tmp_path, monkeypatch, beats):
    """The decision on the check's interval: above the fair share writes expert.toml; anything
    else leaves the folder's weights as they were, writes candidate.toml and says so plainly."""
    from evora_sim.duel import DuelResult, DuelRow
    from evora_sim.experiments import train_runs as T

    class Fit:
        turns, agreement = 100, 0.5

    interval = (0.55, 0.65) if beats else (0.45, 0.62)          # the second: more wins, not significantly
    row = DuelRow("candidate", 1, 400, 240 if beats else 212, 50.0, interval, 1.0)
    monkeypatch.setattr(T, "teacher_games", lambda *a, **k: None)
    monkeypatch.setattr(T, "training_rows", lambda *a, **k: (np.zeros((1, 76)), np.zeros(1, int), np.zeros(1, int)))
    monkeypatch.setattr(T, "fit_candidate", lambda *a, **k: (tuple(np.full(77, 0.25)), Fit()))
    monkeypatch.setattr(T, "check_candidate", lambda *a, **k: DuelResult(["candidate", "expert"], 2, 200, 400, 2,
                                                                         [row]))
    out = tmp_path / "t"
    plan = plan_training(2, 10, "cardheights", 1, 8, load_rules(), out, "cardheights")
    result = T.run_training(plan, out, jobs=1, quiet=True)
    text = " ".join(result.lines)
    assert result.kept is beats
    assert (out / "expert.toml").exists() is beats and (out / "candidate.toml").exists() is not beats
    if beats:
        assert "Better than the built-in expert" in text
    else:
        assert "Not written: the new weights win 53.0%" in text and "against the built-in expert in these rules" in text
        assert "not significantly more than a fair share, so the built-in expert stays the player to use" in text
        assert "candidate.toml" in text


def test_a_weight_file_played_under_other_rules_than_its_own_is_warned_about_in_one_line(tmp_path, cli):
    """Issue 50, item 12: the file records the rules' hash it was trained for; played under other
    rules it still plays, and the user is told in one line (no word when the rules are its own)."""
    rules = load_rules()
    write_weights(tmp_path, type("P", (), {"players": 2, "rules": rules})(), tuple(np.zeros(77)), "x", "x")
    spec = f"{tmp_path / 'expert.toml'}:expert"
    common = ["simulate", "-n", "2", "--seeds", "2", "--strategies", f"{spec},random", "--jobs", "1", "-q"]
    other = cli.invoke(main, [*common, "--set", "white_stone.vp=6", "--out", str(tmp_path / "a")])
    assert other.exit_code == 0, other.output
    warned = [line for line in other.stderr.splitlines() if "warning" in line]
    assert len(warned) == 1 and "trained for other rules" in warned[0] and rules.hash in warned[0]
    own = cli.invoke(main, [*common, "--out", str(tmp_path / "b")])
    assert own.exit_code == 0 and "warning" not in own.stderr
    duel = cli.invoke(main, ["duel", spec, "random", "--games", "2", "--jobs", "1", "-q", "--set", "white_stone.vp=6"])
    assert duel.exit_code == 0 and duel.stderr.count("trained for other rules") == 1
