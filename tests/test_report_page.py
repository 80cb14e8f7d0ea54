"""The report as a reader gets it: rendered in a real browser (headless Chromium) at 1280 px
without sideways scrolling, every image loaded, no console error, a screenshot kept; names
holding HTML shown as text; an unrotated mixed field gets no seat finding, and says why."""
from __future__ import annotations

import re

import pandas as pd
import pytest
from click.testing import CliRunner

import browser
from evora_sim.cli import main
from evora_sim.runner import Execution, simulate


def _report(runs, out, *extra):
    res = CliRunner().invoke(main, ["report", *map(str, runs), "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return (out / "report.html").read_text(encoding="utf-8"), (out / "report.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rotated(tmp_path_factory):
    base = tmp_path_factory.mktemp("page")
    return [simulate(3, 30, "balanced,cards,greedy(plan=action)", seed=7, out=base / "p3",
                     execution=Execution(chunk_size=15)).out,
            simulate(4, 16, "balanced,cards,emperor,greedy", seed=8, out=base / "p4",
                     execution=Execution(chunk_size=8)).out]


def test_the_report_renders_in_chromium_at_1280_px(rotated, tmp_path):
    browser.need_chromium()
    out = tmp_path / "rep"
    _report(rotated, out)
    page = out / "report.html"
    got = browser.check_page(page, tmp_path / "browser", width=1280)
    assert got["width"] == 1280
    assert got["scroll_width"] <= 1280 and got["overflow"] == [], got["overflow"]
    assert len(got["images"]) >= 10 and all(i["loaded"] for i in got["images"]), got["images"]
    assert got["errors"] == []
    shot = browser.screenshot(page, tmp_path / "report-1280.png")
    assert shot.stat().st_size > 10_000


def test_names_holding_html_show_as_text(tmp_path):
    bad = "<script>evil=1</script>"
    weights = tmp_path / "w.toml"
    weights.write_text(f'["{bad}"]\nbase = "greedy"\nplan = "action"\n', encoding="utf-8")
    spec = f"{weights}:{bad},random"
    from evora_sim.rules import load_rules

    rules = load_rules(overrides=[f"meta.name={bad}"])
    run = simulate(2, 8, spec, seed=2, out=tmp_path / "run", rules=rules, execution=Execution(chunk_size=8))
    html, _ = _report([run.out], tmp_path / "rep")
    assert "evil=1" in html                                     # it is in the page ...
    assert "<script>evil" not in html and "&lt;script&gt;evil=1&lt;/script&gt;" in html   # ... as text
    assert html.count("<script") == 0


def test_an_unrotated_mixed_field_gets_no_seat_finding(tmp_path):
    run = simulate(4, 24, "cards,random,random,random", seed=5, out=tmp_path / "run", seat_rotation=False,
                   execution=Execution(chunk_size=12))
    mirror = simulate(2, 12, "greedy(plan=action)", seed=5, out=tmp_path / "mirror", execution=Execution(chunk_size=12))
    html, md = _report([run.out, mirror.out], tmp_path / "rep")
    answer = md[md.index("## The answer"):md.index("## Findings")]
    seats = md[md.index("## Seat advantage"):md.index("## Strategy match-ups")]
    why = "No seat finding for 4 players: the seats held different strategies"
    assert why in answer and "--no-seat-rotation" in answer and "seat rotation" in answer
    assert "The first player wins" not in answer.split("### 4 players")[1]
    assert why in seats                                          # the seat section says it too
    svg = (tmp_path / "rep" / "seat_deviation.svg").read_text(encoding="utf-8")
    assert "4 players: no seat finding" in svg                   # and so does the plot
    assert "The first player wins" in answer.split("### 2 players")[1].split("###")[0]   # a mirror is fine
    adv = pd.read_csv(tmp_path / "rep" / "seat_advantage.csv")
    assert set(adv["n_players"]) == {2}                          # no 4-player seat rows at all
    four = answer.split("### 4 players")[1].split("###")[0]
    assert re.search(r"significant|Is it fair", four) is None


def test_the_readme_board_example_validates_runs_and_is_reported_as_the_rules_board(tmp_path):
    from pathlib import Path

    from analysis import labels
    from evora_sim.rules import load_rules

    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "board.toml"
    page = (example.parents[1] / "commands" / "rules.md").read_text(encoding="utf-8")   # where the README sends a designer
    assert "examples/board.toml" in page and "[[board.spaces]]" in page
    rules = load_rules(example)
    assert len(rules.data["board"]["spaces"]) == 16 and not labels.board_is_default(rules.data)
    res = CliRunner().invoke(main, ["replay", "-n", "2", "--seed", "3", "--strategies", "greedy(plan=action),random",
                                    "--rules", str(example)])
    assert res.exit_code == 0 and "Final scoring" in res.output
    run = simulate(2, 6, "greedy(plan=action),random", seed=1, out=tmp_path / "run", rules=rules,
                   execution=Execution(chunk_size=6))
    _, md = _report([run.out], tmp_path / "rep")
    assert "the one given by the rules" in md and "reconstruction (decision D1): the published" not in md


def _strongest_rows():
    import pandas as pd

    return pd.DataFrame([
        {"n_players": 4, "kind": "card", "code": "emp_place", "label": "Emperor: place an Emperor tile",
         "adj_diff": 0.478, "adj_lo": 0.463, "adj_hi": 0.493, "p_adj_holm": 1e-9, "negligible": False},
        {"n_players": 4, "kind": "card", "code": "tile_flip_both", "label": "Instant tile: flip both",
         "adj_diff": 0.10, "adj_lo": 0.08, "adj_hi": 0.12, "p_adj_holm": 1e-5, "negligible": False},
        {"n_players": 4, "kind": "space", "code": "03 draw2", "label": "Draw 2 (governor, emperor)",
         "adj_diff": -0.05, "adj_lo": -0.07, "adj_hi": -0.03, "p_adj_holm": 1e-4, "negligible": False}])


def test_the_first_screen_names_card_findings_as_associations_and_quotes_an_experiment():
    """The strongest findings of the run's own games compare seats that played a card with seats
    that did not: the sentence itself says it is an association. With an evora card-value
    experiment in the report, a card's sentence quotes its causal figure first (and says so
    when the experiment played another field); a card the experiment never exercised gets none."""
    from analysis import brief

    nan = float("nan")
    bare = brief.strongest_lines(_strongest_rows(), [4])[0]
    emperor, tile, space = bare.removeprefix("4 players: ").split("); ")
    assert emperor.startswith("Emperor: place an Emperor tile: seats that play it win +47.8 pp")
    assert "an association, not the card's effect" in emperor and "an association, not the card's effect" in tile
    assert "an association, not the space's effect" in space
    given = pd.DataFrame([
        {"card": "emp_place", "change": 0.123, "lo": 0.115, "hi": 0.131, "p_holm": 1e-140, "exercised": True},
        {"card": "cent_any", "change": 0.232, "lo": 0.210, "hi": 0.254, "p_holm": 1e-100, "exercised": True},
        {"card": "arch_two_stones", "change": 0.01, "lo": -0.01, "hi": 0.03, "p_holm": 0.4, "exercised": True},
        {"card": "tile_flip_both", "change": nan, "lo": nan, "hi": nan, "p_holm": nan, "exercised": False}])
    cards = pd.DataFrame([
        {"n_players": 4, "card": "emp_place", "times": 196, "adj_diff": 0.576, "adj_lo": 0.5, "adj_hi": 0.65,
         "p_adj_holm": 1e-9},
        {"n_players": 4, "card": "cent_any", "times": 5_000, "adj_diff": 0.05, "adj_lo": 0.03, "adj_hi": 0.07,
         "p_adj_holm": 1e-4}])
    field = ["balanced", "greedy", "blocker", "cards"]
    experiment = {"given": given, "config": {"players": 4, "field": field}}
    # issue 50: with an experiment, the strongest cards are the experiment's, largest first; an
    # association is quoted beside one only from enough plays, and a card the experiment does not
    # find (or never exercised) is not among them
    line = brief.strongest_lines(_strongest_rows(), [4], experiment, {4: sorted(field)}, cards)[0]
    from analysis.labels import card_title

    centurion = card_title("cent_any")
    assert line.startswith(f"4 players: {centurion}: holding one more from the start changes the holder's win rate "
                           "by +23.2 pp (21.0 to 25.4) (experiment: evora card-value; p < 0.001); in the run's games "
                           "seats that play it win +5.0 pp (3.0 to 7.0) (p < 0.001; an association, from 5,000 plays)")
    assert ("Emperor: place an Emperor tile: holding one more from the start changes the holder's win rate by "
            "+12.3 pp (11.5 to 13.1) (experiment: evora card-value; p < 0.001); its association in the run's games "
            "is not quoted: 196 plays, fewer than 1,000") in line
    assert "+47.8" not in line and "+57.6" not in line and "flip both" not in line and card_title("arch_two_stones") not in line
    assert "Draw 2 (governor, emperor): seats that use it win" in line           # the space findings follow
    other = brief.strongest_lines(_strongest_rows(), [4], experiment, {4: ["balanced", "cards", "emperor", "greedy"]})
    assert "(experiment: evora card-value, with its own field: balanced, greedy, blocker, cards; p < 0.001)" in other[0]
    # an experiment at another player count is no figure for these games
    three = {**experiment, "config": {"players": 3, "field": ["balanced", "greedy", "cards"]}}
    assert brief.strongest_lines(_strongest_rows(), [4], three, {4: sorted(field)})[0] == bare
