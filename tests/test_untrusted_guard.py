"""Issue 51: every command's folder goes through one guard (``fsutil.check_folder_kind``,
``fsutil.own_path``), what the tool writes is escaped for where it goes, and what it reads back is
checked against what a game can produce, before any work. Each test reproduces a reported failure
(test_i51_...) through the command line where a user would meet it."""
from __future__ import annotations

import errno
import json
import os
import re
import shutil
import sys
import tomllib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evora_sim.cli import main
from evora_sim.manifest import MANIFEST, chunk_file, file_record
from evora_sim.rules import load_rules
from evora_sim.runner import Execution, RunError, simulate
from cli_results import ok, one_error_line
from test_data_safety import cli, files_in  # noqa: F401  (cli: the fixture)

TINY = ["--players", "2", "--games", "10", "--teacher", "mcts(iterations=20)", "--duel-games", "8",
        "--jobs", "1", "--start", "cardheights"]
RUN = dict(players=2, games=12, strategies="greedy(plan=action),random", seed=5, seat_rotation=False)
HOW = Execution(chunk_size=6, jobs=1)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A finished 2-player run of two chunks, played once; tests change copies of it."""
    folder = tmp_path_factory.mktemp("guard") / "run"
    simulate(**RUN, out=folder, execution=HOW)
    return folder


def copy_run(made: Path, where: Path) -> Path:
    return Path(shutil.copytree(made, where, symlinks=True))


def train(cli, out, *more):
    return cli.invoke(main, ["train", *TINY, *more, "--out", str(out), "-q"])


# ---------------------------------------------------------------------------------------------
# security: a link planted inside a command's folder is never followed
# ---------------------------------------------------------------------------------------------
def test_i51_train_never_writes_through_a_link_planted_for_its_teacher_run(tmp_path, cli):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "t"
    out.mkdir()
    (out / "teacher-2p").symlink_to(elsewhere, target_is_directory=True)
    line = one_error_line(train(cli, out))
    assert "teacher-2p is a link" in line
    assert list(elsewhere.iterdir()) == []


def test_i51_train_never_writes_through_a_link_planted_for_its_duel(tmp_path):
    """The duel's folder is named after the candidate's weights; a link there is refused before
    any duel game."""
    from evora_sim.experiments.train_runs import check_candidate, duel_folder, plan_training

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "t"
    out.mkdir()
    plan = plan_training(2, 10, "cardheights", 1, 8, load_rules(), out, "cardheights")
    weights = tuple(np.zeros(77))
    (out / duel_folder(plan, weights)).symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(RunError, match=f"{duel_folder(plan, weights)} is a link"):
        check_candidate(plan, weights, out, 1, True)
    assert list(elsewhere.iterdir()) == []


def test_i51_explain_never_writes_through_a_link_planted_for_its_arms(explained, tmp_path, cli):
    root, run, _ = explained
    moved = Path(shutil.copytree(root, tmp_path / "copy", symlinks=True))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(moved / "why" / "arms")
    (moved / "why" / "arms").symlink_to(elsewhere, target_is_directory=True)
    line = one_error_line(cli.invoke(main, ["explain", str(moved / run.name), "--seeds", "10", "--jobs", "1", "-q",
                                            "--out", str(moved / "why")]))
    assert "arms is a link" in line
    assert list(elsewhere.iterdir()) == []


def test_i51_the_guard_refuses_a_place_outside_the_folder(tmp_path):
    from evora_sim.fsutil import OutputError, own_path

    assert own_path(tmp_path, "a/b") == tmp_path / "a" / "b"
    for bad in ("../x", "/etc", "a/../../x"):
        with pytest.raises(OutputError, match="not a place inside"):
            own_path(tmp_path, bad)


# ---------------------------------------------------------------------------------------------
# data loss: train takes only a folder of its own
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("what", ["run folder", "user's files"])
def test_i51_train_refuses_a_folder_that_is_not_a_training_and_changes_nothing(made, tmp_path, cli, what):
    if what == "run folder":
        out = copy_run(made, tmp_path / "run")
    else:
        out = tmp_path / "mine"
        out.mkdir()
        (out / "thesis.tex").write_text("years of work")
        (out / "candidate.toml").write_text("# my own notes\n")
    before = files_in(out)
    line = one_error_line(train(cli, out))
    assert "is not empty and is not a training folder" in line and "nothing is deleted" in line
    assert files_in(out) == before


def test_i51_train_out_naming_a_file_is_one_line(tmp_path, cli):
    out = tmp_path / "file"
    out.write_text("mine")
    line = one_error_line(train(cli, out))
    assert "exists and is not a folder" in line
    assert out.read_text() == "mine"


@pytest.mark.parametrize("args, words", [
    (["--duel-games", "100000000000000000"], "--duel-games must be a whole number from 4"),
    (["--games", "100000000"], "--games must be a whole number of teacher games from 10 to"),
    (["--seed", str(2**63 - 1)], "--seed must be a whole number from 0 to 2**63-2"),
])
def test_i51_train_sizes_are_refused_before_any_teacher_game(tmp_path, cli, args, words):
    out = tmp_path / "t"
    line = one_error_line(cli.invoke(main, ["train", *TINY, *args, "--out", str(out), "-q"]))
    assert words in line
    assert not out.exists()


def test_i51_a_training_refused_once_started_leaves_no_empty_folder(tmp_path, cli, monkeypatch):
    from evora_sim.experiments import train_runs as T

    def refused(*args, **kw):
        raise RunError("refused for the test")

    monkeypatch.setattr(T, "teacher_games", refused)
    out = tmp_path / "new" / "t"
    assert "refused for the test" in one_error_line(train(cli, out))
    assert not (tmp_path / "new").exists()


# ---------------------------------------------------------------------------------------------
# what the tool writes is escaped for where it goes
# ---------------------------------------------------------------------------------------------
def test_i51_a_control_character_in_the_command_leaves_the_weight_file_valid_toml(tmp_path):
    from evora_sim.experiments.train_runs import read_weights, write_weights

    plan = type("P", (), {"players": 2, "rules": load_rules()})()
    made_by = "evora train --out 'a\x01b\x7fc\rd\\e\"f\udcff' \t end"
    write_weights(tmp_path, plan, tuple(np.zeros(77)), made_by, "desc\x1b[31m")
    doc = tomllib.loads((tmp_path / "expert.toml").read_text(encoding="utf-8"))
    assert doc["expert"]["made_by"] == "2 players: " + made_by.replace("\udcff", "\ufffd")
    assert read_weights(tmp_path, RunError).for_players(2) is not None


def test_i51_a_rules_file_header_with_control_characters_reads_back():
    from evora_sim.rules import partial_toml

    rules = load_rules(overrides=("white_stone.vp=6",))
    text = partial_toml(rules, "made by evora balance --out 'x\x01y\x7f'\nsecond line")
    assert tomllib.loads(text)["white_stone"]["vp"] == 6


def _prose(md: str) -> str:
    """Markdown with its fenced blocks and code spans removed (they show text as it is)."""
    md = re.sub(r"(?ms)^(`{3,})\w*$.*?^\1$", "", md)
    return re.sub(r"(`+) .*? \1", "", md)


@pytest.fixture(scope="module")
def explained(made, tmp_path_factory):
    """An explanation of a run whose folder's name holds a backtick and HTML, played once."""
    root = tmp_path_factory.mktemp("explained")
    from click.testing import CliRunner

    run = copy_run(made, root / "r`x<img src=x onerror=alert(1)>")
    out = root / "why"
    args = ["explain", str(run), "--seeds", "10", "--jobs", "1", "-q", "--out", str(out)]
    argv, sys.argv = sys.argv, ["evora", *args]            # the command the report records, as a user typed it
    try:
        result = CliRunner().invoke(main, args)
    finally:
        sys.argv = argv
    assert result.exit_code == 0, result.output
    return root, run, out


def test_i51_explain_report_shows_the_run_folders_name_as_text(explained):
    root, run, out = explained
    md = (out / "summary" / "report.md").read_text(encoding="utf-8")
    command = next(line for line in md.splitlines() if line.startswith("Command: "))
    assert command.startswith("Command: `` ") and command.endswith(" ``")      # a span its backtick cannot close
    assert "<img" not in _prose(md)


def test_i51_an_explain_folder_moved_with_its_run_resumes(explained, tmp_path, cli):
    root, run, out = explained
    moved = Path(shutil.copytree(root, tmp_path / "moved", symlinks=True))
    arms = {p: p.stat().st_mtime_ns for p in (moved / "why" / "arms").rglob("*.parquet")}
    again = cli.invoke(main, ["explain", str(moved / run.name), "--seeds", "10", "--jobs", "1", "-q",
                              "--out", str(moved / "why")])
    assert again.exit_code == 0, again.output
    assert {p: p.stat().st_mtime_ns for p in (moved / "why" / "arms").rglob("*.parquet")} == arms
    doc = json.loads((moved / "why" / "search.json").read_text())
    assert not Path(doc["config"]["run"]).is_absolute()


# ---------------------------------------------------------------------------------------------
# what is read back: every value checked against what the game can produce, before any work
# ---------------------------------------------------------------------------------------------
def rewrite_column(run: Path, table: str, column: str, value) -> None:
    """Chunk 0's ``column`` of ``table`` set to ``value`` in every row, the manifest's checksums
    rewritten to match (as whoever edits a folder can)."""
    f = chunk_file(run, table, 0)
    data = pq.read_table(f)
    i = data.column_names.index(column)
    if pa.types.is_dictionary(data.schema.field(column).type):
        col = pa.array([value] * len(data)).dictionary_encode()
    else:
        col = pa.array([value] * len(data), type=data.schema.field(column).type)
    pq.write_table(data.set_column(i, column, col), f)
    m = json.loads((run / MANIFEST).read_text())
    m["chunk_files"]["0"][table] = file_record(f.read_bytes())
    (run / MANIFEST).write_text(json.dumps(m))


@pytest.mark.parametrize("command, table, column, value", [
    *(("explain", *case) for case in [("games", "leader_at_trigger", 99), ("games", "winner_seat", 99),
                                      ("games", "trigger_seat", -5), ("seats", "leader_before_final_turn", 7),
                                      ("games", "decided_by", "luck")]),
    # the report reads the winner from the seats' table, so these are the games' columns it reads
    *(("report", *case) for case in [("games", "leader_at_trigger", 99), ("games", "decided_by", "luck"),
                                     ("seats", "rank", 0)]),
])
def test_i51_a_value_no_game_can_produce_is_refused_before_any_work(made, tmp_path, cli, command, table, column,
                                                                    value):
    run = copy_run(made, tmp_path / "run")
    rewrite_column(run, table, column, value)
    out = tmp_path / "out"
    args = ["explain", str(run), "--seeds", "10", "--jobs", "1", "-q"] if command == "explain" else ["report", str(run)]
    line = one_error_line(cli.invoke(main, [*args, "--out", str(out)]))
    assert f"{column} = {value!r}" in line if isinstance(value, str) else f"{column} = {value}" in line
    assert "chunk 0" in line
    assert not out.exists()


def test_i51_resume_plays_a_chunk_holding_impossible_values_again(made, tmp_path, cli):
    run = copy_run(made, tmp_path / "run")
    rewrite_column(run, "games", "leader_at_trigger", 99)
    result = cli.invoke(main, ["simulate", "-n", "2", "--seeds", "12", "--strategies", RUN["strategies"], "--seed", "5",
                               "--chunk-size", "6", "--jobs", "1", "--out", str(run), "-q", "--no-seat-rotation"])
    assert result.exit_code == 0, result.output
    assert "chunk 0 is damaged" in result.stderr and "leader_at_trigger = 99" in result.stderr
    assert chunk_file(run, "games", 0).read_bytes() == chunk_file(made, "games", 0).read_bytes()


def test_i51_an_expert_run_is_the_built_in_expert_by_its_recorded_weights(tmp_path, cli):
    base = tmp_path / "p2"
    simulate(2, 12, "balanced,greedy", seed=3, out=base, seat_rotation=True)
    expert = tmp_path / "e2"
    simulate(2, 12, "expert", seed=3, out=expert)
    m = json.loads((expert / MANIFEST).read_text())
    info = m["config"]["resolved_strategies"]["expert"]
    info["players"] = {n: [float("nan")] * len(w) for n, w in info["players"].items()}
    (expert / MANIFEST).write_text(json.dumps(m))
    line = one_error_line(cli.invoke(main, ["report", str(base), "--expert-run", str(expert),
                                            "--out", str(tmp_path / "r")]))
    assert "--expert-run" in line and "recorded player" in line
    assert not (tmp_path / "r").exists()


def test_i51_only_the_shipped_weights_are_called_the_built_in_expert():
    from strategies.registry import is_shipped_expert, parse_spec, resolved

    info = resolved(parse_spec("expert"))
    assert is_shipped_expert("expert", json.loads(json.dumps(info)))
    other = json.loads(json.dumps(info))
    other["players"]["2"][0] += 1.0
    assert not is_shipped_expert("expert", other)
    assert not is_shipped_expert("expert(replies=0)", info)


@pytest.mark.parametrize("config", [5, "text", [1, 2], None])
def test_i51_a_search_file_whose_config_is_not_a_table_is_one_line(made, tmp_path, cli, config):
    out = tmp_path / "why"
    out.mkdir()
    (out / "search.json").write_text(json.dumps({"format": "evora-sim search", "version": 1, "kind": "explain",
                                                 "config": config}))
    before = files_in(out)
    line = one_error_line(cli.invoke(main, ["explain", str(made), "--seeds", "10", "--jobs", "1", "-q",
                                            "--out", str(out)]))
    assert "search.json" in line and "config is not a table" in line
    assert files_in(out) == before


def test_i51_a_full_disk_when_the_lock_file_is_written_is_one_line(tmp_path, cli, monkeypatch):
    from evora_sim import runlock

    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(runlock.os, "pwrite", full)
    out = tmp_path / "run"
    line = one_error_line(cli.invoke(main, ["simulate", "-n", "2", "--seeds", "4", "--strategies", "random",
                                            "--jobs", "1", "--out", str(out), "-q"]))
    assert "cannot write its lock file" in line and os.strerror(errno.ENOSPC) in line


# ---------------------------------------------------------------------------------------------
# hang: a Dask run whose workers are gone ends within the limit, whatever it was doing
# ---------------------------------------------------------------------------------------------
class _FetchNeverArrives:
    """A finished chunk whose worker died while its tables were fetched: done, but never here."""

    def __init__(self, key):
        self.key = key

    def add_done_callback(self, callback):
        callback(self)

    def result(self, timeout=None):
        if timeout is None:
            raise AssertionError("a fetch without a time limit can wait forever")
        raise TimeoutError()

    def release(self):
        pass


def test_i51_dask_losing_its_workers_while_a_chunk_is_fetched_ends_and_keeps_what_finished(made, tmp_path, cli,
                                                                                           monkeypatch):
    from evora_sim import runner as R
    from test_untrusted_folders import ClusterLosingItsWorkers, StandInFuture

    class Cluster(ClusterLosingItsWorkers):
        def submit(self, fn, *args, key, pure):
            self.submitted += 1
            return StandInFuture(key, fn, args, done=True) if self.submitted <= self.finish else _FetchNeverArrives(key)

    client = Cluster(finish=1)
    monkeypatch.setattr(R, "connect_scheduler", lambda address, timeout="10s": client)
    monkeypatch.setenv(R.NO_WORKERS_ENV, "0")
    out = tmp_path / "run"
    args = ["simulate", "-n", "2", "--seeds", "12", "--strategies", RUN["strategies"], "--seed", "5", "--chunk-size", "6",
            "--jobs", "1", "--out", str(out), "-q", "--no-seat-rotation", "--backend", "dask", "--scheduler", "tcp://x:1"]
    line = one_error_line(cli.invoke(main, args))
    assert "no workers for 0 s" in line and "finished chunks are kept" in line
    assert client.cancelled
    manifest = json.loads((out / MANIFEST).read_text())
    assert list(manifest["chunks"].values()).count("done") == 1
    assert chunk_file(out, "games", 0).read_bytes() == chunk_file(made, "games", 0).read_bytes()
