"""Issue 16: hostile or careless input ends in one line, exit status 2, nothing written - custom
strategies that cheat, hang or exit, counts too large for memory, numbers out of the rules'
range, files nested too deeply. Every case goes through the command line as a user would."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from evora_sim.cli import main
from cli_results import ok, one_error_line


@pytest.fixture
def cli():
    return CliRunner()


def bot(tmp_path: Path, body: str, name: str = "bot.py") -> str:
    """A custom strategy file whose class Bot runs ``body`` as its choose()."""
    path = tmp_path / name
    path.write_text("import sys, time\n\nclass Bot:\n" + textwrap.indent(textwrap.dedent(body), "    "))
    return f"{path}:Bot"


def simulate_args(out, spec, *extra):
    return ["simulate", "-n", "2", "--games", "4", "--strategies", f"{spec},random", "--jobs", "1",
            "--out", str(out), "-q", *extra]


# ---------------------------------------------------------------------------------------------
# 4. custom strategies
# ---------------------------------------------------------------------------------------------
CHEATS = {
    "appends an illegal action to its list": ("""
        def choose(self, state, legal_actions, rng):
            legal_actions.append(9999)
            return 9999
        """, "not legal"),
    "appends a real but illegal action code": ("""
        def choose(self, state, legal_actions, rng):
            bad = next(a for a in range(60) if a not in legal_actions)
            legal_actions.append(bad)
            return bad
        """, "not legal"),
    "calls sys.exit": ("""
        def choose(self, state, legal_actions, rng):
            sys.exit(0)
        """, "called sys.exit(0)"),
    "fails in __init__": ("""
        def __init__(self):
            raise RuntimeError("no")
        def choose(self, state, legal_actions, rng):
            return legal_actions[0]
        """, "Bot() failed"),
    "raises": ("""
        def choose(self, state, legal_actions, rng):
            raise KeyError("oops")
        """, "raised KeyError"),
}


@pytest.mark.parametrize("case", sorted(CHEATS))
def test_a_cheating_strategy_is_one_line_and_no_run_folder(tmp_path, cli, case):
    body, named = CHEATS[case]
    spec = bot(tmp_path, body)
    line = one_error_line(cli.invoke(main, simulate_args(tmp_path / "run", spec)))
    assert named in line and "Bot" in line
    assert not (tmp_path / "run").exists()
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "7", "--strategies", f"{spec},random"]))
    assert named in line


@pytest.mark.parametrize("body", ["""
    def choose(self, state, legal_actions, rng):
        while True:
            pass
    """, """
    def choose(self, state, legal_actions, rng):
        try:
            time.sleep(1000)
        except Exception:
            time.sleep(1000)
    """])
def test_a_strategy_that_never_decides_is_stopped_by_the_decision_timeout(tmp_path, cli, body):
    spec = bot(tmp_path, body)
    t0 = time.monotonic()
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "7", "--strategies",
                                            f"{spec},random", "--decision-timeout", "0.5"]))
    assert time.monotonic() - t0 < 20
    assert "did not decide within 0.5 s" in line and "seed 7" in line and "Bot" in line
    line = one_error_line(cli.invoke(main, simulate_args(tmp_path / "run", spec, "--decision-timeout", "0.5")))
    assert "did not decide within 0.5 s" in line and not (tmp_path / "run").exists()


def _busy(seconds: float) -> None:
    """Work for ``seconds`` in short steps, so that a worker thread's timeout (raised at its
    next Python instruction) lands on time."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)


@pytest.mark.parametrize("thread", [False, True], ids=["main thread", "worker thread"])
def test_the_decision_clock_stops_while_numba_compiles(thread):
    """Issue 50, item 14: time under numba's compiler lock is not the strategy's. A 1 s compile
    inside a 0.5 s decision does not stop it; the clock then runs on with what was left."""
    from numba.core import event

    from evora_sim.mixed import DecisionTimeout, deadline

    def compiling(seconds):
        with event.trigger_event("numba:compiler_lock"):
            _busy(seconds)

    outcome = {}

    def decide():
        t0 = time.monotonic()
        with deadline(0.5):
            compiling(1.0)
            _busy(0.1)
        outcome["fits"] = time.monotonic() - t0
        t0 = time.monotonic()
        try:
            with deadline(0.5):
                compiling(0.2)
                _busy(10.0)
        except DecisionTimeout:
            outcome["stopped"] = time.monotonic() - t0

    if thread:
        worker = threading.Thread(target=decide)
        worker.start()
        worker.join(30)
    else:
        decide()
    assert outcome["fits"] >= 1.1
    assert 0.65 <= outcome["stopped"] < 5


def test_a_cold_compile_inside_a_decision_is_not_its_timeout(tmp_path):
    """With an empty compile cache, a decision's first call of two compiled readers of the API
    compiles them for longer than a 0.05 s timeout, and the decision still ends normally (before,
    the alarm went off inside numba's compiler)."""
    script = textwrap.dedent("""
        import time
        from evora_sim import api
        from evora_sim.mixed import deadline

        state = api.new_game(n_players=2, seed=1)
        t0 = time.monotonic()
        with deadline(0.05):
            api.column_leader(state, 0)
            api.score_now(state, 0)
        print(time.monotonic() - t0)
        """)
    env = dict(os.environ, EVORA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          cwd=Path(__file__).resolve().parent.parent, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert float(done.stdout) > 0.05          # it did compile for longer than the timeout
    assert any(tmp_path.rglob("*.nbi"))       # ... into the empty cache


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_decision_timeout_must_be_positive(tmp_path, cli, value):
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "7", "--strategies", "random",
                                            "--decision-timeout", value]))
    assert "--decision-timeout" in line


# ---------------------------------------------------------------------------------------------
# 5. counts too large for memory; --jobs
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, named", [
    (["--games", "1000000000000"], "more than a run holds"),
    (["--games", "40000000000", "--seat-rotation"], "seeds x 3 rotations) is more than a run holds"),
    (["--games", "1000000", "--chunk-size", "3"], "give a --chunk-size of at least 10"),
    (["--games", "10", "--chunk-size", "100000000"], "would not fit in memory"),
    (["--games", "10", "--jobs", "99999999999999999999"], "--jobs"),
    (["--games", "10", "--jobs", "0"], "--jobs"),
    (["--games", "10", "--jobs", "-2"], "--jobs"),
])
def test_huge_counts_are_refused_at_once(tmp_path, cli, args, named):
    t0 = time.monotonic()
    line = one_error_line(cli.invoke(main, ["simulate", "-n", "3", "--strategies", "random",
                                            "--out", str(tmp_path / "run"), "-q", *args]))
    assert time.monotonic() - t0 < 10
    assert named in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["--jobs", "0"], ["--jobs", "99999999999999999999"],
                                  ["--games", "1000000000000"]])
def test_sweep_checks_jobs_and_counts_before_writing(tmp_path, cli, args):
    base = ["sweep", "-n", "2", "--games", "4", "--strategies", "random", "--param",
            "white_stone.vp=2,3", "--out", str(tmp_path / "sw"), "-q"]
    one_error_line(cli.invoke(main, base + args))
    assert list(tmp_path.iterdir()) == []


def test_duel_refuses_a_huge_count(cli):
    line = one_error_line(cli.invoke(main, ["duel", "random", "greedy", "--games", "1000000000000000"]))
    assert "more than a run holds" in line


# ---------------------------------------------------------------------------------------------
# 6. evora score: every number within what the rules allow
# ---------------------------------------------------------------------------------------------
def score(cli, tmp_path, position) -> object:
    f = tmp_path / "pos.json"
    f.write_text(position if isinstance(position, str) else json.dumps(position))
    return cli.invoke(main, ["score", str(f), "--json"])


@pytest.mark.parametrize("position, named", [
    ({"players": 2, "columns": [], "vp": [2147483647, 0]}, "'vp'[0]"),
    ({"players": 2, "columns": [], "vp": [2**31, 0]}, "'vp'[0]"),
    ({"players": 2, "columns": [], "vp": [10**30, 0]}, "'vp'[0]"),
    ({"players": 2, "columns": [], "parts_left": [2**31, 0]}, "'parts_left'[0]"),
    ({"players": 2, "columns": [], "parts_left": [10_000, 0]}, "'parts_left'[0]"),
    ({"players": 2, "columns": [{"parts": [0, 0, 0]}], "parts_left": [30, 0]}, "'parts_left'[0]"),
    ({"players": 2, "columns": [], "vp": [1.5, 0]}, "'vp'[0]"),
    ({"players": 2 ** 40, "columns": []}, "player"),
    ({"players": 2, "columns": [{"parts": [0], "emperor": {"seat": 0, "value": [3]}}]}, "emperor.value"),
])
def test_score_range_checks_every_number(tmp_path, cli, position, named):
    line = one_error_line(score(cli, tmp_path, position))
    assert named in line


def test_score_keeps_the_largest_allowed_numbers_exact(tmp_path, cli):
    from evora_sim.position import MAX_VP

    table = json.loads(ok(score(cli, tmp_path, {"players": 2, "columns": [], "vp": [MAX_VP, 0]})))
    assert table["seats"][0]["total"] >= MAX_VP and table["winner"] == 0


@pytest.mark.parametrize("text, named", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"players": ' + "9" * 5000 + ', "columns": []}', "not valid JSON"),
    (b"\xff\xfe", "UTF-8"),
])
def test_score_file_that_cannot_be_read(tmp_path, cli, text, named):
    f = tmp_path / "pos.json"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    line = one_error_line(cli.invoke(main, ["score", str(f)]))
    assert named in line


# ---------------------------------------------------------------------------------------------
# rules files
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("toml, named", [
    ("a = " + "[" * 5000 + "]" * 5000, "nested too deeply"),
    ("[white_stone]\nvp = " + "9" * 5000, "not valid TOML"),
    ('[[board.spaces]]\ncolour = "governor"\naction = ["draw2"]\n', "board.spaces.0.action"),
    ('[[board.spaces]]\ncolour = ["governor"]\naction = "draw2"\n', "board.spaces.0.colour"),
])
def test_rules_file_that_cannot_be_used(tmp_path, cli, toml, named):
    f = tmp_path / "rules.toml"
    f.write_text(toml)
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "1", "--strategies", "random",
                                            "--rules", str(f)]))
    assert named in line


def test_a_stray_types_key_on_a_build_space_is_refused(tmp_path, cli):
    from evora_sim.rules import load_rules

    spaces = load_rules().data["board"]["spaces"]
    i = next(i for i, sp in enumerate(spaces) if sp["action"].startswith("build"))
    f = tmp_path / "rules.toml"
    lines = []
    for j, sp in enumerate(spaces):
        lines.append("[[board.spaces]]")
        for key, value in sp.items():
            lines.append(f"{key} = {json.dumps(value)}")
        if j == i:
            lines.append('types = ["governor"]')
    f.write_text("\n".join(lines) + "\n")
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "1", "--strategies", "random",
                                            "--rules", str(f)]))
    assert f"board.spaces.{i}" in line and "types" in line
