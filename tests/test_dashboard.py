"""evora dashboard: a slice's figures are the report's for the same games (by two routes: the
report itself, and the report's statistics over the same games picked with pandas); the slice's
conditions pick the games they say; bad input is one line, exit 2, nothing written; and in a real
browser (headless Chromium driven by Playwright) the page loads without console errors, a filter
changes the figures, and the exported page shows the live page's numbers from a file."""
from __future__ import annotations

import html
import json
import re
import shutil
import socket
import subprocess
import time

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import browser
from analysis import dashboard_data as D
from analysis import display
from analysis import explain_stats as X
from analysis.dashboard_page import views_html
from analysis import tables as T
from cli_results import evora_command, ok, one_error_line
from evora_sim.cli import main
from evora_sim.runner import Execution, simulate
from evora_sim.sample_game import game_log


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    base = tmp_path_factory.mktemp("dash")
    return simulate(3, 30, "balanced,cards,greedy(plan=action)", seed=7, out=base / "p3",
                    execution=Execution(chunk_size=15)).out


@pytest.fixture(scope="module")
def source(run):
    return D.open_source([run])


@pytest.fixture(scope="module")
def rep(run, tmp_path_factory):
    """The report's own tables of ``run`` (its CSV files), made once."""
    out = tmp_path_factory.mktemp("rep") / "rep"
    res = CliRunner().invoke(main, ["report", str(run), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def run_b(run):
    """The same seeds as ``run`` under other rules (white stones worth 6): a pair to compare."""
    from evora_sim.rules import load_rules

    return simulate(3, 30, "balanced,cards,greedy(plan=action)", seed=7,
                    out=run.parent.parent / "white6" / "p3", rules=load_rules(None, ("white_stone.vp=6",)),
                    execution=Execution(chunk_size=15)).out


def _frame(run) -> pd.DataFrame:
    """The run's seat rows with their game's columns, read with pandas (not DuckDB)."""
    seats = pd.read_parquet(run / "seats")
    games = pd.read_parquet(run / "games")
    df = seats.merge(games[["game_id", "end_trigger", "decided_by", "rounds", "seed"]], on="game_id")
    return df.assign(n_players=3, cluster=df["game_id"] // 3, seat_rotation=True)


def _report_figures(df: pd.DataFrame):
    """The report's seat and strategy tables of the seat rows ``df`` (its statistics, built from a
    DataFrame by the report's own frame_stats)."""
    data = T.frame_stats(df)
    adv, tests = T.seat_advantage(data)
    return adv, tests, T.strategy_win_rates(data)


SEAT_COLUMNS = ["games", "wins", "win_rate", "ci_lo", "ci_hi", "p_holm", "mean_score", "mean_margin"]
TEST_COLUMNS = ["seeds", "unfairness", "unfairness_lo", "unfairness_hi", "p"]


def test_every_game_gives_the_reports_own_tables(run, source, rep):
    v = D.views(source, D.Slice())
    assert v.games == 90
    report = pd.read_csv(rep / "seat_advantage.csv")
    np.testing.assert_allclose(v.adv[SEAT_COLUMNS].to_numpy(float), report[SEAT_COLUMNS].to_numpy(float), rtol=1e-9)
    tests = pd.read_csv(rep / "seat_test.csv")
    np.testing.assert_allclose(v.tests[TEST_COLUMNS].to_numpy(float), tests[TEST_COLUMNS].to_numpy(float), rtol=1e-9)
    strat = pd.read_csv(rep / "strategy_win_rates.csv")
    np.testing.assert_allclose(v.strat[["wins", "win_rate", "ci_lo", "ci_hi"]].to_numpy(float),
                               strat[["wins", "win_rate", "ci_lo", "ci_hi"]].to_numpy(float), rtol=1e-9)


@pytest.mark.parametrize("sl, pick", [
    (D.Slice(end_trigger="temple_full"), lambda g: g["end_trigger"] == "temple_full"),
    (D.Slice(ranges=(("rounds", 10, 12),)), lambda g: g["rounds"].between(10, 12)),
])
def test_a_slice_gives_the_reports_statistics_over_its_games(run, source, sl, pick):
    df = _frame(run)
    keep = df[pick(df)]
    assert 0 < keep["game_id"].nunique() < 90            # a real slice, neither empty nor everything
    adv, tests, strat = _report_figures(keep)
    v = D.views(source, sl)
    assert v.games == keep["game_id"].nunique()
    np.testing.assert_allclose(v.adv[SEAT_COLUMNS].to_numpy(float), adv[SEAT_COLUMNS].to_numpy(float), rtol=1e-9)
    np.testing.assert_allclose(v.tests[TEST_COLUMNS].to_numpy(float), tests[TEST_COLUMNS].to_numpy(float), rtol=1e-9)
    np.testing.assert_allclose(v.strat[["wins", "ci_lo", "ci_hi"]].to_numpy(float),
                               strat[["wins", "ci_lo", "ci_hi"]].to_numpy(float), rtol=1e-9)


def _numbers(df: pd.DataFrame) -> np.ndarray:
    return df[[c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]].to_numpy(float)


@pytest.mark.parametrize("sl", [D.Slice(), D.Slice(end_trigger="temple_full"), D.Slice(winner="cards", last_round=False),
                                D.Slice(decided_by="vp", players=3), D.Slice(end_trigger="round_limit")])
def test_statistics_kept_per_kind_of_game_merge_to_the_slices_own(run, sl, tmp_path, monkeypatch):
    """A filter on how games went merges the statistics gathered per kind of game (Cells): the
    same figures as the report's pass over the slice's games, also when a later start takes
    them from the tool's cache folder instead of gathering them."""
    monkeypatch.setattr(D, "NUMBA_CACHE", str(tmp_path / "cache" / "numba"))
    folded = D.views(D.open_source([run]), sl)
    kept = D.open_source([run])
    D.build_cells(kept)
    again = D.open_source([run])
    assert D.kept_cells(again)
    for merged in (D.views(kept, sl), D.views(again, sl)):
        assert kept.variants[0].cells is not None and merged.games == folded.games
        for name in ("adv", "tests", "strat", "shape", "triggers", "margin", "tension", "majorities", "columns",
                     "share", "vp"):
            a, b = getattr(merged, name), getattr(folded, name)
            assert list(a.columns) == list(b.columns) and len(a) == len(b), name
            np.testing.assert_allclose(_numbers(a), _numbers(b), rtol=1e-9, equal_nan=True, err_msg=name)


def test_the_statistics_are_kept_outside_the_run_and_for_its_files_only(run, tmp_path, monkeypatch):
    """Kept in the tool's cache folder (the run folder, maybe someone else's, is left as it was);
    a chunk written again is a new file: its statistics are gathered again, not taken."""
    monkeypatch.setattr(D, "NUMBA_CACHE", str(tmp_path / "cache" / "numba"))
    copy = tmp_path / "runs" / "p3"
    shutil.copytree(run, copy)
    before = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
    D.build_cells(D.open_source([copy]))
    assert {p: p.stat().st_mtime_ns for p in copy.rglob("*")} == before
    assert [p.parent.name for p in (tmp_path / "cache").rglob("cells-*")] == ["dashboard"]
    assert D.kept_cells(D.open_source([copy]))
    chunk = next((copy / "seats").iterdir())
    chunk.write_bytes(chunk.read_bytes())                       # the same bytes, written again
    assert not D.kept_cells(D.open_source([copy]))


def test_each_condition_picks_the_games_it_says(run, source):
    df = _frame(run)
    games = df.drop_duplicates("game_id").set_index("game_id")

    def ids(sl):
        return set(np.flatnonzero(D.matching(source, sl)[0]).tolist())

    def where(mask):
        return set(mask[mask].index.tolist())

    at = df[(df["strategy"] == "cards") & (df["seat"] == 2)]["game_id"]
    assert ids(D.Slice(strategy="cards", seat=2)) == set(at.tolist()) and at.nunique() == 30
    won = df[(df["strategy"] == "balanced") & df["win"]]["game_id"]
    assert ids(D.Slice(winner="balanced")) == set(won.tolist())
    assert ids(D.Slice(decided_by="vp")) == where(games["decided_by"] == "vp")
    both = D.Slice(winner="balanced", end_trigger="temple_full")
    assert ids(both) == set(won.tolist()) & where(games["end_trigger"] == "temple_full")
    last = pd.read_parquet(run / "games").set_index("game_id")["decided_last_round"]
    assert ids(D.Slice(last_round=True)) == where(last)
    trig = pd.read_parquet(run / "games").set_index("game_id")["trigger_turn"] // 3 + 1
    assert ids(D.Slice(ranges=(("trigger_round", 11, 12),))) == where(trig.between(11, 12))
    # the matching games' table: seeds and a replay command that names the game's seat order
    t = D.views(source, D.Slice(winner="balanced")).table
    assert len(t) == min(len(won), D.GAMES_SHOWN)
    row = t.iloc[0]
    order = df[df["game_id"] == row["game_id"]].sort_values("seat")["strategy"].tolist()
    assert row["strategies"] == ",".join(order) and row["seed"] == games.loc[row["game_id"], "seed"]
    assert row["replay"] == f"evora replay -n 3 --seed {row['seed']} --strategies '{','.join(order)}'"


def test_associations_are_the_reports_and_labelled_as_associations(run, source, rep):
    from analysis.dashboard_page import page

    v = D.views(source, D.Slice(), associations=True)
    cards = pd.read_csv(rep / "card_value.csv")
    np.testing.assert_allclose(v.cards["times"].to_numpy(float), cards["times"].to_numpy(float))
    np.testing.assert_allclose(v.cards["win_used"].to_numpy(float), cards["win_used"].to_numpy(float), equal_nan=True)
    html = page(v, "t")
    assert "an association, not the card" in html and "<script" not in html


def test_compare_is_evora_compares_own_table(run, run_b):
    res = CliRunner().invoke(main, ["compare", str(run), str(run_b)])
    assert res.exit_code == 0, res.output
    source = D.open_source([run, run_b])
    a, b = (v.label for v in source.variants)
    c = D.views(source, D.Slice(variant=a), compare_with=b).compare
    assert c.lines[3] == res.output.rstrip("\n").split("\n")
    assert c.tables[3][1]["paired"] and "white_stone.vp: 2 -> 6" in res.output
    # the pairing is over every game of the player count, whatever the other filters
    other = D.views(source, D.Slice(variant=a, end_trigger="temple_full"), compare_with=b).compare
    assert other.lines == c.lines
    with pytest.raises(D.RunError, match="with itself"):
        D.compare(source, a, a)


def test_rungs_sweep_points_and_arms_are_groups_of_their_own(run, tmp_path):
    """A skill folder's rungs, a sweep's points, an explain folder's arms (run folders below a
    folder, at any depth it writes them) are each a group; a folder's player counts are one."""
    top = tmp_path / "study"
    for where in ("r1", "r2", "why/r1/arms/end.tie_break=shared", "sweep/a/p3"):
        _copy(run, top.parent, f"study/{where}")
    (top / "linked").symlink_to(run, target_is_directory=True)       # a link is not followed
    source = D.open_source([top])
    assert [v.label for v in source.variants] == ["study/r1", "study/r2", "study/sweep/a",
                                                  "study/why/r1/arms/end.tie_break=shared"]
    whole = D.views(D.open_source([run]), D.Slice())
    for label in ("study/r2", "study/sweep/a"):
        v = D.views(source, D.Slice(variant=label))
        assert v.games == whole.games
        np.testing.assert_allclose(v.adv[SEAT_COLUMNS].to_numpy(float), whole.adv[SEAT_COLUMNS].to_numpy(float))


def test_majorities_and_the_decomposition_are_the_reports(run, source, rep):
    v = D.views(source, D.Slice(), decomposition=True)
    for name, got in (("majority_outcomes", v.majorities), ("majority_share", v.share),
                      ("columns_held", v.columns), ("vp_by_category", v.vp), ("why_decomposition", v.why[3][0])):
        want = pd.read_csv(rep / f"{name}.csv")
        numeric = [c for c in got.columns if c in want and pd.api.types.is_numeric_dtype(got[c])]
        assert len(got) == len(want) and numeric, name
        np.testing.assert_allclose(got[numeric].to_numpy(float), want[numeric].to_numpy(float), rtol=1e-9,
                                   equal_nan=True, err_msg=name)
    # a slice's decomposition is over its games: the parts of every seat add up to its deviation
    temple = D.views(source, D.Slice(end_trigger="temple_full"), decomposition=True).why[3][0]
    assert not temple.equals(v.why[3][0])


@pytest.fixture(scope="module")
def explained(run):
    """``evora explain`` of ``run`` (10 seeds, no compensation, no confirmation: seconds), into a
    folder whose name holds markup; with what the command printed."""
    out = run.parent.parent / "why <b>&amp;"
    res = CliRunner().invoke(main, ["explain", str(run), "--seeds", "10", "--no-compensation", "--confirm-seeds", "0",
                                    "--jobs", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out, res.output


def _cells(fragment: str, key: str) -> list[list[str]]:
    """The text of each body row of the table ``id=key`` of a page fragment."""
    table = fragment.split(f"<div id='{key}'>", 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    return [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)]


def test_the_fixes_evora_explain_ranked_are_its_own_table_shown_escaped(run, explained, tmp_path):
    folder, printed = explained
    v = D.views(D.open_source([run, folder]), D.Slice(), decomposition=True)
    assert [name for name, _ in v.fixes] == [str(folder)]
    fixes = v.fixes[0][1]
    pd.testing.assert_frame_equal(fixes, pd.read_csv(folder / "summary" / "fixes.csv"))
    # ranked as evora explain printed them, the run's rules among them
    ranked = printed.split("Fixes ranked")[1].split("\n")[1:len(fixes) + 1]
    assert [line.split(". ", 1)[1].rsplit(": ", 1)[0] for line in ranked] == list(fixes["arm"])
    assert list(fixes["rank"]) == list(range(1, len(fixes) + 1)) and "the run's rules" in list(fixes["arm"])
    # the page shows that table, row for row, and the folder's name as text
    fragment = views_html(v)
    want = X.shown_fixes(fixes)
    assert _cells(fragment, "fixes-0") == [[str(x) for x in row] for row in want.itertuples(index=False)]
    assert f"({html.escape(str(folder))})" in fragment and "<b>" not in fragment
    # a fixes table from someone else's folder holding markup is shown as text, not run
    hostile = tmp_path / "why"
    shutil.copytree(folder, hostile)
    table = pd.read_csv(hostile / "summary" / "fixes.csv")
    table.loc[1, "arm"] = "<img src=x onerror=alert(1)>"
    table.to_csv(hostile / "summary" / "fixes.csv", index=False)
    fragment = views_html(D.views(D.open_source([hostile]), D.Slice(), decomposition=True))
    assert _cells(fragment, "fixes-0")[1][1] == "<img src=x onerror=alert(1)>"
    assert "&lt;img src=x onerror=alert(1)&gt;" in fragment and "<img src=x" not in fragment


def test_a_games_replay_log_is_evora_replays(run, source):
    t = D.views(source, D.Slice(winner="cards")).table
    row = t.iloc[0]
    text = D.replay_text(source, int(row["run_no"]), int(row["game_id"]), game_log)
    argv = __import__("shlex").split(row["replay"])[1:]
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 0, res.output
    assert text == f"$ {row['replay']}\n\n" + res.output
    with pytest.raises(D.RunError, match="no game 999999"):
        D.replay_text(source, 0, 999999, game_log)


def test_a_custom_python_player_is_never_loaded_for_a_replay(run, tmp_path):
    """A folder from someone else may record a custom Python strategy: its game is not replayed
    (no code from a folder is run); the page says so instead."""
    moved = _copy(run, tmp_path, "custom")
    man = json.loads((moved / "manifest.json").read_text())
    man["config"]["resolved_strategies"]["cards"] = {"kind": "custom", "file": "/tmp/evil.py", "sha256": "0" * 64}
    (moved / "manifest.json").write_text(json.dumps(man))
    source = D.open_source([moved])
    with pytest.raises(D.RunError, match="cannot be replayed"):
        D.replay_text(source, 0, 0, game_log)


def _snapshot(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*"))


def _copy(run, tmp_path, name="copy"):
    dst = tmp_path / name
    shutil.copytree(run, dst)
    return dst


def test_bad_input_is_one_line_and_nothing_is_written(run, tmp_path):
    cli = CliRunner()
    export = tmp_path / "out.html"
    empty = tmp_path / "empty"
    empty.mkdir()
    line = one_error_line(cli.invoke(main, ["dashboard", str(empty), "--export", str(export)]))
    assert str(empty) in line
    # a damaged chunk: a byte changed in a seats file
    bad = _copy(run, tmp_path, "damaged")
    f = sorted((bad / "seats").glob("*.parquet"))[0]
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))
    before = _snapshot(bad)
    line = one_error_line(cli.invoke(main, ["dashboard", str(bad), "--export", str(export)]))
    assert "damaged" in line and "chunk 0" in line
    assert _snapshot(bad) == before and not export.exists()
    # a run of an older version: version-1 manifest, games tables without decided_by
    old = _copy(run, tmp_path, "old")
    man = json.loads((old / "manifest.json").read_text())
    man["version"] = 1
    man.pop("chunk_files", None)
    (old / "manifest.json").write_text(json.dumps(man))
    for g in (old / "games").glob("*.parquet"):
        t = pq.read_table(g)
        pq.write_table(t.drop_columns(["decided_by"]), g)
    line = one_error_line(cli.invoke(main, ["dashboard", str(old), "--export", str(export)]))
    assert "older version" in line and "decided_by" in line and not export.exists()
    # a port another program holds
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        line = one_error_line(cli.invoke(main, ["dashboard", str(run), "--port", str(port), "--no-browser"]))
    assert f"--port {port}" in line
    # an export over a file the dashboard did not write; a value the runs do not hold
    mine = tmp_path / "notes.html"
    mine.write_text("<p>mine</p>")
    assert "not written by evora dashboard" in one_error_line(
        cli.invoke(main, ["dashboard", str(run), "--export", str(mine)]))
    assert mine.read_text() == "<p>mine</p>"
    assert "--end nowhere" in one_error_line(cli.invoke(main, ["dashboard", str(run), "--end", "nowhere",
                                                               "--export", str(export)]))
    assert "--range" in one_error_line(cli.invoke(main, ["dashboard", str(run), "--range", "score=1:2",
                                                         "--export", str(export)]))
    assert "--compare" in one_error_line(cli.invoke(main, ["dashboard", str(run), "--compare", "--export", str(export)]))
    assert "same runs" in one_error_line(cli.invoke(main, ["dashboard", str(run), str(run), "--compare",
                                                           "--export", str(export)]))
    assert not export.exists()
    # and a good export, replaced by the next one
    assert "exported" in ok(cli.invoke(main, ["dashboard", str(run), "--export", str(export)]))
    assert "exported" in ok(cli.invoke(main, ["dashboard", str(run), "--players", "3", "--export", str(export)]))


def test_another_host_than_this_machine_is_warned_about(run, monkeypatch):
    from evora_sim.cli import dashboard_work as cmd

    served = []
    monkeypatch.setattr(cmd, "serve_dashboard", lambda *a: served.append(a))
    port = str(_free_port())
    res = CliRunner().invoke(main, ["dashboard", str(run), "--host", "0.0.0.0", "--port", port, "--no-browser"])
    assert res.exit_code == 0 and served
    assert "evora: warning: --host 0.0.0.0" in res.stderr
    res = CliRunner().invoke(main, ["dashboard", str(run), "--port", port, "--no-browser"])
    assert res.exit_code == 0 and "warning" not in res.stderr and served[-1][3] == "127.0.0.1"


# ---------------------------------------------------------------------------------------------
# in a real browser
# ---------------------------------------------------------------------------------------------
def _playwright():
    browser.need_chromium()
    return pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _win_rates(page) -> list[str]:
    """The 'Win rate (95% range)' cells of the seats table shown."""
    return page.locator("#seats table tbody tr td:nth-child(4)").all_inner_texts()


def test_the_page_in_chromium_filters_compares_replays_and_exports_the_reports_numbers(run, run_b, tmp_path):
    sync = _playwright()
    port = _free_port()
    proc = subprocess.Popen([*evora_command(), "dashboard", str(run), str(run_b), "--compare", "--port", str(port),
                             "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    try:
        # the limits below only stop a hang: a slow shared machine may take minutes, never fails for it
        deadline = time.time() + 300
        line = ""
        while "dashboard: http" not in line and time.time() < deadline and proc.poll() is None:
            line = proc.stdout.readline()
        assert "dashboard: http" in line, line
        df = _frame(run)
        every = display.seats(_report_figures(df)[0])["Win rate (95% range)"].tolist()
        temple = display.seats(_report_figures(df[df["end_trigger"] == "temple_full"])[0])["Win rate (95% range)"]
        with sync.sync_playwright() as p:
            b = p.chromium.launch(executable_path=browser.CHROMIUM, args=["--no-sandbox"])
            try:
                page = b.new_page()
                errors = []
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(f"http://127.0.0.1:{port}/", timeout=180_000)
                page.locator("#game-count", has_text="90").wait_for(timeout=180_000)
                assert _win_rates(page) == every
                # the compare view: evora compare's own lines for the two runs
                source = D.open_source([run, run_b])
                want = D.compare(source, *(v.label for v in source.variants)).lines[3]
                assert page.locator("#compare-3").inner_text().split("\n") == want
                # a game's log, a click away: the served text is evora replay's for its seed
                link = page.locator("#games a.replay").first
                game = int(link.get_attribute("href").rpartition("game=")[2])
                with page.context.expect_page() as opened:
                    link.click()
                log = opened.value
                log.wait_for_load_state(timeout=180_000)
                assert log.locator("body").inner_text().rstrip() == D.replay_text(source, 0, game, game_log).rstrip()
                log.close()
                page.locator("#seat-figure").wait_for(timeout=180_000)       # the figure follows the numbers
                page.locator(".f-end select").select_option("temple_full")
                count = str(df[df["end_trigger"] == "temple_full"]["game_id"].nunique())
                page.locator("#game-count", has_text=count).wait_for(timeout=180_000)
                shown = _win_rates(page)
                assert shown == temple.tolist() and shown != every
                assert errors == []
                # the export of the same slice, opened from a file
                export = tmp_path / "temple.html"
                ok(CliRunner().invoke(main, ["dashboard", str(run), str(run_b), "--compare", "--end", "temple_full",
                                             "--export", str(export)]))
                page.goto(export.as_uri())
                assert page.locator("#game-count").inner_text() == count
                assert _win_rates(page) == shown
                assert page.locator("#compare-3").inner_text().split("\n") == want
                assert errors == []
            finally:
                b.close()
    finally:
        proc.terminate()
        proc.wait(timeout=120)
