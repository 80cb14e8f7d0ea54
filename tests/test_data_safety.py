"""Issue 16: a user's data is never lost or mixed. Report folders replace only their own files,
a run folder is locked for its run, chunk files are checked against their recorded size and
checksum, and a manifest of the wrong shape is one line, not a traceback. Every case goes
through the command line as a user would type it."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evora_sim import runner as R
from evora_sim.cli import main
from evora_sim.manifest import JOURNAL, MANIFEST, chunk_file
from evora_sim.runlock import folder_lock
from evora_sim.runner import Execution, RunError, open_run, simulate
from cli_results import evora_command, ok, one_error_line

RUN = dict(players=2, games=40, strategies="greedy,random", seed=3, seat_rotation=False)
HOW = Execution(chunk_size=10, jobs=1)


def sim_args(out, **kw):
    cfg = {**RUN, "chunk_size": HOW.chunk_size, **kw}
    return ["simulate", "--players", str(cfg["players"]), "--games", str(cfg["games"]),
            "--strategies", cfg["strategies"], "--seed", str(cfg["seed"]),
            "--chunk-size", str(cfg["chunk_size"]), "--jobs", "1", "--out", str(out), "--quiet",
            "--no-seat-rotation"]


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A finished run; tests copy it before damaging it."""
    out = tmp_path_factory.mktemp("safety") / "run"
    simulate(**RUN, out=out, execution=HOW)
    return out


@pytest.fixture
def run(made, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(made, copy)
    return copy


@pytest.fixture
def cli():
    return CliRunner()


def files_in(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------------------------
# 1. evora report --out never deletes what it did not write
# ---------------------------------------------------------------------------------------------
def test_report_refuses_a_folder_holding_other_files_and_deletes_nothing(run, tmp_path, cli):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "report.html").write_text("my own notes")
    (victim / "thesis.tex").write_text("years of work")
    before = files_in(victim)
    line = one_error_line(cli.invoke(main, ["report", str(run), "--out", str(victim)]))
    assert "thesis.tex" in line and "nothing is deleted" in line
    assert files_in(victim) == before


def test_report_replaces_its_own_earlier_report_and_nothing_else(run, tmp_path, cli):
    out = tmp_path / "rep"
    ok(cli.invoke(main, ["report", str(run), "--out", str(out)]))
    assert (out / ".evora-output").is_file() and (out / "report.html").is_file()
    ok(cli.invoke(main, ["report", str(run), "--out", str(out)]))         # its own: replaced
    (out / "mine.txt").write_text("keep me")
    before = files_in(out)
    line = one_error_line(cli.invoke(main, ["report", str(run), "--out", str(out)]))
    assert "mine.txt" in line
    assert files_in(out) == before


@pytest.mark.parametrize("value", [".", "", "./", ".."])
@pytest.mark.parametrize("command", [
    lambda run, v: ["report", str(run), "--out", v],
    lambda run, v: ["compare", str(run), str(run), "--out", v],
    lambda run, v: sim_args(v),
    lambda run, v: ["sweep", "-n", "2", "--games", "4", "--strategies", "random", "--param",
                    "white_stone.vp=2,3", "--out", v],
    lambda run, v: ["run", "--games", "4", "--report-dir", v],
    lambda run, v: ["run", "--games", "4", "--out", v],
])
def test_out_dot_and_empty_are_refused_everywhere(run, tmp_path, cli, monkeypatch, command, value):
    work = tmp_path / "project"
    work.mkdir()
    (work / "notes.txt").write_text("x")
    monkeypatch.chdir(work)
    line = one_error_line(cli.invoke(main, command(run, value)))
    assert "--out" in line or "--report-dir" in line
    assert sorted(os.listdir(work)) == ["notes.txt"]


def test_run_checks_its_report_dir_before_any_game(tmp_path, cli, monkeypatch):
    played = []
    monkeypatch.setattr(R, "simulate", lambda *a, **k: played.append(1))
    afile = tmp_path / "afile"
    afile.write_text("x")
    line = one_error_line(cli.invoke(main, ["run", "--games", "4", "--out", str(tmp_path / "runs"),
                                            "--report-dir", str(afile), "-q"]))
    assert "--report-dir" in line and str(afile) in line
    assert played == [] and not (tmp_path / "runs").exists()


# ---------------------------------------------------------------------------------------------
# 2. one run at a time per folder
# ---------------------------------------------------------------------------------------------
def test_a_second_run_on_a_locked_folder_is_refused_naming_the_holder(run, cli):
    before = files_in(run)
    with folder_lock(run, RunError):
        line = one_error_line(cli.invoke(main, sim_args(run)))
    assert f"PID {os.getpid()}" in line and "in use by another run" in line
    after = files_in(run)
    assert {k: v for k, v in after.items() if k != ".evora-lock"} == \
        {k: v for k, v in before.items() if k != ".evora-lock"}


def test_a_folder_a_run_has_just_taken_is_in_use_not_foreign(tmp_path, cli):
    """The holder has made its table folders but not yet its manifest: a second run hears that
    the folder is in use, naming the holder, not that it holds something else."""
    out = tmp_path / "taken"
    out.mkdir()
    with folder_lock(out, RunError):
        (out / "games").mkdir()
        line = one_error_line(cli.invoke(main, sim_args(out)))
    assert f"in use by another run (PID {os.getpid()})" in line
    assert sorted(p.name for p in out.iterdir()) == [".evora-lock", "games"]
    # once the holder is gone the same folder is refused as not a run folder, as before
    assert "is not empty and is not a run folder" in one_error_line(cli.invoke(main, sim_args(out)))


def test_two_runs_started_together_never_mix(tmp_path):
    """Two processes, two seeds, one --out: one plays, the other is refused with one line."""
    import subprocess

    out = tmp_path / "shared"
    cmds = [[*evora_command(), *sim_args(out, seed=s, games=400, chunk_size=20)]
            for s in (5, 6)]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 0], [0, 2]), results
    seeds = {open_run(out).manifest["config"]["seed"]}
    games = open_run(out).games
    from evora_sim.seeds import game_seeds

    mine = seeds.pop()
    assert (games.sort_values("game_id")["seed"].to_numpy() == game_seeds(mine, 0, 400)).all()
    for code, err in results:
        if code == 2:
            assert len(err.strip().splitlines()) == 1
            assert "in use by another run (PID" in err or "holds a different run" in err


# ---------------------------------------------------------------------------------------------
# 3. damaged chunks: replayed on resume, refused by report and compare
# ---------------------------------------------------------------------------------------------
def test_a_truncated_chunk_is_replayed_on_resume_with_one_line(run, made, cli):
    chunk_file(run, "seats", 2).write_bytes(b"")
    chunk_file(run, "games", 3).write_bytes(chunk_file(run, "games", 3).read_bytes()[:100])
    result = cli.invoke(main, sim_args(run))
    assert result.exit_code == 0, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "chunks 2, 3 are damaged" in lines[0] and "played again" in lines[0]
    assert files_in(run).keys() >= {"seats/chunk-000002.parquet"}
    for t in ("games", "seats", "cards", "spaces"):
        for k in range(4):
            assert chunk_file(run, t, k).read_bytes() == chunk_file(made, t, k).read_bytes()


@pytest.mark.parametrize("command", [
    lambda run, out: ["report", str(run), "--out", str(out)],
    lambda run, out: ["compare", str(run), str(run)],
])
@pytest.mark.parametrize("damage, named", [
    (lambda f: f.write_bytes(b""), "has 0 bytes"),
    (lambda f: f.write_bytes(f.read_bytes()[:-1] + b"x"), "differs from what was written"),
])
def test_report_and_compare_refuse_a_damaged_chunk_naming_it(run, tmp_path, cli, command, damage, named):
    damage(chunk_file(run, "cards", 1))
    line = one_error_line(cli.invoke(main, command(run, tmp_path / "rep")))
    assert "chunk 1 is damaged" in line and "cards/chunk-000001.parquet" in line and named in line
    assert not (tmp_path / "rep").exists()


def _legacy(run: Path) -> dict:
    """The manifest as version 1 wrote it: statuses only, no sizes or checksums."""
    m = json.loads((run / MANIFEST).read_text())
    m["version"] = 1
    del m["chunk_files"]
    (run / MANIFEST).write_text(json.dumps(m))
    return m


def test_a_manifest_without_checksums_still_opens_and_is_checked_by_content(run, tmp_path, cli):
    _legacy(run)
    ok(cli.invoke(main, ["compare", str(run), str(run)]))
    chunk_file(run, "games", 0).write_bytes(b"")
    line = one_error_line(cli.invoke(main, ["compare", str(run), str(run)]))
    assert "chunk 0 is damaged" in line and "not a readable Parquet file" in line
    result = cli.invoke(main, sim_args(run))                 # resume replays it, records checksums
    assert result.exit_code == 0 and "chunk 0 is damaged" in result.stderr
    assert set(json.loads((run / MANIFEST).read_text())["chunk_files"]) == {"0", "1", "2", "3"}


def test_a_copied_chunk_file_is_refused_as_duplicate_game_ids(run, cli):
    _legacy(run)
    for t in ("games", "seats", "cards", "spaces"):
        shutil.copy(chunk_file(run, t, 0), chunk_file(run, t, 1))
    line = one_error_line(cli.invoke(main, ["compare", str(run), str(run)]))
    assert "chunk 1" in line and ("outside its range" in line or "duplicate" in line)


def _edit(run: Path, change) -> None:
    m = json.loads((run / MANIFEST).read_text())
    m = change(m)
    (run / MANIFEST).write_text(json.dumps(m))


def _drop(key):
    def f(m):
        del m[key]
        return m
    return f


def _set(key, value):
    def f(m):
        m[key] = value
        return m
    return f


def _chunks(change):
    def f(m):
        change(m["chunks"])
        return m
    return f


@pytest.mark.parametrize("edit, named", [
    (lambda run: _edit(run, lambda m: [m]), "JSON list"),
    (lambda run: _edit(run, _drop("config")), "'config'"),
    (lambda run: _edit(run, _set("chunks", "done")), "'chunks'"),
    (lambda run: _edit(run, _chunks(lambda c: c.update({"-1": "done"}))), "'-1'"),
    (lambda run: _edit(run, _chunks(lambda c: c.update({"../../x": "done"}))), "'../../x'"),
    (lambda run: _edit(run, _chunks(lambda c: c.pop("3"))), "lists 3 chunks, but its configuration makes 4"),
    (lambda run: _edit(run, _chunks(lambda c: c.update({"2": "finished"}))), "'finished'"),
    (lambda run: _edit(run, lambda m: {**m, "config": {**m["config"], "games": "40"}}), "config.games"),
    (lambda run: _edit(run, lambda m: {**m, "rules": {**m["rules"], "white_stone": {"vp": 7}}}), "rules"),
    (lambda run: (run / MANIFEST).write_bytes(b'{"format": "evora-sim run", "x": "\xff\xfe"}'), "UTF-8"),
    (lambda run: (run / MANIFEST).write_text("[" * 100_000), "nested too deeply"),
    (lambda run: (run / MANIFEST).write_text('{"a": ' + "9" * 5000 + "}"), "not valid JSON"),
    (lambda run: (run / MANIFEST).write_text("{"), "not valid JSON"),
])
def test_a_manifest_of_the_wrong_shape_is_one_line(run, tmp_path, cli, edit, named):
    edit(run)
    for args in (["report", str(run), "--out", str(tmp_path / "rep")], ["compare", str(run), str(run)],
                 sim_args(run)):
        line = one_error_line(cli.invoke(main, args))
        assert named in line, line
    assert not (tmp_path / "rep").exists()


def test_a_torn_journal_line_only_costs_that_chunk(made, tmp_path):
    """A crash while appending a chunk's record: the chunk counts as missing and is replayed."""
    out = tmp_path / "run"
    shutil.copytree(made, out)
    m = json.loads((out / MANIFEST).read_text())
    record = m["chunk_files"].pop("3")
    m["chunks"]["3"] = "missing"
    (out / MANIFEST).write_text(json.dumps(m))
    (out / JOURNAL).write_text(json.dumps({"chunk": 3, "files": record})[:-20])
    assert R.read_manifest(out)["chunks"]["3"] == "missing"
    (out / JOURNAL).write_text(json.dumps({"chunk": 3, "files": record}) + "\n")
    assert R.read_manifest(out)["chunks"]["3"] == "done"


def test_stale_temporary_chunk_files_are_removed_on_resume(run, cli):
    stale = chunk_file(run, "games", 1).with_name(".chunk-000001.parquet.12345.tmp")
    stale.write_bytes(b"half")
    ok(cli.invoke(main, sim_args(run)))
    assert not stale.exists()


def test_a_strategy_name_with_maths_markup_is_drawn_as_text(tmp_path, cli):
    folder = tmp_path / "$\\undefinedmacro$"
    folder.mkdir()
    (folder / "bot.py").write_text("class Bot:\n    def choose(self, state, legal_actions, rng):\n"
                                   "        return legal_actions[0]\n")
    spec = f"{folder / 'bot.py'}:Bot"
    run = tmp_path / "run"
    ok(cli.invoke(main, ["simulate", "-n", "2", "--games", "6", "--strategies", f"{spec},random",
                         "--seat-rotation", "--jobs", "1", "--out", str(run), "-q"]))
    ok(cli.invoke(main, ["report", str(run), "--out", str(tmp_path / "rep")]))
    assert "$\\undefinedmacro$" in (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")


def test_a_scheduler_address_that_answers_garbage_exits_at_once_in_one_line(tmp_path):
    """Something listens, but it is not a Dask scheduler: one line, exit 2, no 'Exception
    ignored' traceback from a half-made Client, and no 20 s wait for it to close."""
    import socket
    import subprocess
    import threading
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def answer_garbage():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.sendall(b"\xff" * 64)
            time.sleep(0.5)
            conn.close()

    threading.Thread(target=answer_garbage, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    t0 = time.monotonic()
    done = subprocess.run([*evora_command(), *sim_args(tmp_path / "x"), "--backend", "dask",
                           "--scheduler", address], capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - t0
    server.close()
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evora: error: cannot reach the Dask scheduler"), done.stderr
    assert elapsed < 15 and not (tmp_path / "x").exists()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc to list child processes")
def test_workers_and_trackers_exit_soon_after_their_run_is_killed(tmp_path):
    import signal
    import subprocess
    import time

    out = tmp_path / "killed"
    args = sim_args(out, games=3000, chunk_size=30, strategies="greedy")
    args[args.index("--jobs") + 1] = "2"
    proc = subprocess.Popen([*evora_command(), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: set[int] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        for task in Path(f"/proc/{proc.pid}/task").glob("*"):
            try:
                children |= {int(x) for x in (task / "children").read_text().split()}
            except OSError:
                pass
        if len(children) >= 2 and (out / JOURNAL).exists():
            break
        time.sleep(0.05)
    assert proc.poll() is None and len(children) >= 2, "the run was not caught with its workers"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in children):
        time.sleep(0.2)
    left = [p for p in children if _alive(p)]
    for p in left:                      # do not leave them behind if the test fails
        os.kill(p, signal.SIGKILL)
    assert left == [], "worker processes outlived their run"


def test_sweep_refuses_a_summary_folder_holding_other_files_before_any_game(tmp_path, cli):
    out = tmp_path / "sw"
    (out / "summary").mkdir(parents=True)
    (out / "summary" / "notes.txt").write_text("mine")
    line = one_error_line(cli.invoke(main, ["sweep", "-n", "2", "--games", "4", "--strategies", "random",
                                            "--param", "white_stone.vp=2,3", "--out", str(out), "-q"]))
    assert "summary" in line and "notes.txt" in line
    assert sorted(p.name for p in out.rglob("*")) == ["notes.txt", "summary"]
