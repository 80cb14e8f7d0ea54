"""The streaming analysis (one pass, block by block, into sufficient statistics) gives the same
numbers as the in-memory analysis it replaced (tests/inmemory_oracle.py), on real runs: whole,
compacted into parts, and with a chunk gone (``--allow-partial``). Also: compaction keeps resume
intact, and a table too large for a DataFrame is refused in one line.

The acceptance check: the report's tables of a large four-player run equal the in-memory
analysis'. The issue's size, 200,000 games, is ``EVORA_ORACLE_SEEDS=50000`` (x 4 rotations); the
suite plays 10,000 x 4, which still spans ten chunks and many Parquet row groups, because the
200,000 games alone took a tenth of the suite's time. The other checks use small runs."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pandas as pd
import pytest

import analysis.tables as T
import analysis.variants as V
import inmemory_oracle as O
from evora_sim.compact import compact
from evora_sim.manifest import chunk_file, forget_chunks, read_manifest, write_manifest
from evora_sim.runner import Execution, RunError, TableTooLarge, open_run, simulate

GAMES4 = 1200                  # seeds of the small four-player run (x 4 rotations)
ACCEPTANCE_SEEDS = int(os.environ.get("EVORA_ORACLE_SEEDS", "10000"))


def same(a: pd.DataFrame, b: pd.DataFrame, what: str) -> None:
    a, b = a.reset_index(drop=True), b.reset_index(drop=True)
    assert list(a.columns) == list(b.columns), what
    for col in a.columns:
        x, y = a[col], b[col]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y) and not (
                pd.api.types.is_bool_dtype(x) or pd.api.types.is_bool_dtype(y)):
            np.testing.assert_allclose(x.to_numpy(float), y.to_numpy(float), rtol=1e-9, atol=1e-12,
                                       equal_nan=True, err_msg=f"{what}: {col}")
        else:
            assert list(x.astype(str)) == list(y.astype(str)), f"{what}: {col}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("stream")
    a = simulate(4, GAMES4, "greedy(plan=action),random,majority,random", seed=5, out=base / "p4", compact=False,
                 execution=Execution(chunk_size=max(GAMES4 // 6, 1), command="test p4"))
    b = simulate(2, 400, "greedy(plan=action),random", seed=6, out=base / "p2", compact=False,
                 execution=Execution(chunk_size=100, command="test p2"))
    return base, [a.out, b.out]


@pytest.fixture(scope="module")
def acceptance_run(tmp_path_factory):
    """Four-player games of cheap players (one-decision planners and random): 40,000 in the
    suite, 200,000 with the issue's EVORA_ORACLE_SEEDS=50000."""
    out = tmp_path_factory.mktemp("acceptance") / "p4"
    return simulate(4, ACCEPTANCE_SEEDS, "greedy(plan=action),random,majority(plan=action),random", seed=7,
                    out=out, compact=False,
                    execution=Execution(chunk_size=max(ACCEPTANCE_SEEDS // 10, 1), command="test acceptance")).out


def check_against_oracle(paths, allow_partial=False):
    runs = T.open_runs(paths, allow_partial=allow_partial)
    data = T.scan(runs)
    old = O.load(runs)
    seats = old.seats
    new_adv, new_tests = T.seat_advantage(data)
    old_adv, old_tests = O.seat_advantage(seats)
    same(new_adv, old_adv, "seat_advantage")
    same(new_tests, old_tests, "seat tests")
    for name in ("strategy_win_rates", "matchups", "vp_by_category", "majority_share", "victory_margin"):
        same(getattr(T, name)(data), getattr(O, name)(seats), name)
    same(T.ratings(data, n_boot=50), O.ratings(seats, n_boot=50), "ratings")
    for name in ("card_value", "space_value", "majority_outcomes", "columns_held", "game_shape",
                 "end_triggers", "tension"):
        same(getattr(T, name)(data), getattr(O, name)(old), name)
    for n, grp in O.by_player_count(seats):
        np.testing.assert_array_equal(T.seed_wins(data, n), O.seed_wins(grp, n))
        axis, counts = T.score_distribution(data)[n]
        old_axis, old_counts = O.score_distribution(seats)[n]
        keep = counts.sum(axis=0) > 0
        assert (axis[keep] == old_axis[old_counts.sum(axis=0) > 0]).all()
        margins = T.victory_margins(data)[n]
        np.testing.assert_array_equal(np.repeat(margins.axis, margins.counts[0]),
                                      np.sort(O.victory_margins(seats)[n]))
    for run in runs:
        same(V.run_metrics(V.game_data(run)), O.run_metrics(run), f"run_metrics {run.out}")
    return runs


def test_the_report_numbers_equal_the_in_memory_analysis(runs, acceptance_run):
    check_against_oracle([acceptance_run, runs[1][1]])


def test_the_small_runs_numbers_equal_the_in_memory_analysis(runs):
    check_against_oracle(runs[1])


def test_compare_equals_the_in_memory_analysis(runs):
    base, (p4, _) = runs
    # the same seeds with another field: paired by seed (a run compared with an identical one
    # has no variation at all, where rounding decides between p = 1 and "no p")
    other = simulate(4, GAMES4, "greedy(plan=action),random,random,random", seed=5, out=base / "p4b", compact=False,
                     execution=Execution(chunk_size=max(GAMES4 // 4, 1), command="test p4b"))
    a, b = open_run(p4), open_run(other.out)
    new, info = V.compare(V.game_data(a), V.game_data(b))
    assert info["paired"]
    same(new, O.compare(a, b)[0], "compare, paired")
    two = simulate(4, GAMES4 // 2, "greedy(plan=action),random,majority,random", seed=99, out=base / "p4c",
                   compact=False,
                   execution=Execution(chunk_size=max(GAMES4 // 5, 1), command="test p4c"))
    c = open_run(two.out)
    same(V.compare(V.game_data(a), V.game_data(c))[0], O.compare(a, c)[0], "compare, independent")


def test_a_compacted_run_gives_the_same_numbers(runs, tmp_path):
    base, (p4, p2) = runs
    copies = [tmp_path / "p4", tmp_path / "p2"]
    for src, dst in zip((p4, p2), copies):
        shutil.copytree(src, dst)
    per_chunk = max(GAMES4 // 6, 1)
    done = compact(copies[0], row_group_games=2 * per_chunk, part_games=4 * per_chunk)
    assert done.chunks == len(read_manifest(copies[0])["chunks"]) and len(done.parts) >= 2
    assert not list((copies[0] / "seats").glob("chunk-*.parquet"))
    # the compacted run's numbers equal the oracle's, and the loose run's
    check_against_oracle(copies)
    loose = T.scan(T.open_runs([p4, p2]))
    packed = T.scan(T.open_runs(copies))
    same(T.card_value(packed), T.card_value(loose), "card_value, compacted vs loose")
    same(T.seat_advantage(packed)[0], T.seat_advantage(loose)[0], "seat_advantage, compacted vs loose")
    # the DataFrame API reads parts too
    pd.testing.assert_frame_equal(open_run(copies[0]).seats, open_run(p4).seats)


def test_a_partial_run_gives_the_oracle_numbers(runs, tmp_path):
    base, (p4, p2) = runs
    dst = tmp_path / "p4"
    shutil.copytree(p4, dst)
    for table in ("games", "seats", "cards", "spaces"):
        chunk_file(dst, table, 1).unlink()
    with pytest.raises(RunError, match="incomplete"):
        T.open_runs([dst, p2])
    check_against_oracle([dst, p2], allow_partial=True)


def test_compaction_keeps_resume_intact(tmp_path):
    out = tmp_path / "run"
    simulate(2, 120, "random", seed=2, out=out, compact=False, execution=Execution(chunk_size=20, command="c"))
    whole = open_run(out).seats
    simulate(2, 120, "random", seed=2, out=tmp_path / "half", compact=False,
             execution=Execution(chunk_size=20, command="c"))
    # a run stopped after 3 of 6 chunks, compacted, then resumed, equals the uninterrupted run
    m = read_manifest(tmp_path / "half")
    forget_chunks(m, [3, 4, 5])
    write_manifest(tmp_path / "half", m)
    done = compact(tmp_path / "half")
    assert done.chunks == 3 and done.skipped == {}
    m = read_manifest(tmp_path / "half")
    assert m["version"] == 3 and sorted(m["parts"]["0"]["chunks"]) == [0, 1, 2]
    again = simulate(2, 120, "random", seed=2, out=tmp_path / "half", compact=False,
                     execution=Execution(chunk_size=20, command="c"))
    pd.testing.assert_frame_equal(again.seats, whole)
    # compacting again packs only the loose chunks into a new part; the first part stays
    before = (tmp_path / "half" / "seats" / "part-000000.parquet").read_bytes()
    done = compact(tmp_path / "half")
    assert done.parts == [1] and done.chunks == 3
    assert (tmp_path / "half" / "seats" / "part-000000.parquet").read_bytes() == before
    pd.testing.assert_frame_equal(open_run(tmp_path / "half").seats, whole)
    # a rerun of the finished, compacted run plays nothing and changes nothing
    state = {p: p.read_bytes() for p in (tmp_path / "half").rglob("*.parquet")}
    simulate(2, 120, "random", seed=2, out=tmp_path / "half", execution=Execution(chunk_size=20, command="c"))
    assert {p: p.read_bytes() for p in (tmp_path / "half").rglob("*.parquet")} == state


def test_a_damaged_part_is_named_and_played_again(tmp_path):
    out = tmp_path / "run"
    simulate(2, 60, "random", seed=3, out=out, compact=True, execution=Execution(chunk_size=20, command="c"))
    whole = open_run(out).seats
    part = out / "cards" / "part-000000.parquet"
    raw = bytearray(part.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    part.write_bytes(bytes(raw))
    with pytest.raises(RunError, match=r"part 0 .*cards/part-000000.parquet differs"):
        T.scan(T.open_runs([out]))
    notices = []
    again = simulate(2, 60, "random", seed=3, out=out,
                     execution=Execution(chunk_size=20, command="c", notice=notices.append))
    assert notices and "played again" in notices[0]
    pd.testing.assert_frame_equal(again.seats, whole)


def test_an_interrupted_compaction_leaves_the_chunks_in_charge(tmp_path, monkeypatch):
    import evora_sim.compact as C

    out = tmp_path / "run"
    simulate(2, 60, "random", seed=4, out=out, compact=False, execution=Execution(chunk_size=20, command="c"))
    whole = open_run(out).seats

    def crash(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(C, "write_manifest", crash)
    with pytest.raises(KeyboardInterrupt):
        compact(out)
    monkeypatch.undo()
    assert "parts" not in read_manifest(out)
    pd.testing.assert_frame_equal(open_run(out).seats, whole)
    compact(out)              # the leftover part file is removed, the chunks packed afresh
    pd.testing.assert_frame_equal(open_run(out).seats, whole)
    assert sorted(p.name for p in (out / "seats").iterdir()) == ["part-000000.parquet"]


def test_a_table_too_large_for_memory_is_refused_in_one_line(runs, monkeypatch):
    base, (p4, _) = runs
    monkeypatch.setenv("EVORA_TABLE_LIMIT_MB", "0.01")
    run = open_run(p4)
    with pytest.raises(TableTooLarge) as exc:
        run.seats
    msg = str(exc.value)
    assert "\n" not in msg and "dataset('seats')" in msg and "iter_table" in msg
    # the lazy forms still work
    rows = 4 * run.n_games
    assert run.dataset("seats").count_rows() == rows
    assert sum(len(df) for df in run.iter_table("seats", ["win"])) == rows


REPORT_TABLES = ("strategy_win_rates", "matchups", "vp_by_category", "majority_share", "victory_margin",
                 "card_value", "space_value", "majority_outcomes", "columns_held", "game_shape",
                 "end_triggers", "tension")


def test_the_pass_on_a_dask_cluster_equals_the_local_one(runs):
    distributed = pytest.importorskip("dask.distributed")
    base, paths = runs
    opened = T.open_runs(paths)
    here = T.scan(opened)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        there = T.scan(opened, backend="dask", scheduler=cluster.scheduler_address)
        remote_sums = V.game_datas(opened, "dask", cluster.scheduler_address)
    for name in REPORT_TABLES:
        same(getattr(T, name)(there), getattr(T, name)(here), f"{name} on dask")
    same(T.seat_advantage(there)[0], T.seat_advantage(here)[0], "seat_advantage on dask")
    for run, remote in zip(opened, remote_sums):
        same(V.run_metrics(remote), V.run_metrics(V.game_data(run)), "run_metrics on dask")


@pytest.mark.parametrize("rotations, p", [(4, [0.25] * 4), (4, [0.28, 0.24, 0.24, 0.24]), (1, [0.3, 0.2, 0.25, 0.25]),
                                          (2, [0.5, 0.5])])
def test_seat_fairness_from_distinct_rows_equals_the_one_from_every_seed(rotations, p):
    from analysis.fairness import seat_fairness

    wins = np.random.default_rng(rotations).multinomial(rotations, p, size=3000)
    rows, counts = np.unique(wins, axis=0, return_counts=True)
    every, distinct = seat_fairness(wins), seat_fairness(rows, counts=counts)
    for name in ("seats", "seeds", "games", "deviations", "mean_square", "rms", "rms_lo", "rms_hi",
                 "statistic", "df", "p", "design_effect"):
        np.testing.assert_allclose(np.asarray(getattr(distinct, name), float),
                                   np.asarray(getattr(every, name), float), rtol=1e-9, atol=1e-15, err_msg=name)


def test_evora_compact_on_the_command_line(tmp_path):
    from click.testing import CliRunner

    from evora_sim.cli import main
    from cli_results import ok, one_error_line

    out = tmp_path / "run"
    simulate(2, 60, "random", seed=5, out=out, compact=False, execution=Execution(chunk_size=20, command="c"))
    whole = open_run(out).seats
    cli = CliRunner()
    assert "3 chunks packed into 1 new part; 3 -> 1 files per table" in ok(cli.invoke(main, ["compact", str(out)]))
    assert "0 chunks packed" in ok(cli.invoke(main, ["compact", str(out)]))      # nothing left to pack
    pd.testing.assert_frame_equal(open_run(out).seats, whole)
    (tmp_path / "empty").mkdir()
    assert "not a run folder" in one_error_line(cli.invoke(main, ["compact", str(tmp_path / "empty")]))
    assert str(tmp_path / "nowhere") in one_error_line(cli.invoke(main, ["compact", str(tmp_path / "nowhere")]))


def test_evora_report_on_a_dask_cluster_writes_the_local_numbers(runs, tmp_path, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    from click.testing import CliRunner

    from evora_sim.cli import main
    from cli_results import ok, one_error_line

    base, paths = runs
    cli = CliRunner()
    line = one_error_line(cli.invoke(main, ["report", str(paths[1]), "--out", str(tmp_path / "x"),
                                            "--backend", "dask"]))
    assert "--scheduler" in line and not (tmp_path / "x").exists()
    monkeypatch.chdir(base)                  # relative run paths: the workers get absolute ones
    ok(cli.invoke(main, ["report", "p2", "--out", str(tmp_path / "here")]))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        ok(cli.invoke(main, ["report", "p2", "--out", str(tmp_path / "there"), "--backend", "dask",
                             "--scheduler", cluster.scheduler_address]))
    # the same numbers; a float figure may differ in its last digit (partial moments are merged
    # pairwise on the cluster, one block after another here)
    names = sorted(f.name for f in (tmp_path / "here").glob("*.csv"))
    assert names and names == sorted(f.name for f in (tmp_path / "there").glob("*.csv"))
    for name in names:
        same(pd.read_csv(tmp_path / "there" / name), pd.read_csv(tmp_path / "here" / name), name)


@pytest.mark.parametrize("paired", [True, False])
@pytest.mark.parametrize("rotations, pa, pb", [(4, [0.25] * 4, [0.25] * 4), (4, [0.28, 0.24, 0.24, 0.24], [0.25] * 4),
                                               (1, [0.3, 0.2, 0.25, 0.25], [0.25, 0.25, 0.2, 0.3]),
                                               (2, [0.5, 0.5], [0.55, 0.45])])
def test_compare_fairness_on_distinct_rows_equals_the_one_on_every_seed(paired, rotations, pa, pb):
    from analysis.fairness import compare_fairness

    rng = np.random.default_rng(rotations)
    a = rng.multinomial(rotations, pa, size=2000)
    b = rng.multinomial(rotations, pb, size=2000 if paired else 1500)
    if paired:                         # common random numbers: most seeds keep their row
        b = np.where(rng.random((len(a), 1)) < 0.7, a, b)
    new, old = compare_fairness(a, b, paired), O.compare_fairness_every_seed(a, b, paired)
    for name in ("seeds", "diff", "lo", "hi", "p", "p_b_fairer"):
        np.testing.assert_allclose(getattr(new, name), getattr(old, name), rtol=1e-9, atol=1e-15, err_msg=name)
    np.testing.assert_allclose(new.a.rms_hi, old.a.rms_hi, rtol=1e-9)
    # float win counts (as compare's per-seed sums hold them) give the same
    again = compare_fairness(a.astype(float), b.astype(float), paired)
    np.testing.assert_allclose(again.p, new.p, rtol=1e-12)
