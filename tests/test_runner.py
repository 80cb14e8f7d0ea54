"""The experiment runner: `evora simulate` and `evora_sim.runner.simulate`.

Seeds independent of chunking, jobs and backend; seat rotation; the table schemas; the
manifest; resuming after a deleted chunk, a chunk marked missing, a killed process or a full
disk; leftover temporary files; refused folders and schedulers (exit 2, nothing touched); a
Dask LocalCluster giving the local results game for game; the progress bar.
"""
from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from evora_sim import __version__
from evora_sim import layout as L
from evora_sim import runner as R
from evora_sim.cli import main
from evora_sim.rules import load_rules
from evora_sim.runner import Execution, RunError, RunFailed, RunResult, open_run, simulate
from evora_sim.seeds import game_seeds
from strategies.builtin import BUILTINS
from strategies.compiled import FEATURES
from strategies.registry import STRATEGY_IDS
from cli_results import evora_command, one_error_line

RULES = load_rules()

# the reference run: 3 chunks of 100 seeds, one greedy seat
REF = dict(players=4, games=300, strategies="greedy,random,random,random", seed=5, chunk_size=100,
           seat_rotation=False)

GAMES_COLUMNS = ["game_id", "seed", "n_players", "rotation", "rounds", "turns", "end_trigger",
                 "winner_seat", "lead_changes", "comeback", "winner_led_from", "decided_last_round",
                 "trigger_seat", "trigger_turn", "leader_at_trigger", "decided_by"]
SEATS_COLUMNS = ["game_id", "seat", "strategy", "score", "rank", "win", "vp_build", "vp_white",
                 "vp_empty_stack", "vp_cards", "vp_emperor", "vp_column_majority", "vp_height_1",
                 "vp_height_2", "vp_height_3", "vp_height_4", "vp_capitals", "parts_left",
                 "score_at_trigger", "leader_before_final_turn", "turns_leading"]
CARDS_COLUMNS = ["game_id", "seat", "card", "plays", "vp", "temple_uses", "plays_leading", "plays_final_round",
                 "play_round_sum"]
SPACES_COLUMNS = ["game_id", "seat", "space", "uses"]
BREAKDOWN = SEATS_COLUMNS[6:17]
SORT_KEYS = {"games": ["game_id"], "seats": ["game_id", "seat"],
             "cards": ["game_id", "seat", "card"], "spaces": ["game_id", "seat", "space"]}
TABLES = tuple(SORT_KEYS)


def sorted_tables(result: RunResult) -> dict[str, pd.DataFrame]:
    out = {}
    for name, keys in SORT_KEYS.items():
        df = result.table(name)
        out[name] = df.sort_values(keys, kind="stable").reset_index(drop=True)
    return out


def assert_same_tables(a: RunResult, b: RunResult) -> None:
    ta, tb = sorted_tables(a), sorted_tables(b)
    for name in TABLES:
        pd.testing.assert_frame_equal(ta[name], tb[name], check_categorical=True, obj=name)


def folder_state(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file below ``folder``: (size, mtime_ns)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def chunk_mtimes(folder: Path, k: int) -> dict[str, int]:
    return {t: R.chunk_file(folder, t, k).stat().st_mtime_ns for t in TABLES}


def cli_args(out, **kw) -> list[str]:
    cfg = {**REF, **kw}
    args = ["simulate", "--players", str(cfg["players"]), "--games", str(cfg["games"]),
            "--strategies", cfg["strategies"], "--seed", str(cfg["seed"]),
            "--chunk-size", str(cfg["chunk_size"]), "--jobs", "1", "--out", str(out), "--quiet"]
    return args + ([] if cfg["seat_rotation"] else ["--no-seat-rotation"])


def run(out, **kw) -> RunResult:
    """``simulate`` of the reference run with ``kw`` changed; those of ``kw`` that say how it is
    played (``chunk_size``, ``jobs``, ...: :class:`Execution`) go to its ``execution``."""
    cfg = {**REF, **kw}
    how = {k: cfg.pop(k) for k in list(cfg) if k in Execution.__dataclass_fields__}
    return simulate(**cfg, out=out, execution=Execution(**how))


@pytest.fixture(scope="module")
def ref(tmp_path_factory) -> RunResult:
    """The reference run, uninterrupted, jobs=1."""
    return run(tmp_path_factory.mktemp("ref") / "run", jobs=1)


@pytest.fixture
def cli():
    return CliRunner()


# ---------------------------------------------------------------------------------------------
# the Python API and the tables
# ---------------------------------------------------------------------------------------------
def test_simulate_returns_a_result_of_dataframes(ref):
    assert isinstance(ref, RunResult)
    for name in TABLES:
        assert isinstance(getattr(ref, name), pd.DataFrame)
    assert len(ref.games) == REF["games"] and ref.n_games == REF["games"]
    assert len(ref.seats) == REF["games"] * REF["players"]
    # reopening the folder gives the same tables
    assert_same_tables(open_run(ref.out), ref)


def test_table_schemas_are_exactly_as_documented(ref):
    assert list(ref.games.columns) == GAMES_COLUMNS
    assert list(ref.seats.columns) == SEATS_COLUMNS
    assert list(ref.cards.columns) == CARDS_COLUMNS
    assert list(ref.spaces.columns) == SPACES_COLUMNS
    assert set(ref.games["end_trigger"].astype(str)) <= set(L.END_NAMES) - {"none"}
    assert set(ref.cards["card"].astype(str)) <= set(L.EFFECT_NAMES + L.ITILE_NAMES)
    assert (ref.games["n_players"] == REF["players"]).all()
    assert (ref.games["rotation"] == 0).all()
    assert (ref.games["game_id"].sort_values().to_numpy() == np.arange(REF["games"])).all()
    assert ref.games["game_id"].is_unique


def test_ranks_wins_and_scores_are_consistent(ref):
    games, seats = ref.games, ref.seats
    n = REF["players"]
    by_game = seats.sort_values(["game_id", "seat"])
    rank = by_game["rank"].to_numpy().reshape(-1, n)
    assert (np.sort(rank, axis=1) == np.arange(1, n + 1)).all()       # a permutation per game
    assert (seats["win"] == (seats["rank"] == 1)).all()
    assert (seats.groupby("game_id")["win"].sum() == 1).all()
    winners = seats[seats["win"]].set_index("game_id")["seat"]
    winner_seat = games.set_index("game_id")["winner_seat"]
    assert (winners.sort_index() == winner_seat.sort_index()).all()
    # the winner has the most VP (ties: fewer parts left, then the later seat)
    best = seats.groupby("game_id")["score"].transform("max")
    assert (seats.loc[seats["win"], "score"] == best[seats["win"]]).all()
    # the score is the sum of its breakdown
    assert (seats[BREAKDOWN].sum(axis=1) == seats["score"]).all()
    assert (seats["parts_left"] >= 0).all()
    # strategies per seat as given
    names = REF["strategies"].split(",")
    assert (seats["strategy"].astype(str).to_numpy() == np.array(names)[seats["seat"]]).all()
    # card and space rows belong to games of the run and count something
    ids = set(games["game_id"])
    for name in ("cards", "spaces"):
        assert set(getattr(ref, name)["game_id"]) <= ids
    assert (ref.spaces["uses"] > 0).all()
    assert ((ref.cards["plays"] > 0) | (ref.cards["temple_uses"] > 0)).all()
    assert not ref.cards.duplicated(["game_id", "seat", "card"]).any()
    assert not ref.spaces.duplicated(["game_id", "seat", "space"]).any()


def test_manifest_records_the_whole_configuration(ref):
    m = json.loads((ref.out / "manifest.json").read_text(encoding="utf-8"))
    assert m["format"] == R.FORMAT
    greedy = dict(zip(FEATURES, BUILTINS[STRATEGY_IDS["greedy"]].weights))
    resolved = {"greedy": {"kind": "heuristic", "plan": "turn", "weights": greedy}, "random": {"kind": "random"}}
    assert m["config"] == {"players": 4, "games": 300, "strategies": REF["strategies"].split(","),
                           "resolved_strategies": resolved,
                           "seed": 5, "seat_rotation": False, "chunk_size": 100,
                           "rules_hash": RULES.hash}
    assert m["rules_hash"] == RULES.hash
    assert m["rules"] == json.loads(json.dumps(RULES.data))
    assert m["strategies"] == {
        name: {**resolved[name], "id": STRATEGY_IDS[name],
               "description": BUILTINS[STRATEGY_IDS[name]].description}
        for name in ("greedy", "random")}
    assert m["package_version"] == __version__
    assert m["chunks"] == {"0": "done", "1": "done", "2": "done"}
    assert m["config"]["seed"] == 5


# ---------------------------------------------------------------------------------------------
# seeds: independent of chunk size, jobs and backend
# ---------------------------------------------------------------------------------------------
def test_game_seeds_do_not_depend_on_the_split():
    whole = game_seeds(5, 0, 1000)
    parts = np.concatenate([game_seeds(5, a, min(a + 37, 1000)) for a in range(0, 1000, 37)])
    assert (whole == parts).all()
    assert (whole >= 0).all() and len(set(whole.tolist())) == 1000
    assert not (game_seeds(6, 0, 1000) == whole).any()


def test_results_do_not_depend_on_chunk_size_or_jobs(ref, tmp_path):
    assert (ref.games.sort_values("game_id")["seed"].to_numpy() == game_seeds(5, 0, 300)).all()
    other = run(tmp_path / "c70", chunk_size=70, jobs=1)
    assert len(other.manifest["chunks"]) == 5
    assert_same_tables(other, ref)
    par = run(tmp_path / "j2", chunk_size=50, jobs=2)
    assert len(par.manifest["chunks"]) == 6
    assert_same_tables(par, ref)


def test_without_a_chunk_size_every_process_gets_chunks_and_a_resume_keeps_its_own(ref, tmp_path, monkeypatch):
    """A run smaller than the old default chunk (5,000 seeds) came in one chunk, so ``--jobs 2``
    played it on one core and said nothing off a terminal until it ended. Now each process gets
    ``CHUNKS_PER_JOB`` chunks; a folder made with other chunks resumes in its own."""
    monkeypatch.setattr(R, "cores", lambda: 2)
    two = run(tmp_path / "j2", chunk_size=None, jobs=2)
    assert len(two.manifest["chunks"]) == 2 * R.CHUNKS_PER_JOB == 16      # 300 seeds: 19 a chunk
    assert two.manifest["config"]["chunk_size"] == R.jobs_chunk(300, 2) == 19
    assert_same_tables(two, ref)
    one = run(tmp_path / "j1", chunk_size=None, jobs=1)
    assert len(one.manifest["chunks"]) == R.CHUNKS_PER_JOB
    # a run made in one chunk of 300 (as before this change), resumed without a chunk size and
    # with other --jobs: its own chunk, nothing played again
    old = run(tmp_path / "old", chunk_size=300, jobs=1)
    before = folder_state(old.out)
    again = run(tmp_path / "old", chunk_size=None, jobs=2)
    assert again.manifest["config"]["chunk_size"] == 300 and folder_state(old.out) == before


def test_jobs_1_runs_in_this_process(tmp_path, monkeypatch):
    """--jobs 1 must not start worker processes (it used to start one per core)."""
    def no_pool(*a, **k):
        raise AssertionError("a process pool was started for jobs=1")

    monkeypatch.setattr(R, "Parallel", no_pool)
    res = run(tmp_path / "run", games=20, chunk_size=10, jobs=1)
    assert len(res.games) == 20


# ---------------------------------------------------------------------------------------------
# seat rotation
# ---------------------------------------------------------------------------------------------
def test_seat_rotation_plays_each_seed_under_every_rotation(tmp_path):
    spec, n, games = "greedy,random,random", 3, 40
    names = spec.split(",")
    rot = simulate(n, games, spec, seed=3, out=tmp_path / "rot", seat_rotation=True, execution=Execution(chunk_size=15))
    g, s = rot.games, rot.seats
    assert len(g) == games * n and g["game_id"].is_unique
    seeds = game_seeds(3, 0, games)
    index = {int(x): i for i, x in enumerate(seeds)}
    for seed, grp in g.groupby("seed"):
        assert sorted(grp["rotation"]) == list(range(n))
        i = index[int(seed)]
        assert sorted(grp["game_id"]) == [i * n + r for r in range(n)]
    assert ((g["game_id"] % n) == g["rotation"]).all()
    assert (g["seed"].to_numpy() == seeds[g["game_id"].to_numpy() // n]).all()
    # rotation r seats strategy i at seat (i + r) mod n
    merged = s.merge(g[["game_id", "rotation"]], on="game_id")
    expect = np.array(names)[(merged["seat"] - merged["rotation"]) % n]
    assert (merged["strategy"].astype(str).to_numpy() == expect).all()

    # rotation r is exactly a plain run of the rotated strategy list on the same seeds
    for r in range(n):
        rotated = ",".join(names[(seat - r) % n] for seat in range(n))
        plain = simulate(n, games, rotated, seed=3, out=tmp_path / f"plain{r}", seat_rotation=False,
                         execution=Execution(chunk_size=40))
        mine = g[g["rotation"] == r].sort_values("game_id").reset_index(drop=True)
        theirs = plain.games.sort_values("game_id").reset_index(drop=True)
        cols = ["seed", "rounds", "turns", "end_trigger", "winner_seat"]
        pd.testing.assert_frame_equal(mine[cols], theirs[cols])
        my_seats = merged[merged["rotation"] == r].sort_values(["game_id", "seat"])
        their_seats = plain.seats.sort_values(["game_id", "seat"])
        for col in ["score", "rank", "parts_left", *BREAKDOWN]:
            assert (my_seats[col].to_numpy() == their_seats[col].to_numpy()).all(), (r, col)
        assert (my_seats["strategy"].astype(str).to_numpy()
                == their_seats["strategy"].astype(str).to_numpy()).all()


# ---------------------------------------------------------------------------------------------
# nothing lost: resuming
# ---------------------------------------------------------------------------------------------
def _count_plays(monkeypatch) -> list[int]:
    played = []
    original = R.play_chunk

    def counting(config, rules, k, *args):
        played.append(k)
        return original(config, rules, k, *args)

    monkeypatch.setattr(R, "play_chunk", counting)
    return played


def test_rerun_of_a_finished_run_plays_nothing(ref, monkeypatch):
    before = folder_state(ref.out)
    played = _count_plays(monkeypatch)
    again = run(ref.out)
    assert played == []
    assert folder_state(ref.out) == before
    assert_same_tables(again, ref)


def test_resume_replays_only_the_missing_chunks(ref, tmp_path, monkeypatch):
    out = tmp_path / "run"
    run(out)
    R.chunk_file(out, "seats", 1).unlink()                  # a table file gone
    m = json.loads((out / "manifest.json").read_text())
    m["chunks"]["2"] = "missing"                             # a chunk not marked done
    (out / "manifest.json").write_text(json.dumps(m))
    kept = chunk_mtimes(out, 0)
    old2 = chunk_mtimes(out, 2)
    time.sleep(0.01)
    played = _count_plays(monkeypatch)
    res = run(out)
    assert sorted(played) == [1, 2]
    assert chunk_mtimes(out, 0) == kept
    assert all(chunk_mtimes(out, 2)[t] != old2[t] for t in TABLES)
    assert res.manifest["chunks"] == {"0": "done", "1": "done", "2": "done"}
    assert_same_tables(res, ref)
    assert_same_tables(open_run(out), ref)


def test_leftover_temporary_files_never_count(ref, tmp_path, monkeypatch):
    out = tmp_path / "run"
    run(out)
    # a killed write of chunk 1: the final file is gone, a half-written temporary one is left
    R.chunk_file(out, "games", 1).unlink()
    half = R.chunk_file(out, "games", 1).with_name(".chunk-000001.parquet.99999.tmp")
    half.write_bytes(b"PAR1 half a file")
    assert R.missing_chunks(R.read_manifest(out), out) == [1]
    played = _count_plays(monkeypatch)
    res = run(out)
    assert played == [1]
    assert_same_tables(res, ref)

    # a folder holding only a killed first manifest write is an empty folder, not a clash
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / ".manifest.json.12345.tmp").write_text("{")
    res = run(fresh)
    assert_same_tables(res, ref)


def test_full_disk_keeps_finished_chunks_and_the_rerun_completes(ref, tmp_path, monkeypatch, cli):
    out = tmp_path / "run"
    original = R.write_chunk

    def disk_full_at_chunk_1(out_, k, tables):
        if k == 1:
            tmp = R.chunk_file(out_, "games", k).with_name(f".chunk-{k:06d}.parquet.{os.getpid()}.tmp")
            tmp.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(b"PAR1 truncated")
            raise OSError(28, "No space left on device")
        return original(out_, k, tables)

    monkeypatch.setattr(R, "write_chunk", disk_full_at_chunk_1)
    with pytest.raises(RunFailed, match="No space left on device"):
        run(out)
    assert R.read_manifest(out)["chunks"] == {"0": "done", "1": "missing", "2": "missing"}
    # through the command line: one line, exit 2, the finished chunk kept
    line = one_error_line(cli.invoke(main, cli_args(out)))
    assert "No space left on device" in line and "run the same command again" in line
    monkeypatch.setattr(R, "write_chunk", original)
    kept = chunk_mtimes(out, 0)
    res = run(out)
    assert chunk_mtimes(out, 0) == kept
    assert_same_tables(res, ref)


PROGRESS_LINE = re.compile(r"evora: [\d,]+ of [\d,]+ games \(\d+%\), [\d,.]+(e-\d+)? games/s, about .+ left")


def test_a_killed_run_is_completed_by_the_same_command(tmp_path):
    cfg = dict(players=4, games=600, strategies="greedy", seed=11, chunk_size=15)     # 40 chunks
    out = tmp_path / "killed"
    cmd = [*evora_command(), "simulate", "--players", "4", "--games", "600",
           "--strategies", "greedy", "--seed", "11", "--chunk-size", "15", "--jobs", "1",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = 0
    deadline = time.monotonic() + 900          # a bound, not a timing: a cold compile may come first
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            done = sum(v == "done" for v in R.read_manifest(out)["chunks"].values())
        except (OSError, ValueError):
            done = 0
        if done >= 3:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    chunks = R.read_manifest(out)["chunks"]
    finished = [int(k) for k, v in chunks.items() if v == "done"]
    assert 3 <= len(finished) < len(chunks), "the run was not caught part-way"
    truncated = finished.pop(0)                            # and a finished chunk damaged since
    R.chunk_file(out, "seats", truncated).write_bytes(b"")
    kept = {k: chunk_mtimes(out, k) for k in finished}

    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    # not a terminal: no progress bar; one line says the truncated chunk is played again (on a
    # slow machine the resumed run may also print its periodic progress lines: not counted)
    line, = [x for x in again.stderr.strip().splitlines() if not PROGRESS_LINE.fullmatch(x)]
    assert line.startswith(f"evora: run {out}: chunk {truncated} is damaged (seats/chunk-{truncated:06d}"
                           ".parquet has 0 bytes") and line.endswith("played again")
    assert again.stdout.strip() == f"600 games in {out} (tables: games, seats, cards, spaces)"
    assert {k: chunk_mtimes(out, k) for k in finished} == kept
    assert set(R.read_manifest(out)["chunks"].values()) == {"done"}
    whole = run(tmp_path / "whole", **cfg)
    assert_same_tables(open_run(out), whole)


# ---------------------------------------------------------------------------------------------
# refused: exit 2, one line, nothing created or changed
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("change, named", [
    ({"seed": 6}, "seed: 5 -> 6"),
    ({"strategies": "random,greedy,random,random"}, "strategies"),
    ({"games": 400}, "seeds: 300 -> 400"),          # the configuration counts seeds (issue 43)
])
def test_clashing_out_is_refused_and_untouched(ref, cli, change, named):
    before = folder_state(ref.out)
    line = one_error_line(cli.invoke(main, cli_args(ref.out, **change)))
    assert named in line and "different run" in line
    assert folder_state(ref.out) == before


def test_seat_rotation_and_rules_are_part_of_the_configuration(ref, cli, tmp_path):
    before = folder_state(ref.out)
    line = one_error_line(cli.invoke(main, cli_args(ref.out) + ["--seat-rotation"]))
    assert "seat_rotation: False -> True" in line
    rules = tmp_path / "rules.toml"
    rules.write_text("[players]\nmin = 3\n", encoding="utf-8")
    assert load_rules(rules).hash != RULES.hash
    line = one_error_line(cli.invoke(main, cli_args(ref.out) + ["--rules", str(rules)]))
    assert "rules_hash" in line
    assert folder_state(ref.out) == before


def test_non_run_folder_is_refused(tmp_path, cli):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    before = folder_state(out)
    line = one_error_line(cli.invoke(main, cli_args(out)))
    assert "not a run folder" in line
    assert folder_state(out) == before


def test_out_that_is_a_file_is_refused(tmp_path, cli):
    out = tmp_path / "file.txt"
    out.write_text("mine")
    line = one_error_line(cli.invoke(main, cli_args(out)))
    assert "not a folder" in line
    assert out.read_text() == "mine"


def test_unwritable_out_is_refused_and_nothing_created(tmp_path, cli):
    blocker = tmp_path / "file.txt"
    blocker.write_text("mine")
    for out in (blocker / "out", blocker / "deeper" / "out"):
        line = one_error_line(cli.invoke(main, cli_args(out)))
        assert "file.txt" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]
    assert blocker.read_text() == "mine"


def test_read_only_folder_is_refused(tmp_path, cli):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as root: a read-only folder is still writable")
        line = one_error_line(cli.invoke(main, cli_args(ro / "a" / "b")))
        assert "cannot write" in line
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize("args, message", [
    (["--games", "0"], "--games must be a positive whole number"),
    (["--games", "-5"], "--games must be a positive whole number"),
    (["--games", "many"], "many"),
    (["--strategies", "greedy,random"], "2 strategies given for 4 seats"),
    (["--strategies", "greedy,nonesuch,random,random"], "unknown strategy 'nonesuch'"),
    (["--players", "5"], "player count"),
    (["--chunk-size", "0"], "--chunk-size must be a positive whole number"),
    (["--jobs", "0"], "--jobs"),
    (["--backend", "dask"], "--scheduler"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_created(tmp_path, cli, args, message):
    out = tmp_path / "runs" / "x"
    base = cli_args(out)
    for i in range(0, len(args), 2):                       # override the option in place
        j = base.index(args[i]) if args[i] in base else None
        if j is None:
            base += args[i:i + 2]
        else:
            base[j + 1] = args[i + 1]
    line = one_error_line(cli.invoke(main, base))
    assert message in line
    assert list(tmp_path.iterdir()) == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_scheduler_is_exit_2_and_nothing_created(tmp_path, cli, monkeypatch):
    pytest.importorskip("dask.distributed")
    address = f"tcp://127.0.0.1:{_free_port()}"
    out = tmp_path / "runs" / "x"
    with pytest.raises(RunError, match="cannot reach the Dask scheduler"):
        run(out, backend="dask", scheduler=address, scheduler_timeout="1s")
    original = R.connect_scheduler
    monkeypatch.setattr(R, "connect_scheduler", lambda a, timeout="10s": original(a, "1s"))
    t0 = time.monotonic()
    line = one_error_line(cli.invoke(main, cli_args(out) + ["--backend", "dask", "--scheduler", address]))
    assert time.monotonic() - t0 < 8
    assert "cannot reach the Dask scheduler" in line and address in line
    line = one_error_line(cli.invoke(main, cli_args(out) + ["--backend", "dask", "--scheduler", "nonsense"]))
    assert "nonsense" in line
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# beyond one machine: a Dask LocalCluster gives the local results game for game
# ---------------------------------------------------------------------------------------------
def test_dask_cluster_results_equal_the_local_run(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    kw = dict(players=3, games=120, strategies="greedy,random,random", seed=21, chunk_size=20,
              seat_rotation=True)
    local = run(tmp_path / "local", **kw, jobs=1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        remote = run(tmp_path / "dask", **kw, backend="dask", scheduler=cluster.scheduler_address)
        assert set(remote.manifest["chunks"].values()) == {"done"}
        assert_same_tables(remote, local)
        assert len(remote.games) == 360
        # a second run of the same configuration on the same cluster: nothing to do
        again = run(tmp_path / "dask", **kw, backend="dask", scheduler=cluster.scheduler_address)
        assert_same_tables(again, local)

        # two runs at once on one cluster (same rules, other seeds): no task is shared
        from concurrent.futures import ThreadPoolExecutor

        def remote_run(seed):
            return run(tmp_path / f"dask{seed}", **{**kw, "seed": seed}, backend="dask",
                       scheduler=cluster.scheduler_address)

        with ThreadPoolExecutor(2) as pool:
            both = list(pool.map(remote_run, (22, 23)))
    for seed, res in zip((22, 23), both):
        assert_same_tables(res, run(tmp_path / f"local{seed}", **{**kw, "seed": seed}))


# ---------------------------------------------------------------------------------------------
# progress
# ---------------------------------------------------------------------------------------------
class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_only_on_a_terminal_and_not_quiet(tmp_path, monkeypatch):
    pytest.importorskip("tqdm")
    kw = {**REF, "games": 30, "chunk_size": 10}
    for i, (stream, quiet, shown) in enumerate([(_Terminal(), False, True),
                                                (_Terminal(), True, False),
                                                (io.StringIO(), False, False)]):
        monkeypatch.setattr(sys, "stderr", stream)
        run(tmp_path / f"run{i}", **kw, quiet=quiet)
        text = stream.getvalue()
        monkeypatch.undo()
        if shown:
            assert "100%" in text and "30.0/30.0" in text and "game/s" in text, text
        else:
            assert text == ""


def test_cli_quiet_prints_only_the_summary(tmp_path, cli):
    out = tmp_path / "run"
    result = cli.invoke(main, cli_args(out, games=20, chunk_size=10))
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.strip() == f"20 games in {out} (tables: games, seats, cards, spaces)"
    assert open_run(out).n_games == 20


LINE_30 = re.compile(r"evora: [\d,]+ of 30 games \(\d+%\), [\d,.]+(e-\d+)? games/s, about .+ left")


def test_off_a_terminal_long_runs_print_progress_lines(tmp_path, monkeypatch):
    from evora_sim import progress

    monkeypatch.setattr(progress, "PROGRESS_SECONDS", 0.0)     # a line at every slice but the last
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    run(tmp_path / "run", games=30, chunk_size=10, quiet=False)
    monkeypatch.undo()
    lines = stream.getvalue().splitlines()
    assert lines and all(LINE_30.fullmatch(x) for x in lines), lines


def test_a_slow_run_shows_its_rate_not_zero():
    """The search player at 4 players plays about 0.14 games a second on two cores: the progress
    line said "0 games/s". A rate under 10 keeps two significant digits."""
    from evora_sim import progress

    stream = io.StringIO()
    clock = iter([0.0, 60.0])
    lines = progress.Lines(600, 0, interval=1.0, clock=lambda: next(clock), stream=stream)
    lines.update(8)                                      # 8 games in a minute
    assert ", 0.13 games/s, about 74 min left" in stream.getvalue(), stream.getvalue()
    assert [progress.per_second(r) for r in (2345.6, 10.0, 7.46, 0.0)] == ["2,346", "10", "7.5", "0"]


def test_progress_moves_within_a_chunk(tmp_path, monkeypatch):
    """Issue 44: the bar moved only when a 5,000-seed chunk ended. One chunk of 30 seeds must
    report its games slice by slice, in one process and from loky's workers alike, never
    counting a game twice."""
    class Count:
        def __init__(self):
            self.steps = []

        def update(self, n):
            self.steps.append(n)

    for jobs in (1, 2):
        seen = Count()
        run(tmp_path / f"run{jobs}", games=30, chunk_size=30, jobs=jobs, progress=seen)
        moved = [n for n in seen.steps if n]
        assert sum(seen.steps) == 30 and len(moved) > 1, (jobs, seen.steps)


def test_a_chunk_played_in_slices_holds_the_games_of_one_call(tmp_path):
    from evora_sim.runner import make_config, play_chunk

    rules = load_rules()
    config = make_config(3, 7, "greedy,random,balanced", 11, None, 7, rules)
    whole = play_chunk(config, rules, 0)
    sliced = play_chunk(config, rules, 0, on_games=lambda k, n: None)
    for name in whole:
        pd.testing.assert_frame_equal(whole[name].reset_index(drop=True), sliced[name].reset_index(drop=True))


def test_progress_lines_come_at_the_interval_of_the_clock_given():
    """Off a terminal: a line once the clock has moved by the interval, none before; no sleep."""
    from evora_sim.progress import Lines

    now = [0.0]
    stream = io.StringIO()
    lines = Lines(100, 0, interval=15, clock=lambda: now[0], stream=stream)
    for t in (5, 10, 16, 20, 31, 32):
        now[0] = t
        lines.update(10)
    printed = stream.getvalue().splitlines()
    assert len(printed) == 2 and printed[0].startswith("evora: 30 of 100 games (30%)"), printed
    assert printed[1].startswith("evora: 50 of 100 games"), printed


def test_the_parts_compiled_ahead_are_compiled_for_the_types_the_driver_passes():
    """A cold compile builds the turn planner in a second process and the engine's step here,
    ahead of the batch driver, which then loads them from the cache. That saves time only if each
    part is compiled for exactly the argument types the driver calls it with: otherwise the
    driver compiles it again. Whoever filled the cache (the split compile, or the driver alone),
    each part's cache index must hold one entry, for the types ``part_signatures`` gives."""
    from evora_sim import warmup

    warmup.compile_now()
    for name, (function, signature) in warmup.part_signatures().items():
        index = function._cache._cache_file._load_index()
        assert [key[0] for key in index] == [signature], (name, list(index))
    assert set(warmup.PLANNER_PART) | set(warmup.ENGINE_PART) == set(warmup.part_signatures())


@pytest.mark.parametrize("package", ["evora_sim", "analysis"])
def test_a_helper_process_imports_this_copy_even_beside_another(tmp_path, package):
    """README's first run is started in the clone it installed from: the current folder holds a
    second copy of the sources. A helper that imported that copy (``python -c`` puts the current
    folder first on its path) compiled into a numba cache keyed by the other copy's paths, which
    the run never read, so the run compiled it all again alone (measured: about 230 s where the
    split compile takes about 125). Here the current folder holds a decoy of each package the
    helpers import; the child must import this copy's."""
    from evora_sim.this_python import ROOT, python_command

    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    command, env = python_command(f"import {package}; print({package}.__file__)")
    out = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert Path(out.strip()).resolve().parent == Path(ROOT) / package, out


def test_a_cold_compile_is_announced_before_the_bar(tmp_path, monkeypatch):
    """Issue 44: a cold first run showed a bar stuck at 0% for minutes while numba compiled. The
    compile is now said first and done before the bar starts (the cache is faked cold)."""
    from evora_sim import warmup

    events = []
    monkeypatch.setattr(warmup, "compiled", lambda: False)
    monkeypatch.setattr(warmup, "compile_now", lambda: events.append("compiled"))

    class Watch:
        def update(self, n):
            events.append("games")

    run(tmp_path / "run", games=8, chunk_size=8, progress=Watch(), notice=lambda line: events.append(line))
    assert events[0] == warmup.NOTICE and "first run only" in events[0] and events[1] == "compiled", events
    assert set(events[2:]) == {"games"}


def test_a_different_run_is_named_in_a_short_line_even_when_every_weight_changed():
    """Retrained weights differ in nearly every one of their numbers: the refusal names the first
    few by index and counts the rest, instead of printing each player's every weight."""
    from evora_sim.runner import SHOWN_DIFFERENCES, run_differences
    old = {"games": 10, "strategies": {"expert": {"players": {"3": [0.5] * 76 + [100.0]}}}, "seed": 1}
    new = {"games": 20, "strategies": {"expert": {"players": {"3": [0.25] * 76 + [100.0]}}}, "seed": 1}
    line = run_differences(old, new)
    assert line.startswith("seeds: 10 -> 20; strategies.expert.players.3[0]: 0.5 -> 0.25")
    assert line.endswith(f"; and {77 - SHOWN_DIFFERENCES} more") and len(line) < 250
    assert "[76]" not in line and "100.0" not in line
    # a value of another shape is shown cut, never whole
    line = run_differences({"rules": {"k": list(range(200))}}, {"rules": {"k": [1, 2]}})
    assert line == "rules.k: 200 items -> 2 items"
    line = run_differences({"rules": {"k": "x" * 200}}, {"rules": {"k": "y"}})
    assert line.startswith("rules.k: 'xxx") and "..." in line and len(line) < 100
    assert run_differences(old, old) == ""
