"""Issue 43: a folder someone hands the user is untrusted input. The files the tool itself writes
and reads back (output markers, lock files, manifests, chunk files, ladder.json) may say anything;
`evora report`, resume, `compact` and `skill` must never delete, overwrite or run anything outside
the folder because of what they say. Each test is named after the issue's item it covers
(test_i43_NN_...) and goes through the command line as a user would."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evora_sim.cli import main
from evora_sim.fsutil import MARKER, MARKER_FORMAT
from evora_sim.manifest import MANIFEST, chunk_file
from evora_sim.runner import Execution, simulate
from cli_results import ok, one_error_line
from test_data_safety import cli, files_in  # noqa: F401  (cli: the fixture)

RUN = dict(players=2, games=12, strategies="greedy(plan=action),random", seed=5, seat_rotation=False)
HOW = Execution(chunk_size=4, jobs=1)


def sim_args(out, **kw):
    cfg = {**RUN, "chunk_size": HOW.chunk_size, **kw}
    return ["simulate", "-n", str(cfg["players"]), "--seeds", str(cfg["games"]), "--strategies", cfg["strategies"],
            "--seed", str(cfg["seed"]), "--chunk-size", str(cfg["chunk_size"]), "--jobs", "1", "--out", str(out),
            "-q", "--no-seat-rotation"]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A finished run of three chunks, played once; each test changes a copy (``run``)."""
    folder = tmp_path_factory.mktemp("untrusted") / "run"
    simulate(**RUN, out=folder, execution=HOW)
    return folder


@pytest.fixture
def run(made, tmp_path) -> Path:
    return Path(shutil.copytree(made, tmp_path / "run", symlinks=True))


def write_marker(folder: Path, files, kind="report") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text(json.dumps({"format": MARKER_FORMAT, "kind": kind, "files": files}))


# ---------------------------------------------------------------------------------------------
# 1. a crafted output marker deletes nothing outside --out
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("listed", ["../../../precious/thesis.tex", "ABS", "../thesis.tex", "sub/report.md"])
def test_i43_01_marker_cannot_delete_outside_the_report_folder(run, tmp_path, cli, listed):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    (tmp_path / "deep" / "thesis.tex").parent.mkdir()
    (tmp_path / "deep" / "thesis.tex").write_text("more work")
    out = tmp_path / "deep" / "er" / "rep"
    names = [str(precious / "thesis.tex") if listed == "ABS" else listed]
    write_marker(out, names)
    if listed.startswith("sub/"):
        (out / "sub").mkdir()
        (out / "sub" / "report.md").write_text("mine")
    before = files_in(tmp_path / "precious"), files_in(tmp_path / "deep")
    line = one_error_line(cli.invoke(main, ["report", str(run), "--out", str(out)]))
    assert "nothing is deleted" in line
    assert (files_in(tmp_path / "precious"), files_in(tmp_path / "deep")) == before


def test_i43_01_marker_names_are_only_plain_files_the_tool_writes():
    from evora_sim.fsutil import own_name

    for good in ("report.html", "seat_advantage.csv", "sample_game.txt", "strategy.toml", "sweep.svg"):
        assert own_name(good)
    for bad in ("../x.csv", "/etc/passwd", "a/b.csv", ".hidden.csv", "..csv", "notes.tex", "", "x.csv/",
                "x\\y.csv", 3, None):
        assert not own_name(bad), bad


# ---------------------------------------------------------------------------------------------
# 2. the lock file never follows a link
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("link", [os.symlink, os.link])
@pytest.mark.parametrize("command", [lambda run: sim_args(run), lambda run: ["compact", str(run)]])
def test_i43_02_lock_file_link_never_overwrites_its_target(run, tmp_path, cli, link, command):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a PID")
    (run / ".evora-lock").unlink()
    link(notes, run / ".evora-lock")
    line = one_error_line(cli.invoke(main, command(run)))
    assert ".evora-lock" in line and "link" in line
    assert notes.read_text() == "my notes, not a PID"


# ---------------------------------------------------------------------------------------------
# 3. compare --out overwrites only what compare wrote
# ---------------------------------------------------------------------------------------------
def test_i43_03_compare_out_file_never_overwrites_the_users_files(run, tmp_path, cli):
    mine = tmp_path / "X.csv"
    mine.write_text("name,score\nme,1\n")
    (tmp_path / "X.png").write_bytes(b"my picture")
    before = files_in(tmp_path / "run"), mine.read_bytes()
    line = one_error_line(cli.invoke(main, ["compare", str(run), str(run), "--out", str(mine)]))
    assert "X.csv" in line and "nothing is overwritten" in line
    assert (tmp_path / "X.png").read_bytes() == b"my picture" and mine.read_bytes() == before[1]
    mine.unlink()
    line = one_error_line(cli.invoke(main, ["compare", str(run), str(run), "--out", str(mine)]))
    assert "X.png" in line and (tmp_path / "X.png").read_bytes() == b"my picture"
    (tmp_path / "X.png").unlink()
    ok(cli.invoke(main, ["compare", str(run), str(run), "--out", str(mine)]))
    ok(cli.invoke(main, ["compare", str(run), str(run), "--out", str(mine)]))     # its own: replaced
    assert "p_holm" in mine.read_text() and (tmp_path / "X.png").read_bytes()[:4] == b"\x89PNG"


def test_i43_03_compare_out_folder_follows_the_report_folder_rule(run, tmp_path, cli):
    folder = tmp_path / "somewhere"
    folder.mkdir()
    (folder / "compare.csv").write_text("my own table")
    (folder / "compare.png").write_bytes(b"my own figure")
    before = files_in(folder)
    line = one_error_line(cli.invoke(main, ["compare", str(run), str(run), "--out", str(folder)]))
    assert "nothing is deleted" in line and files_in(folder) == before
    out = tmp_path / "cmp"
    ok(cli.invoke(main, ["compare", str(run), str(run), "--out", str(out)]))
    ok(cli.invoke(main, ["compare", str(run), str(run), "--out", str(out)]))      # its own: replaced
    assert sorted(os.listdir(out)) == [MARKER, "compare.csv", "compare.png", "compare.txt"]


# ---------------------------------------------------------------------------------------------
# 4. reporting a folder never runs code named by it
# ---------------------------------------------------------------------------------------------
def sentinel_bot(folder: Path, sentinel: Path) -> Path:
    """A custom strategy whose file, once run, leaves ``sentinel`` behind."""
    path = folder / "bot.py"
    path.write_text(f"open({str(sentinel)!r}, 'a').write('ran\\n')\n\nclass Bot:\n"
                    "    def choose(self, state, legal_actions, rng):\n        return legal_actions[0]\n")
    return path


def test_i43_04_report_never_imports_the_strategy_file_a_manifest_names(tmp_path, cli):
    sentinel = tmp_path / "it-ran"
    bot = sentinel_bot(tmp_path, sentinel)
    out = tmp_path / "run"
    ok(cli.invoke(main, ["simulate", "-n", "2", "--seeds", "2", "--strategies", f"{bot}:Bot,random", "--jobs", "1",
                         "--out", str(out), "-q"]))
    assert sentinel.exists()                 # named on the command line: it runs
    sentinel.unlink()
    ok(cli.invoke(main, ["report", str(out), "--out", str(tmp_path / "rep")]))
    assert not sentinel.exists()
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "No sample game" in text and "custom Python code" in text and "never from a run folder" in text


# ---------------------------------------------------------------------------------------------
# 8. a chunk is checked against its identity, not only its checksum
# ---------------------------------------------------------------------------------------------
def swap_in_chunk0(run: Path) -> None:
    """Chunk 1's files replaced by chunk 0's, and the manifest's checksums rewritten to match."""
    from evora_sim.manifest import file_record

    m = json.loads((run / MANIFEST).read_text())
    for t in ("games", "seats", "cards", "spaces"):
        data = chunk_file(run, t, 0).read_bytes()
        chunk_file(run, t, 1).write_bytes(data)
        m["chunk_files"]["1"][t] = file_record(data)
    (run / MANIFEST).write_text(json.dumps(m))


def test_i43_08_resume_replays_a_chunk_holding_another_chunks_games(run, made, cli):
    swap_in_chunk0(run)
    result = cli.invoke(main, sim_args(run))
    assert result.exit_code == 0, result.output
    assert "chunk 1 is damaged" in result.stderr and "outside its range" in result.stderr
    for t in ("games", "seats", "cards", "spaces"):
        assert chunk_file(run, t, 1).read_bytes() == chunk_file(made, t, 1).read_bytes()
    ok(cli.invoke(main, ["compare", str(run), str(made)]))


def test_i43_08_compact_never_packs_a_chunk_holding_another_chunks_games(run, cli):
    swap_in_chunk0(run)
    result = cli.invoke(main, ["compact", str(run)])
    assert result.exit_code == 0 and "chunk 1 left in its own files" in result.stderr
    assert "1" not in {str(k) for p in json.loads((run / MANIFEST).read_text())["parts"].values() for k in p["chunks"]}


def test_i43_08_report_refuses_a_manifest_whose_seed_was_edited(run, tmp_path, cli):
    m = json.loads((run / MANIFEST).read_text())
    m["config"]["seed"] += 1
    (run / MANIFEST).write_text(json.dumps(m))
    line = one_error_line(cli.invoke(main, ["report", str(run), "--out", str(tmp_path / "rep")]))
    assert f"other seeds than run seed {m['config']['seed']}" in line
    assert not (tmp_path / "rep").exists()



# ---------------------------------------------------------------------------------------------
# 9. whole numbers: ASCII digits, and not thousands of them
# ---------------------------------------------------------------------------------------------
HUGE = "9" * 5000


@pytest.mark.parametrize("args", [
    ["rules", "--set", f"white_stone.vp={HUGE}"],
    ["rules", "--set", "white_stone.vp=\u0663"],                 # Arabic-Indic 3
    ["rules", "--set", "white_stone.vp=\uff13"],                 # fullwidth 3
    ["rules", "--set", "players.start_vp=\u0663,0"],
    ["rules", "--set", f"board.spaces.{HUGE}.action=draw2"],
    ["replay", "-n", "2", "--seed", "1", "--strategies", "mcts(iterations=\u0661\u0660)"],
    ["replay", "-n", "2", "--seed", "1", "--strategies", "greedy(column=\u0661)"],
    ["sweep", "-n", "2", "--games", "4", "--strategies", "random", "--param", f"white_stone.vp={HUGE},2",
     "--out", "OUT"],
    ["balance", "--players", "2", "--param", f"white_stone.vp=1..{HUGE}", "--budget", "1000", "--out", "OUT"],
])
def test_i43_09_huge_and_unicode_digits_are_one_line(tmp_path, cli, args):
    args = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    line = one_error_line(cli.invoke(main, args))
    assert len(line) < 700
    assert not (tmp_path / "out").exists()


def test_i43_09_whole_number_reader():
    from evora_sim.wholenumber import whole_number

    assert whole_number(" -12 ") == -12 and whole_number("+7") == 7
    for bad in ("\u0663", "\uff13", "9" * 19, "1.0", "", "1e3", "0x10", None):
        with pytest.raises(ValueError):
            whole_number(bad)


# ---------------------------------------------------------------------------------------------
# 5, 11. ladder.json is validated whole: on resume and by the report
# ---------------------------------------------------------------------------------------------
LADDER = "random;greedy(plan=action)"


def skill_args(out, report_dir):
    return ["skill", "-n", "2", "--ladder", LADDER, "--games", "6", "--duel-games", "6", "--jobs", "1", "-q",
            "--out", str(out), "--report-dir", str(report_dir)]


@pytest.fixture(scope="module")
def ladder_made(tmp_path_factory) -> Path:
    """A small finished ladder (two rungs, one duel), played once; tests edit a copy."""
    base = tmp_path_factory.mktemp("ladder")
    ok(CliRunner().invoke(main, skill_args(base / "sk", base / "rep")))
    return base / "sk"


@pytest.fixture
def ladder(ladder_made, tmp_path) -> Path:
    return Path(shutil.copytree(ladder_made, tmp_path / "work" / "sk", symlinks=True))


def edit_plan(folder: Path, change) -> None:
    doc = json.loads((folder / "ladder.json").read_text())
    change(doc)
    (folder / "ladder.json").write_text(json.dumps(doc))


def _duel(key, value):
    return lambda d: d["duels"][0].__setitem__(key, value)


LADDER_EDITS = {
    "duel folder ../escape": (_duel("folder", "../../escape"), "folder"),
    "duel folder absolute": (_duel("folder", "ABS"), "folder"),
    "field names a file": (_duel("field", ["EVIL", "random"]), "duels"),
    "rung renamed": (lambda d: d.__setitem__("rungs", ["random", "greedy"]), "greedy"),
    "rungs swapped": (lambda d: d.__setitem__("rungs", ["greedy(plan=action)", "random"]), "rung"),
    # item 11: three tracebacks before
    "a string for a number": (lambda d: d.__setitem__("seeds", "6"), "seeds"),
    "a one-member field": (_duel("field", ["random"]), "field"),
    "duel index out of range": (_duel("a", 7), "rung indexes"),
    "duel seeds changed": (_duel("seeds", 5), "duel"),
    "seeds out of range": (lambda d: d.__setitem__("seeds", 10**12), "seeds"),
}


@pytest.mark.parametrize("case", sorted(LADDER_EDITS))
def test_i43_05_11_an_edited_ladder_plan_is_refused_by_skill_and_report(ladder, tmp_path, cli, case):
    change, named = LADDER_EDITS[case]
    sentinel = tmp_path / "it-ran"
    evil = sentinel_bot(tmp_path, sentinel)

    def fill(v):
        return {"ABS": str(tmp_path / "escape"), "EVIL": f"{evil}:Bot"}.get(v, v) if isinstance(v, str) else v

    edit_plan(ladder, lambda d: (change(d), d["duels"][0].update({k: fill(v) if not isinstance(v, list)
                                                                     else [fill(x) for x in v]
                                                                     for k, v in d["duels"][0].items()})))
    outside = files_in(tmp_path / "work")
    for args in (skill_args(ladder, tmp_path / "rep1"), ["report", str(ladder), "--out", str(tmp_path / "rep2")]):
        line = one_error_line(cli.invoke(main, args))
        assert named in line, line
    assert not (tmp_path / "escape").exists() and not (tmp_path / "work" / "escape").exists()
    assert not sentinel.exists()
    assert files_in(tmp_path / "work") == outside
    assert not (tmp_path / "rep1").exists() and not (tmp_path / "rep2").exists()


def test_i43_05_names_strategy_decides_without_running_code(tmp_path, monkeypatch):
    from strategies.registry import names_strategy

    sentinel = tmp_path / "it-ran"
    bot = sentinel_bot(tmp_path, sentinel)
    monkeypatch.chdir(tmp_path)
    assert names_strategy("bot.py:Bot", f"{bot}:Bot") and names_strategy(f"{bot}:Bot", f"{bot}:Bot")
    assert not names_strategy("other.py:Bot", f"{bot}:Bot") and not names_strategy("bot.py:Other", f"{bot}:Bot")
    assert not names_strategy(f"{bot}:Bot", "/elsewhere/bot.py:Bot")
    assert names_strategy("Greedy(plan=action)", "greedy(plan=action)") and not names_strategy("greedy", "random")
    assert names_strategy("mcts(iterations=10)", "mcts(iterations=10, c=0.7, rollout=cardheights, reward=margin, "
                          "horizon=auto, leaf=eval, finish=rollout, reuse=turn, root=turn, candidates=8, depth=0, "
                          "others=tree)")
    assert not sentinel.exists()


# ---------------------------------------------------------------------------------------------
# 6. report.md carries no raw HTML from the runs
# ---------------------------------------------------------------------------------------------
def test_i43_06_report_md_escapes_html_in_strategy_names(tmp_path, cli):
    folder = tmp_path / "<img src=x onerror=alert`1`>"
    folder.mkdir()
    (folder / "w.toml").write_text('[A]\nbase = "greedy"\nplan = "action"\n')
    spec = f"{folder / 'w.toml'}:A"
    ok(cli.invoke(main, ["simulate", "-n", "2", "--seeds", "3", "--strategies", f"{spec},random", "--jobs", "1",
                         "--out", str(tmp_path / "run"), "-q"]))
    ok(cli.invoke(main, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep")]))
    html = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert`1`&gt;" in html
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    prose = re.sub(r"(?ms)^(`{3,})json$.*?^\1$", "", md)               # code blocks show text as it is
    prose = re.sub(r"(`+) .*? \1", "", prose)                          # and so do code spans
    assert "<img src=x" not in prose and "&lt;img src=x onerror=alert`1`&gt;" in prose


def test_i43_06_markdown_helpers_never_let_markup_through():
    from analysis.page import md, md_code

    assert md("<script>x</script> & [a](javascript:y)\n# h") == \
        "&lt;script&gt;x&lt;/script&gt; &amp; [a]\\(javascript:y) # h"
    assert md_code("a ` b `` c") == "``` a ` b `` c ```"


# ---------------------------------------------------------------------------------------------
# 7. weights are bounded where parsed; the compiled driver refuses an illegal action
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["balanced(column=1e308)", "balanced(column=-1e308)", "greedy(vp=1e7)",
                                  "TOML:1e308", "TOML:-1e308"])
def test_i43_07_a_huge_weight_is_refused_naming_the_range(tmp_path, cli, spec):
    if spec.startswith("TOML:"):
        (tmp_path / "w.toml").write_text(f'[big]\nbase = "balanced"\nweights = {{ column = {spec[5:]} }}\n')
        spec = f"{tmp_path / 'w.toml'}:big"
    for args in (["simulate", "-n", "2", "--games", "10", "--strategies", f"{spec},random", "--jobs", "1",
                  "--out", str(tmp_path / "run"), "-q"],
                 ["replay", "-n", "2", "--seed", "1", "--strategies", f"{spec},random"]):
        line = one_error_line(cli.invoke(main, args))
        assert "out of range" in line and "-1,000,000 to 1,000,000" in line
    assert not (tmp_path / "run").exists()


def _nan_planner():
    """A turn planner whose weights (past the parser's bounds) value every position NaN: it returns -1.

    Built directly, as no parser would let such weights through; a planner that finds no line it
    prefers is the one way a compiled player can choose an illegal action.
    """
    from strategies.builtin import BUILTINS, NAMES, Strategy
    from strategies.compiled import KIND_PLANNER

    weights = [float("nan")] * len(BUILTINS[NAMES.index("balanced")].weights)
    return Strategy("nan-planner", KIND_PLANNER, tuple(weights))


def test_i43_07_the_compiled_driver_refuses_an_illegal_action_loudly(tmp_path, monkeypatch):
    import numpy as np

    from evora_sim.batch import play_batch, play_game
    from evora_sim.rules import load_rules
    from strategies import registry
    from strategies.errors import StrategyError

    rules = load_rules()
    seeds = np.array([1], dtype=np.int64)
    # a strategy object with NaN weights is refused before play (issue 51) ...
    with pytest.raises(StrategyError, match="'nan-planner': weight vp=nan is not a finite number"):
        play_batch(rules, 2, seeds, [_nan_planner(), "random"])
    # ... and were one to get past that check, the driver itself still refuses its illegal action
    monkeypatch.setattr(registry, "checked_strategy", lambda strategy: strategy)
    with pytest.raises(StrategyError, match=r"'nan-planner' \(seat 0\) chose action -1, which is not legal, "
                                            r"at decision \d+ of the game with seed 1"):
        play_batch(rules, 2, seeds, [_nan_planner(), "random"])
    with pytest.raises(StrategyError, match="seed 1"):
        play_game(rules, 2, 1, [_nan_planner(), "random"])
    bot = tmp_path / "first.py"
    bot.write_text("def choose(state, legal_actions, rng):\n    return legal_actions[0]\n")
    with pytest.raises(StrategyError, match="chose action -1, which is not legal.*seed 27"):   # the mixed driver
        play_batch(rules, 2, np.array([27]), [_nan_planner(), f"{bot}:choose"])


def test_i43_07_position_emperor_value_is_a_whole_number_like_vp(tmp_path, cli):
    pos = {"players": 2, "columns": [{"parts": [0], "emperor": {"seat": 0, "value": 3.0}}]}
    (tmp_path / "p.json").write_text(json.dumps(pos))
    line = one_error_line(cli.invoke(main, ["score", str(tmp_path / "p.json")]))
    assert "emperor.value" in line and "3.0" in line


def test_i43_07_cosmetic_a_weight_in_a_file_is_a_number_not_text(tmp_path, cli):
    (tmp_path / "w.toml").write_text('[q]\nbase = "greedy"\nweights = { vp = "3" }\n')
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "1", "--strategies",
                                            f"{tmp_path / 'w.toml'}:q,random"]))
    assert "vp='3' is not a number" in line and "without quotes" in line


# ---------------------------------------------------------------------------------------------
# 10. the skill ladder's --budget is finite minutes
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("budget", ["inf", "nan", "-1", "0", "1e9"])
def test_i43_10_skill_budget_must_be_finite_minutes(tmp_path, cli, monkeypatch, budget):
    import evora_sim.ladder as ladder

    monkeypatch.setattr(ladder, "pilot", lambda *a, **k: pytest.fail("the pilot ran"))
    line = one_error_line(cli.invoke(main, ["skill", "-n", "2", "--ladder", LADDER, "--budget", budget,
                                            "--out", str(tmp_path / "sk"), "--report-dir", str(tmp_path / "rep")]))
    assert "--budget must be a number of minutes above 0 and at most 10080" in line
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# 12. a strategy file that exits at import
# ---------------------------------------------------------------------------------------------
def test_i43_12_a_strategy_file_calling_sys_exit_at_import_is_one_line(tmp_path, cli):
    bot = tmp_path / "quits.py"
    bot.write_text("raise SystemExit(3)\n")
    for args in (["replay", "-n", "2", "--seed", "1", "--strategies", f"{bot}:Bot,random"],
                 ["simulate", "-n", "2", "--games", "4", "--strategies", f"{bot}:Bot,random", "--out",
                  str(tmp_path / "run"), "-q"]):
        line = one_error_line(cli.invoke(main, args))
        assert "quits.py" in line and "SystemExit: 3" in line
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------------------------------------
# 13. --jobs beyond the cores
# ---------------------------------------------------------------------------------------------
def test_i43_13_jobs_are_capped_at_the_cores(run, cli, monkeypatch):
    from evora_sim import runner as R

    assert R.check_jobs(1024) == R.cores() == R.check_jobs(-1) and R.check_jobs(1) == 1
    seen = []
    real = R.run_local
    monkeypatch.setattr(R, "run_local", lambda config, rules, out, todo, jobs, *a, **k:
                        (seen.append(jobs), real(config, rules, out, todo, 1, *a, **k)))
    (run / "games" / "chunk-000001.parquet").unlink()          # one chunk to play again
    ok(cli.invoke(main, sim_args(run) + ["--jobs", "1024"]))              # the last --jobs counts
    assert seen == [R.cores()]


# ---------------------------------------------------------------------------------------------
# 14. a Dask cluster with every worker gone: a clear stop, finished chunks kept, resumable
# ---------------------------------------------------------------------------------------------
class StandInFuture:
    """A stand-in for a dask Future: done at once (its result computed here) or never."""

    def __init__(self, key, fn, args, done):
        self.key, self._result = key, (fn(*args) if done else None)
        self._done = done

    def add_done_callback(self, callback):
        if self._done:
            callback(self)

    def result(self, timeout=None):
        return self._result

    def release(self):
        pass


class ClusterLosingItsWorkers:
    """A client whose cluster plays the first ``finish`` chunks, then has no worker left."""

    def __init__(self, finish: int):
        self.finish, self.submitted, self.cancelled = finish, 0, []

    def nthreads(self):
        return {} if self.submitted >= self.finish else {"tcp://w:1": 1}

    def submit(self, fn, *args, key, pure):
        self.submitted += 1
        return StandInFuture(key, fn, args, done=self.submitted <= self.finish)

    def cancel(self, futures):
        self.cancelled += futures

    def close(self):
        pass


def test_i43_14_dask_without_workers_stops_keeps_chunks_and_resumes(made, tmp_path, cli, monkeypatch):
    from evora_sim import runner as R

    client = ClusterLosingItsWorkers(finish=1)
    monkeypatch.setattr(R, "connect_scheduler", lambda address, timeout="10s": client)
    monkeypatch.setenv(R.NO_WORKERS_ENV, "0")
    out = tmp_path / "run"
    line = one_error_line(cli.invoke(main, sim_args(out) + ["--backend", "dask", "--scheduler", "tcp://x:1"]))
    assert "no workers for 0 s" in line and "finished chunks are kept" in line and "run the same command" in line
    assert client.cancelled                                    # nothing left running on the cluster
    manifest = json.loads((out / MANIFEST).read_text())
    assert list(manifest["chunks"].values()).count("done") == 1
    ok(cli.invoke(main, sim_args(out)))                        # resumed here: only the missing chunks
    for t in ("games", "seats", "cards", "spaces"):
        for k in range(3):
            assert chunk_file(out, t, k).read_bytes() == chunk_file(made, t, k).read_bytes()


def test_i43_14_a_bad_no_workers_setting_is_refused_before_anything_is_written(tmp_path, cli, monkeypatch):
    from evora_sim import runner as R

    monkeypatch.setenv(R.NO_WORKERS_ENV, "soon")
    line = one_error_line(cli.invoke(main, sim_args(tmp_path / "run") + ["--backend", "dask", "--scheduler",
                                                                         "tcp://x:1"]))
    assert R.NO_WORKERS_ENV in line and not (tmp_path / "run").exists()


# ---------------------------------------------------------------------------------------------
# 15. a search's --budget has an upper bound
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [
    ["balance", "--players", "2", "--param", "white_stone.vp=2..3"],
    ["balance", "--compensation", "--players", "2"],
    ["tune", "strategy", "greedy(plan=action)", "--against", "self", "--players", "2"],
])
def test_i43_15_search_budget_has_an_upper_bound(tmp_path, cli, command):
    line = one_error_line(cli.invoke(main, command + ["--budget", str(10**18), "--out", str(tmp_path / "o")]))
    assert "--budget must be a number of games from 1 to 10,000,000,000" in line
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------------------------
# cosmetic items of the same round
# ---------------------------------------------------------------------------------------------
def test_i43_cosmetic_skill_budget_too_short_names_the_budget_given(tmp_path, cli, monkeypatch):
    import evora_sim.ladder as ladder

    monkeypatch.setattr(ladder, "pilot", lambda players, rungs, *a, **k:
                        {**{f"r{i + 1}": 0.01 for i in range(len(rungs))}, "random|greedy(plan=action)": 0.01})
    line = one_error_line(cli.invoke(main, ["skill", "-n", "2", "--ladder", LADDER, "--budget", "0.01", "--jobs", "1",
                                            "-q", "--out", str(tmp_path / "sk"), "--report-dir", str(tmp_path / "rep")]))
    assert "--budget 0.01 minutes is too short" in line and "-0.0" not in line


def test_i43_cosmetic_compact_of_an_empty_name_says_it_is_empty(cli):
    line = one_error_line(cli.invoke(main, ["compact", ""]))
    assert "is empty" in line and "current folder" not in line


def test_i43_cosmetic_a_clashing_duel_names_seeds_as_seeds(tmp_path, cli):
    args = ["duel", "random,greedy(plan=action)", "--jobs", "1", "-q", "--out", str(tmp_path / "d")]
    ok(cli.invoke(main, args + ["--games", "4"]))
    line = one_error_line(cli.invoke(main, args + ["--games", "8"]))
    assert "seeds: 2 -> 4" in line and "games: 2" not in line


def test_i43_cosmetic_card_value_into_a_foreign_folder_says_what_it_is_not(tmp_path, cli):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "notes.txt").write_text("mine")
    line = one_error_line(cli.invoke(main, ["card-value", "-n", "2", "--games", "40", "--out", str(tmp_path / "o")]))
    assert "not a card-value folder" in line and "search" not in line


def test_i43_cosmetic_ctrl_c_inside_a_strategy_is_exit_130_in_replay_as_in_simulate(tmp_path, cli):
    bot = tmp_path / "ctrlc.py"
    bot.write_text("def choose(state, legal_actions, rng):\n    raise KeyboardInterrupt\n")
    for args in (["replay", "-n", "2", "--seed", "1", "--strategies", f"{bot}:choose,random"],
                 ["simulate", "-n", "2", "--games", "4", "--strategies", f"{bot}:choose,random", "-q", "--out",
                  str(tmp_path / "run")]):
        result = cli.invoke(main, args)
        assert result.exit_code == 130 and "interrupted" in result.stderr and "Aborted" not in result.output
