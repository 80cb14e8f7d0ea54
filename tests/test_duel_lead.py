"""`evora duel`'s lead in VP: its arithmetic on a real duel, and its interval's coverage at and
near no difference, shown by simulation on planted duels (the seed is the unit: a seed's seat
rotations share its stacks, so its games are not independent)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evora_sim import duel as D
from script_modules import load_script

ROOT = Path(__file__).resolve().parents[1]


def band(rate: float, reps: int, level: float = 0.999) -> tuple[float, float]:
    """Where the observed share of ``reps`` replicates falls with probability ``level`` if the
    true rate is ``rate``."""
    lo, hi = stats.binom.interval(level, reps, rate)
    return lo / reps, hi / reps


def planted_duel(rng, seeds: int, players: int, lead: float, seed_taste: float = 0.0) -> pd.DataFrame:
    """The seats table of a duel of A against ``players - 1`` x B, with the duel's game ids and
    rotations: scores are a seed's own level (shared by every seat and rotation), a first-seat
    edge, skewed noise, A's true ``lead``, and with ``seed_taste`` a per-seed lead for A (some
    seeds suit A's play, others B's) that all the seed's rotations share."""
    field = ["A"] + ["B"] * (players - 1)
    game = np.repeat(np.arange(seeds * players), players)
    seed_idx = game // players
    rotation = game % players
    seat = np.tile(np.arange(players), seeds * players)
    strategy = np.array(field)[(seat - rotation) % players]      # rotation r: field i sits at (i + r) mod n
    level = rng.normal(100.0, 15.0, seeds)[seed_idx]
    taste = rng.normal(0.0, seed_taste, seeds)[seed_idx] if seed_taste else 0.0
    noise = rng.gamma(2.0, 6.0, len(game)) - 12.0                   # mean 0, sd 8.5, skewed
    score = level + 3.0 * (seat == 0) + noise + (strategy == "A") * (lead + taste)
    return pd.DataFrame({"game_id": game, "strategy": strategy, "score": score})


def test_a_duels_lead_is_the_difference_of_its_mean_scores():
    field = D.duel_field(["greedy(plan=action)", "random"], 2)
    res = D.duel(field, 40, seed=3)
    a, b = res.rows
    assert res.lead.strategy == a.strategy and res.lead.other == b.strategy and res.lead.seeds == 20
    # 2 players: every game has one seat of each, so the mean lead is the difference of means
    assert res.lead.mean == pytest.approx(a.mean_score - b.mean_score)
    lo, hi = res.lead.interval
    assert lo < res.lead.mean < hi
    assert any(line.startswith("greedy(plan=action) leads random by +") for line in D.duel_lines(res))
    # three strategies: no one lead to give
    three = D.duel(D.duel_field(["greedy(plan=action),random,builder(plan=action)"], None), 3, seed=3)
    assert three.lead is None and not any(" leads " in line for line in D.duel_lines(three))


def test_the_lead_of_a_field_of_one_against_three_counts_the_b_seats_mean():
    rng = np.random.default_rng(1)
    seats = planted_duel(rng, 5, 4, 2.0)
    leads = D.seed_leads(seats, "A", "B", 4)
    g = seats.groupby(["game_id", "strategy"])["score"].mean().unstack()
    by_hand = (g["A"] - g["B"]).to_numpy().reshape(5, 4).mean(axis=1)
    assert np.allclose(leads, by_hand)


@pytest.mark.parametrize("players, lead", [(2, 0.0), (4, 0.0), (2, 0.5), (4, 0.3)])
def test_the_leads_interval_covers_the_true_lead_at_its_nominal_rate(players, lead):
    """At no difference and at leads of a third and a half VP (noise sd 8.5 VP a seat, so the
    test has little power there): the 95% interval covers the truth in 95% of replicates."""
    rng = np.random.default_rng(100 * players + int(10 * lead))
    reps, covered = 400, 0
    for _ in range(reps):
        lo, hi = D.duel_lead(planted_duel(rng, 150, players, lead), ["A", "B"], players).interval
        covered += lo <= lead <= hi
    lo, hi = band(0.95, reps)
    assert lo <= covered / reps <= hi, covered / reps


def test_with_seeds_that_suit_one_player_the_seed_is_the_unit():
    """Seeds that suit A or B (a per-seed lead every rotation shares): the interval over seeds
    keeps its 95%; a t interval over games, as if each were independent, covers far less."""
    rng = np.random.default_rng(7)
    reps, ours, naive = 300, 0, 0
    for _ in range(reps):
        seats = planted_duel(rng, 150, 2, 0.0, seed_taste=20.0)
        lo, hi = D.duel_lead(seats, ["A", "B"], 2).interval
        ours += lo <= 0.0 <= hi
        g = seats.groupby(["game_id", "strategy"])["score"].mean().unstack()
        per_game = (g["A"] - g["B"]).to_numpy()
        half = stats.t.ppf(0.975, len(per_game) - 1) * per_game.std(ddof=1) / np.sqrt(len(per_game))
        naive += abs(per_game.mean()) <= half
    lo, hi = band(0.95, reps)
    assert lo <= ours / reps <= hi, ours / reps
    assert naive / reps < lo, naive / reps



def _duel_steps():
    """scripts/duel_steps.py as a module (scripts are not a package)."""
    return load_script("duel_steps")


def test_duel_steps_tests_each_kept_duel_and_adjusts_over_the_steps(tmp_path, capsys):
    """scripts/duel_steps.py on two kept duels: each step's win-rate and lead tests, Holm over
    the steps, and which side is ahead; an unfinished duel or a folder that is no duel is
    refused in one line, exit status 2."""
    import json

    duel_steps = _duel_steps()
    up, down = tmp_path / "up", tmp_path / "down"
    D.duel(D.duel_field(["greedy(plan=action)", "random"], 2), 40, seed=5, out=up)
    D.duel(D.duel_field(["random", "builder(plan=action)"], 2), 40, seed=6, out=down)
    steps = [duel_steps.step(up), duel_steps.step(down)]
    assert steps[0]["a"] == "greedy(plan=action)" and steps[0]["games"] == 40 and steps[0]["seeds"] == 20
    assert steps[0]["lead"] > 0 > steps[1]["lead"]
    # Holm over two: the smaller p doubled, the larger kept but never below the first
    p = sorted(s["p_lead"] for s in steps)
    first, second = min(1.0, 2 * p[0]), max(min(1.0, 2 * p[0]), p[1])
    assert duel_steps.main([str(up), str(down)]) == 0
    out = capsys.readouterr().out
    assert out.count("adjusted p = ") == 4
    want = {steps[0]["p_lead"]: "significant: greedy(plan=action) ahead",
            steps[1]["p_lead"]: "significant: builder(plan=action) ahead"}
    for raw, adjusted in zip(p, (first, second)):
        assert adjusted < 0.05      # both leads are large at 40 games
        assert f"against 0: adjusted p = {adjusted:.2g}, {want[raw]}" in out
    m = json.loads((down / "manifest.json").read_text())
    m["chunks"]["0"] = "missing"
    (down / "manifest.json").write_text(json.dumps(m))
    assert duel_steps.main([str(up), str(down)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "chunks not played yet" in err
    assert duel_steps.main([str(tmp_path / "nothing")]) == 2
    assert "no manifest.json" in capsys.readouterr().err


def test_the_committed_budget_ladder_recomputes_to_what_its_readme_says(capsys, monkeypatch):
    """reports/budget_ladder keeps the two duels of issue 11's budget ladder. Its README quotes
    what scripts/duel_steps.py prints for them; rerun on the committed folders, every line it
    prints is in the README verbatim, so a figure there is never edited by hand or left stale."""
    ladder = ROOT / "reports" / "budget_ladder"
    monkeypatch.chdir(ROOT)         # the folders as the README names them
    folders = ["reports/budget_ladder/ladder_1000_250", "reports/budget_ladder/ladder_4000_1000"]
    from evora_sim.manifest import damaged_chunks, read_manifest
    for folder in folders:           # every chunk is the bytes the run wrote (size and SHA-256)
        manifest = read_manifest(ROOT / folder)
        assert set(manifest["chunk_files"]) == {k for k, v in manifest["chunks"].items() if v == "done"}
        assert damaged_chunks(ROOT / folder, manifest) == {}
    assert _duel_steps().main(folders) == 0
    readme = (ladder / "README.md").read_text()
    printed = [line.strip() for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert len(printed) == 7
    missing = [line for line in printed if line not in readme]
    assert not missing, missing
