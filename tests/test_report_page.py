"""The report as a reader gets it: rendered in a real browser (headless Chromium) at 1280 px
without sideways scrolling, every image loaded, no console error, a screenshot kept; names
holding HTML shown as text; an unrotated mixed field gets no seat finding, and says why."""
from __future__ import annotations

import os
import re

import pandas as pd
import pytest
from click.testing import CliRunner

import browser
from evora_sim.cli import main
from evora_sim.runner import simulate


def _report(runs, out, *extra):
    res = CliRunner().invoke(main, ["report", *map(str, runs), "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return (out / "report.html").read_text(encoding="utf-8"), (out / "report.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rotated(tmp_path_factory):
    base = tmp_path_factory.mktemp("page")
    return [simulate(3, 30, "balanced,cards,greedy(plan=action)", seed=7, out=base / "p3", chunk_size=15).out,
            simulate(4, 16, "balanced,cards,emperor,greedy", seed=8, out=base / "p4", chunk_size=8).out]


def test_the_report_renders_in_chromium_at_1280_px(rotated, tmp_path):
    if not browser.available():
        if os.environ.get("CI"):
            pytest.fail(f"{browser.CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{browser.CHROMIUM} is not installed (apt-get install chromium)")
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
    run = simulate(2, 8, spec, seed=2, out=tmp_path / "run", chunk_size=8, rules=rules)
    html, _ = _report([run.out], tmp_path / "rep")
    assert "evil=1" in html                                     # it is in the page ...
    assert "<script>evil" not in html and "&lt;script&gt;evil=1&lt;/script&gt;" in html   # ... as text
    assert html.count("<script") == 0


def test_an_unrotated_mixed_field_gets_no_seat_finding(tmp_path):
    run = simulate(4, 24, "cards,random,random,random", seed=5, out=tmp_path / "run", chunk_size=12,
                   seat_rotation=False)
    mirror = simulate(2, 12, "greedy(plan=action)", seed=5, out=tmp_path / "mirror", chunk_size=12)
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

    from analysis import names
    from evora_sim.rules import load_rules

    example = Path(__file__).resolve().parents[1] / "docs" / "examples" / "board.toml"
    readme = (example.parents[2] / "README.md").read_text(encoding="utf-8")
    assert "docs/examples/board.toml" in readme and "[[board.spaces]]" in readme
    rules = load_rules(example)
    assert len(rules.data["board"]["spaces"]) == 16 and not names.board_is_default(rules.data)
    res = CliRunner().invoke(main, ["replay", "-n", "2", "--seed", "3", "--strategies", "greedy(plan=action),random",
                                    "--rules", str(example)])
    assert res.exit_code == 0 and "Final scoring" in res.output
    run = simulate(2, 6, "greedy(plan=action),random", seed=1, out=tmp_path / "run", chunk_size=6, rules=rules)
    _, md = _report([run.out], tmp_path / "rep")
    assert "the one given by the rules" in md and "reconstruction (decision D1): the published" not in md
