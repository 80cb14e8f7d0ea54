"""Rule variants: `--set KEY=VALUE` overrides, `evora compare`, `evora sweep`, `--until-ci`.

Small runs (--jobs 1) so the whole file stays well under a minute and a half.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scipy import stats as sps

from analysis.fairness import compare_fairness
from analysis.stats import holm
from analysis.variants import UNFAIRNESS, game_data, run_metrics
from evora_sim.cli import main
from evora_sim.rules import RulesError, apply_overrides, load_rules, rule_keys
from evora_sim.runner import open_run, simulate
from cli_results import ok, one_error_line

RULES = load_rules()


@pytest.fixture
def cli():
    return CliRunner()


def _flat(data, prefix=""):
    """Every leaf of the rules data as dotted key -> value (board spaces whole)."""
    out = {}
    for k, v in data.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


# ---------------------------------------------------------------------------------------------
# --set: overrides change exactly what they name
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("item, key, value", [
    ("height_vp.3=2", "height_vp.3", 2),
    ("emperor_tile.values=4,6", "emperor_tile.values", [4, 6]),
    ("majority.column_vp=4", "majority.column_vp", 4),
    ("height_majority.h3=20", "height_majority.h3", 20),
    ("governor.column_vp.capitals=7", "governor.column_vp.capitals", 7),
    ("temple.columns.4=12", "temple.columns.4", 12),
    ("white_stone.vp=6", "white_stone.vp", 6),
])
def test_an_override_changes_exactly_what_it_names(item, key, value):
    rules = load_rules(overrides=[item])
    assert rules.hash != RULES.hash
    before, after = _flat(RULES.data), _flat(rules.data)
    assert after[key] == value
    assert {k for k in before if before[k] != after[k]} == {key}
    assert rules.overrides == (item,)
    # the packed engine array changes too (the engine really plays the variant)
    assert not np.array_equal(rules.packed, RULES.packed)


def test_a_board_space_can_become_a_draw2_or_temple_space():
    rules = load_rules(overrides=["board.spaces.5.action=draw2",
                                  "board.spaces.5.stacks=governor,emperor"])
    spaces, base = rules.data["board"]["spaces"], RULES.data["board"]["spaces"]
    assert spaces[5] == {"colour": "governor", "action": "draw2", "stacks": ["governor", "emperor"]}
    assert [s for i, s in enumerate(spaces) if i != 5] == [s for i, s in enumerate(base) if i != 5]
    # a draw2 space turned into a build space loses its stacks (they no longer mean anything)
    rules = load_rules(overrides=["board.spaces.3.action=build_one_stone"])
    assert rules.data["board"]["spaces"][3] == {"colour": "centurion", "action": "build_one_stone"}
    rules = load_rules(overrides=["board.spaces.2.action=temple", "board.spaces.2.types=emperor"])
    assert rules.data["board"]["spaces"][2]["types"] == ["emperor"]


def test_overrides_apply_over_a_rules_file(tmp_path):
    path = tmp_path / "v.toml"
    path.write_text("[majority]\ncolumn_vp = 7\n", encoding="utf-8")
    rules = load_rules(path, ["height_vp.1=4"])
    assert rules.data["majority"]["column_vp"] == 7 and rules.data["height_vp"]["1"] == 4
    assert rules.source == str(path)


def test_apply_overrides_leaves_its_input_alone():
    data = json.loads(RULES.to_json())
    apply_overrides(data, ["height_vp.3=9"])
    assert data["height_vp"]["3"] == RULES.data["height_vp"]["3"]
    assert "board.spaces.15.types" in rule_keys()


@pytest.mark.parametrize("item, words", [
    ("hieght_vp.3=2", ["'hieght_vp.3'", "height_vp.3"]),
    ("height_vp.6=1", ["'height_vp.6'", "height_vp.5"]),
    ("height_vp=3", ["'height_vp' is a table", "height_vp.1"]),
    ("height_vp.3=two", ["'height_vp.3'", "whole number from 0 to 99", "'two'"]),
    ("height_vp.3=100", ["'height_vp.3'", "from 0 to 99", "100"]),
    ("majority.min_parts=0", ["'majority.min_parts'", "from 1 to 5"]),
    ("emperor_tile.values=4", ["emperor_tile.values", "2 whole numbers"]),
    ("emperor_tile.values=4,x", ["emperor_tile.values", "'x'"]),
    ("board.spaces.5.action=fly", ["board.spaces.5.action", "draw2"]),
    ("board.spaces.5.action=draw2", ["board.spaces.5.stacks"]),
    ("board.spaces.16.action=draw2", ["board.spaces.16.action", "0 to 15"]),
    ("board.spaces.2.stacks=governor,emperor", ["board.spaces.2.stacks", "draw2"]),
    ("board.spaces.5.types=governor,wizard", ["board.spaces.5.types", "'wizard'", "architect"]),
    ("players.workers_on_site.4=2", ["board too small"]),
    ("novalue", ["KEY=VALUE"]),
])
def test_a_bad_override_is_one_line_naming_the_key_and_nothing_runs(cli, tmp_path, item, words):
    with pytest.raises(RulesError):
        load_rules(overrides=[item])
    out = tmp_path / "run"
    line = one_error_line(cli.invoke(main, ["simulate", "-n", "4", "--games", "5", "--strategies",
                                            "greedy", "--jobs", "1", "--out", str(out), "-q",
                                            "--set", item]))
    for w in words:
        assert w in line, line
    assert not out.exists()


def test_the_manifest_records_the_resulting_rules(cli, tmp_path):
    out = tmp_path / "run"
    ok(cli.invoke(main, ["simulate", "-n", "2", "--games", "10", "--strategies", "greedy",
                         "--jobs", "1", "--out", str(out), "-q", "--set", "majority.column_vp=4"]))
    m = json.loads((out / "manifest.json").read_text())
    variant = load_rules(overrides=["majority.column_vp=4"])
    assert m["rules_hash"] == variant.hash == m["config"]["rules_hash"] != RULES.hash
    assert m["rules"]["majority"]["column_vp"] == 4
    assert m["rules_source"] == {"file": None, "set": ["majority.column_vp=4"]}
    # resuming with other overrides is refused: it would be another run
    line = one_error_line(cli.invoke(main, ["simulate", "-n", "2", "--games", "10", "--strategies",
                                            "greedy", "--jobs", "1", "--out", str(out), "-q",
                                            "--set", "majority.column_vp=5"]))
    assert "rules_hash" in line


# ---------------------------------------------------------------------------------------------
# variants that must matter, and variants that cannot
# ---------------------------------------------------------------------------------------------
def _run(tmp_path, name, sets=(), games=120, players=4, strategies="greedy,balanced,cards,emperor"):
    rules = load_rules(overrides=list(sets))
    return simulate(players, games, strategies, seed=3, out=tmp_path / name, rules=rules, seat_rotation=False)


def test_white_stone_vp_2_vs_6_moves_white_vp_and_scores_up(tmp_path):
    low = _run(tmp_path, "w2", ["white_stone.vp=2"])
    high = _run(tmp_path, "w6", ["white_stone.vp=6"])
    s2, s6 = low.seats, high.seats
    assert (s2["game_id"].to_numpy() == s6["game_id"].to_numpy()).all()
    assert s6["vp_white"].mean() > 2 * s2["vp_white"].mean() > 0
    # paired per game: the total score rises
    t2 = s2.groupby("game_id")["score"].sum().to_numpy()
    t6 = s6.groupby("game_id")["score"].sum().to_numpy()
    d = t6 - t2
    assert d.mean() - 2 * d.std(ddof=1) / np.sqrt(len(d)) > 0


def test_a_value_that_cannot_matter_gives_identical_games(tmp_path):
    a = _run(tmp_path, "r200", ["limits.max_rounds=200"], games=60)
    b = _run(tmp_path, "r300", ["limits.max_rounds=300"], games=60)
    assert a.manifest["rules_hash"] != b.manifest["rules_hash"]
    assert (a.games["end_trigger"] != "round_limit").all()
    pd.testing.assert_frame_equal(a.seats, b.seats)
    pd.testing.assert_frame_equal(a.games, b.games)


# ---------------------------------------------------------------------------------------------
# evora compare
# ---------------------------------------------------------------------------------------------
FIELD = "greedy,balanced,cards,emperor"


def _sim_args(out, *extra, games=100, seed=3):
    return ["simulate", "-n", "4", "--seeds", str(games), "--strategies", FIELD, "--seat-rotation",
            "--seed", str(seed), "--jobs", "1", "--out", str(out), "-q", *extra]


@pytest.fixture(scope="module")
def pair_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("pair")
    cli = CliRunner()
    for name, extra, seed in (("base", (), 3), ("white6", ("--set", "white_stone.vp=6"), 3),
                              ("other_seed", (), 11), ("rounds300", ("--set", "limits.max_rounds=300"), 3)):
        ok(cli.invoke(main, _sim_args(base / name, *extra, seed=seed)))
    return base


def test_compare_pairs_runs_on_the_same_seeds(cli, pair_runs, tmp_path):
    from analysis.variants import compare

    table, info = compare(open_run(pair_runs / "base"), open_run(pair_runs / "white6"))
    assert info["paired"] and info["games_paired"] == 400 and info["seeds_paired"] == 100
    t = table.set_index("metric")
    assert t.loc["mean score", "lo"] > 0                           # more VP for white stones
    assert set(t.index) >= {"seat 0 win rate", "seat 3 win rate", UNFAIRNESS,
                            "greedy win rate", "majority share of score", "game length (rounds)"}
    # every metric is tested; 'moved' is Holm over the family of metrics
    assert np.allclose(t["p_holm"], holm(t["p"]), equal_nan=True)
    assert (t["moved"] == (t["p_holm"] < 0.05)).all() and t.loc["mean score", "moved"]
    # the unfairness row: its change is that of the mean square seat deviation, paired by seed
    a_wins, b_wins = (game_data(open_run(pair_runs / x)).seed_wins() for x in ("base", "white6"))
    fc = compare_fairness(a_wins, b_wins, paired=True)
    assert t.loc[UNFAIRNESS, "diff"] == pytest.approx(fc.diff) and t.loc[UNFAIRNESS, "p"] == pytest.approx(fc.p)
    assert t.loc[UNFAIRNESS, "a"] == pytest.approx(fc.a.rms)
    # seat win-rate differences sum to zero (each game has one winner)
    assert abs(sum(t.loc[f"seat {s} win rate", "diff"] for s in range(4))) < 1e-12
    # the paired interval is narrower than the unpaired one would be for the score
    unpaired, uinfo = compare(open_run(pair_runs / "base"), open_run(pair_runs / "other_seed"))
    assert not uinfo["paired"]
    u = unpaired.set_index("metric")
    assert (t.loc["mean score", "hi"] - t.loc["mean score", "lo"]) < (u.loc["mean score", "hi"] - u.loc["mean score", "lo"])
    assert u.loc["seat 0 win rate", "method"].startswith("independent runs (cluster-robust")
    # independent runs: each run's seed-clustered variance, added
    a, b = game_data(open_run(pair_runs / "base")), game_data(open_run(pair_runs / "other_seed"))
    sa = np.std([w for w in np.bincount(a.cluster, weights=a.metrics["seat 0 win rate"][0])], ddof=1) / 4
    sb = np.std([w for w in np.bincount(b.cluster, weights=b.metrics["seat 0 win rate"][0])], ddof=1) / 4
    se = np.hypot(sa / np.sqrt(100), sb / np.sqrt(100))
    assert (u.loc["seat 0 win rate", "hi"] - u.loc["seat 0 win rate", "lo"]) / 2 == pytest.approx(
        se * sps.t.ppf(0.975, se ** 4 / ((sa ** 2 / 100) ** 2 / 99 + (sb ** 2 / 100) ** 2 / 99)), rel=1e-9)
    # the CLI prints it and writes CSV
    out = tmp_path / "cmp.csv"
    text = ok(cli.invoke(main, ["compare", str(pair_runs / "base"), str(pair_runs / "white6"), "--out", str(out)]))
    assert "paired by seed" in text and "mean score" in text and " pp" in text and "Holm" in text
    # issue 44: one vocabulary, pp for rates and VP for score, and never a squared unit
    assert "points" not in text and "²" not in text and "squared" not in text
    assert "± 0.00" not in text
    assert "What differs: rules white_stone.vp: 2 -> 6" in text     # names the variant, nothing else
    csv = pd.read_csv(out)
    assert {"metric", "a", "b", "diff", "lo", "hi", "p", "p_holm", "moved", "negligible", "method",
            "paired"} <= set(csv.columns)
    folder = tmp_path / "cmpdir"
    ok(cli.invoke(main, ["compare", str(pair_runs / "base"), str(pair_runs / "other_seed"), "--out", str(folder)]))
    assert (folder / "compare.csv").is_file() and "independent" in (folder / "compare.txt").read_text()


def test_compare_of_a_value_that_cannot_matter_is_zero_within_its_interval(pair_runs):
    from analysis.variants import compare

    table, info = compare(open_run(pair_runs / "base"), open_run(pair_runs / "rounds300"))
    assert info["paired"] and info["setup"] == ["rules limits.max_rounds: 200 -> 300"]
    assert (table["diff"].abs() < 1e-12).all()
    assert ((table["lo"] <= table["diff"] + 1e-12) & (table["diff"] <= table["hi"] + 1e-12)).all()
    assert not table["moved"].any()


def test_compare_bad_input_is_one_line(cli, pair_runs, tmp_path):
    line = one_error_line(cli.invoke(main, ["compare", str(pair_runs / "base"), str(tmp_path)]))
    assert "not a run folder" in line
    p2 = tmp_path / "p2"
    ok(cli.invoke(main, ["simulate", "-n", "2", "--games", "10", "--strategies", "greedy", "--jobs", "1",
                         "--out", str(p2), "-q"]))
    line = one_error_line(cli.invoke(main, ["compare", str(pair_runs / "base"), str(p2)]))
    assert "player counts" in line
    line = one_error_line(cli.invoke(main, ["compare", str(pair_runs / "base"), str(pair_runs / "white6"),
                                            "--min-effect", "-1"]))
    assert "--min-effect" in line and "-1" in line


# ---------------------------------------------------------------------------------------------
# evora sweep
# ---------------------------------------------------------------------------------------------
def _sweep_args(out, *params, games=80, extra=()):
    args = ["sweep", "-n", "4", "--strategies", FIELD, "--seat-rotation", "--seed", "5",
            "--seeds", str(games), "--jobs", "1", "--out", str(out), "-q"]
    for p in params:
        args += ["--param", p]
    return args + list(extra)


def test_a_sweep_over_white_stone_vp_moves_the_expected_metrics(cli, tmp_path):
    out = tmp_path / "sweep"
    # the current rule's value (2) listed second: it is still the baseline of the differences
    text = ok(cli.invoke(main, _sweep_args(out, "white_stone.vp=6,2")))
    assert "mean score" in text and "sweep summary" in text
    folders = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert folders == ["summary", "white_stone.vp=2", "white_stone.vp=6"]
    a, b = open_run(out / "white_stone.vp=2"), open_run(out / "white_stone.vp=6")
    # common random numbers: the same game seeds in every combination
    assert (a.games.sort_values("game_id")["seed"].to_numpy() == b.games.sort_values("game_id")["seed"].to_numpy()).all()
    assert a.manifest["rules"]["white_stone"]["vp"] == 2 and b.manifest["rules"]["white_stone"]["vp"] == 6
    df = pd.read_csv(out / "summary" / "sweep.csv")
    assert {"combination", "white_stone.vp", "metric", "value", "lo", "hi", "diff", "diff_lo", "diff_hi"} <= set(df.columns)
    score = df[df["metric"] == "mean score"].set_index("white_stone.vp")
    assert score.loc[6, "diff_lo"] > 0 and score.loc[6, "value"] > score.loc[2, "value"]
    share = df[df["metric"] == "majority share of score"].set_index("white_stone.vp")
    assert share.loc[6, "diff_hi"] < 0                      # majorities are a smaller part of more VP
    for name in ("sweep.png", "sweep.svg", "sweep.md", "sweep.html"):
        assert (out / "summary" / name).is_file()
    md = (out / "summary" / "sweep.md").read_text()
    assert "Seat unfairness" in md and "Holm" in md and "± 0.00" not in md
    assert {"p_holm", "change", "level"} <= set(df.columns) and (df["level"] == 0.95).all()
    assert score.loc[6, "change"] == "moved"
    assert score.loc[2, "change"] == "baseline" and score.loc[2, "baseline"] and score.loc[2, "diff"] == 0
    assert "change from the current rule" in md
    # the same command again resumes (nothing to play) and gives the same summary
    ok(cli.invoke(main, _sweep_args(out, "white_stone.vp=6,2")))
    pd.testing.assert_frame_equal(df, pd.read_csv(out / "summary" / "sweep.csv"))
    # another sweep into the same folder is refused
    line = one_error_line(cli.invoke(main, _sweep_args(out, "white_stone.vp=2,4")))
    assert "different sweep" in line


def test_a_sweep_over_a_value_that_cannot_matter_stays_within_its_intervals(cli, tmp_path):
    out = tmp_path / "sweep"
    ok(cli.invoke(main, _sweep_args(out, "limits.max_rounds=200,300", games=40)))
    df = pd.read_csv(out / "summary" / "sweep.csv")
    other = df[df["limits.max_rounds"] == 300]
    assert len(other) >= 8
    assert (other["diff_lo"] <= 1e-12).all() and (other["diff_hi"] >= -1e-12).all()
    assert (other["diff"].abs() < 1e-12).all()


def test_a_two_parameter_sweep_plays_every_combination(cli, tmp_path):
    out = tmp_path / "sweep"
    ok(cli.invoke(main, ["sweep", "-n", "3", "--strategies", "greedy", "--games", "12", "--jobs", "1",
                         "--out", str(out), "-q", "--param", "emperor_tile.values=3,5;4,6",
                         "--param", "majority.column_vp=3,5"]))
    doc = json.loads((out / "sweep.json").read_text())
    assert len(doc["combos"]) == 4
    assert doc["combos"][3]["values"] == {"emperor_tile.values": "4,6", "majority.column_vp": "5"}
    run = open_run(out / doc["combos"][3]["name"])
    assert run.manifest["rules"]["emperor_tile"]["values"] == [4, 6]
    assert run.manifest["rules"]["majority"]["column_vp"] == 5


@pytest.mark.parametrize("param, words", [
    ("hieght_vp.3=1,2", ["--param hieght_vp.3", "height_vp.3"]),
    ("white_stone.vp=2,x", ["white_stone.vp", "whole number", "'x'"]),
    ("white_stone.vp=2,200", ["white_stone.vp", "from 0 to 99"]),
    ("board.spaces.2.action=draw2", ["board.spaces.2.stacks"]),
    ("white_stone.vp", ["KEY=V1,V2"]),
])
def test_a_bad_sweep_is_one_line_and_nothing_runs(cli, tmp_path, param, words):
    out = tmp_path / "sweep"
    line = one_error_line(cli.invoke(main, _sweep_args(out, param, games=10)))
    for w in words:
        assert w in line, line
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# --until-ci
# ---------------------------------------------------------------------------------------------
def test_schedule_doubles_and_ends_at_the_maximum():
    from evora_sim.sequential import schedule

    assert schedule(100, 1600, 100) == [100, 200, 400, 800, 1600]
    assert schedule(100, 1000, 100) == [100, 200, 400, 800, 1000]
    assert schedule(100, 100, 100) == [100]


def test_ci_metric_groups_name_every_headline_metric():
    from evora_sim.sequential import half_widths, parse_ci_metrics

    assert parse_ci_metrics("seats, spread") == ["seats", "fairness"]      # the old name still works
    table = pd.DataFrame({"metric": [f"seat {s} win rate" for s in range(4)] + [UNFAIRNESS, "mean score"],
                          "kind": ["rate"] * 4 + ["unfairness", "mean"],
                          "lo": [0.2] * 4 + [0.0, 90.0], "hi": [0.3] * 4 + [0.02, 92.0]})
    hw = half_widths(table, ["fairness", "score"])
    assert hw == {UNFAIRNESS: pytest.approx(1.0), "mean score": pytest.approx(1.0)}


def test_until_ci_stops_once_the_adjusted_width_is_reached(cli, tmp_path):
    out = tmp_path / "seq"
    text = ok(cli.invoke(main, ["simulate", "-n", "4", "--strategies", FIELD, "--seat-rotation",
                                "--seeds", "50", "--jobs", "1", "--out", str(out), "-q",
                                "--until-ci", "3", "--max-games", "1600"]))
    assert "width reached" in text
    m = json.loads((out / "manifest.json").read_text())
    seq = m["sequential"]
    assert "Bonferroni" in seq["method"] and seq["looks_planned"] == [50, 100, 200, 400, 800, 1600]
    assert seq["alpha_per_look"] == pytest.approx(0.05 / 6)
    n = seq["stopped_at_seeds"]
    assert m["config"]["games"] == n < 1600
    assert open_run(out).n_games == 4 * n
    assert seq["history"][-1]["max_half_width"] < 3 <= seq["history"][-2]["max_half_width"]
    # the games are those a plain run of n seeds plays (seeds never redrawn)
    plain = simulate(4, n, FIELD, seed=1, out=tmp_path / "plain", seat_rotation=True)
    got = open_run(out).seats.sort_values(["game_id", "seat"]).reset_index(drop=True)
    want = plain.seats.sort_values(["game_id", "seat"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    # the report states the method
    rep = tmp_path / "rep"
    ok(cli.invoke(main, ["report", str(out), "--out", str(rep)]))
    md = (rep / "report.md").read_text()
    assert "Bonferroni" in md and "## Run until sure" in md
    # the report shows the adjusted intervals: recomputed at the per-look level, they match
    sure = pd.read_csv(rep / "until_sure.csv").set_index("metric")
    adjusted = run_metrics(game_data(open_run(out)), alpha=seq["alpha_per_look"]).set_index("metric")
    assert np.allclose(sure.loc[adjusted.index, "hi"], adjusted["hi"], equal_nan=True)
    assert (sure["level"] == 1 - seq["alpha_per_look"]).all()
    plain = run_metrics(game_data(open_run(out))).set_index("metric")
    assert (sure.loc["seat 0 win rate", "hi"] - sure.loc["seat 0 win rate", "lo"]
            > plain.loc["seat 0 win rate", "hi"] - plain.loc["seat 0 win rate", "lo"])


def test_until_ci_stops_at_the_maximum_and_says_so(cli, tmp_path):
    out = tmp_path / "seq"
    text = ok(cli.invoke(main, ["simulate", "-n", "2", "--strategies", "greedy", "--games", "20",
                                "--jobs", "1", "--out", str(out), "-q", "--until-ci", "0.1",
                                "--max-games", "40"]))
    assert "maximum games reached" in text
    assert json.loads((out / "manifest.json").read_text())["config"]["games"] == 40


def test_until_ci_gives_every_process_a_chunk_from_the_first_look(cli, tmp_path):
    """The first look was one chunk of --games seeds, so one process played it however many
    --jobs asked for. Now the chunk divides the first look into about one a process (the looks
    stay whole chunks), a run already in the folder keeps its own chunks, and a first look with
    no divisor near that keeps the old chunk rather than thousands of tiny ones."""
    from evora_sim.runner import Execution, check_jobs
    from evora_sim.sequential import looks_chunk, schedule

    assert looks_chunk([], 400, 2) == 200 and looks_chunk([], 400, 1) == 400
    assert looks_chunk([], 1000, 8) == 125 and looks_chunk([], 100_000, 2) == 5000
    assert looks_chunk([], 997, 2) == 997 and looks_chunk([], 10_007, 2) == 5000
    for initial in (2, 3, 25, 50, 96, 400, 1000, 4096, 6000):
        for jobs in (1, 2, 3, 8):
            chunk = looks_chunk([], initial, jobs)
            schedule(initial, initial * 8, chunk)             # every look but the last is whole chunks
            assert chunk <= 5000
    out = tmp_path / "seq"
    ok(cli.invoke(main, ["simulate", "-n", "2", "--strategies", "greedy", "--games", "20", "--jobs", "2",
                         "--out", str(out), "-q", "--until-ci", "0.1", "--max-games", "40"]))
    m = json.loads((out / "manifest.json").read_text())
    assert m["config"]["chunk_size"] == (10 if check_jobs(2) == 2 else 20)
    assert len(m["chunks"]) == 40 // m["config"]["chunk_size"]
    # a run made in one chunk of the first look resumes in its own chunks, whatever --jobs says
    old = tmp_path / "old"
    simulate(2, 20, "greedy", seed=1, out=old, execution=Execution(jobs=1, chunk_size=20))
    assert looks_chunk([old], 20, 2) == 20
    ok(cli.invoke(main, ["simulate", "-n", "2", "--strategies", "greedy", "--games", "20", "--jobs", "2",
                         "--out", str(old), "-q", "--until-ci", "0.1", "--max-games", "40"]))
    assert json.loads((old / "manifest.json").read_text())["config"]["chunk_size"] == 20


def test_until_ci_on_a_sweep_brings_every_combination_to_the_same_size(cli, tmp_path):
    out = tmp_path / "sweep"
    text = ok(cli.invoke(main, _sweep_args(out, "white_stone.vp=2,6", games=25,
                                           extra=["--until-ci", "8", "--max-games", "400"])))
    assert "Bonferroni" in text
    sizes = {json.loads((out / f / "manifest.json").read_text())["config"]["games"]
             for f in ("white_stone.vp=2", "white_stone.vp=6")}
    assert len(sizes) == 1
    assert "Run until sure" in (out / "summary" / "sweep.md").read_text()
    df = pd.read_csv(out / "summary" / "sweep.csv")
    alpha = json.loads((out / "white_stone.vp=2" / "manifest.json").read_text())["sequential"]["alpha_per_look"]
    assert np.allclose(df["level"], 1 - alpha)                   # the adjusted intervals are shown


@pytest.mark.parametrize("extra, words", [
    (["--until-ci", "0"], ["--until-ci", "positive"]),
    (["--max-games", "100"], ["--max-games needs --until-ci"]),
    (["--until-ci", "1", "--max-games", "5"], ["--max-games", "at least --games"]),
    (["--until-ci", "1", "--ci-metrics", "seats,luck"], ["--ci-metrics", "'luck'", "fairness"]),
])
def test_bad_until_ci_is_one_line(cli, tmp_path, extra, words):
    out = tmp_path / "seq"
    line = one_error_line(cli.invoke(main, ["simulate", "-n", "2", "--strategies", "greedy",
                                            "--games", "20", "--jobs", "1", "--out", str(out),
                                            "-q", *extra]))
    for w in words:
        assert w in line, line
    assert not out.exists()


# ---------------------------------------------------------------------------------------------
# evora run with a variant
# ---------------------------------------------------------------------------------------------
def test_the_main_job_plays_a_variant(cli, tmp_path):
    out, rep = tmp_path / "runs", tmp_path / "rep"
    ok(cli.invoke(main, ["run", "--games", "6", "--set", "white_stone.vp=6", "--set", "players.min=3",
                         "--out", str(out), "--report-dir", str(rep), "--jobs", "1", "-q"]))
    assert sorted(p.name for p in out.iterdir()) == ["expert", "p3", "p4"]        # 2 players not allowed
    assert sorted(p.name for p in (out / "expert").iterdir()) == ["p3", "p4"]
    m = json.loads((out / "p4" / "manifest.json").read_text())
    assert m["rules"]["white_stone"]["vp"] == 6
    assert m["rules_source"]["set"] == ["white_stone.vp=6", "players.min=3"]
    assert "white_stone.vp=6" in (rep / "report.md").read_text()
    line = one_error_line(cli.invoke(main, ["run", "--games", "6", "--set", "white_stone.vpp=6",
                                            "--out", str(tmp_path / "x"), "-q"]))
    assert "white_stone.vp" in line and not (tmp_path / "x").exists()


def test_score_and_replay_take_overrides_too(cli, tmp_path):
    from test_cli import POSITION

    path = tmp_path / "pos.json"
    path.write_text(json.dumps(POSITION), encoding="utf-8")
    doc = json.loads(ok(cli.invoke(main, ["score", str(path), "--json", "--set", "majority.column_vp=7"])))
    assert [s["column_majority"] for s in doc["seats"]] == [7, 14, 14]     # as with a rules file
    a = ok(cli.invoke(main, ["replay", "-n", "2", "--seed", "4", "--strategies", "greedy"]))
    b = ok(cli.invoke(main, ["replay", "-n", "2", "--seed", "4", "--strategies", "greedy",
                             "--set", "limits.max_rounds=300"]))
    assert a.splitlines()[0] != b.splitlines()[0]                  # the header names the rules hash
    assert a.splitlines()[1:] == b.splitlines()[1:]                # the game is the same
    line = one_error_line(cli.invoke(main, ["score", str(path), "--set", "majority.colum_vp=7"]))
    assert "majority.column_vp" in line
