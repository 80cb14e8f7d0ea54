"""Which layer should scan a run's Parquet chunks for the report? Times and peak memory of one
representative aggregate pass, done four ways over the same run folder.

The pass: win counts per seat, win counts per seed and seat (the per-seed array fairness needs),
and the card-use x win cells (per card, seed group, strategy and seat: the seats that played the
card and their wins), which joins the cards table to the seats table, the costliest thing the
report asks for. Each way runs in its own process, so its peak memory is its own.

    python scripts/bench_scan.py /work/runs/p4_field_1m
    python scripts/bench_scan.py RUN --ways pyarrow,duckdb

Ways: ``pyarrow`` (pyarrow.parquet per chunk file, numpy bincounts; the seat row of a card row is
found by position, since a chunk's games are contiguous), ``dataset`` (the same through
pyarrow.dataset fragments), ``duckdb`` (SQL over the files, the join a hash join), ``dask``
(dask.dataframe, its merge and groupby). Optional ones that are not installed are skipped.
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

GROUPS = 2000


def _manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def _files(run: Path, table: str) -> list[Path]:
    return sorted((run / table).glob("*.parquet"))


def way_pyarrow(run: Path, dataset: bool = False) -> dict:
    import numpy as np
    import pyarrow.parquet as pq

    cfg = _manifest(run)["config"]
    n, rot = cfg["players"], cfg["players"] if cfg["seat_rotation"] else 1
    seeds = cfg["games"]
    wins_seat = np.zeros(n, np.int64)
    per_seed = np.zeros((seeds, n), np.uint8)
    strategies = sorted(set(cfg["strategies"]))
    cells = np.zeros(16 * GROUPS * len(strategies) * n, np.int64)
    cell_wins = np.zeros_like(cells)
    if dataset:
        import pyarrow.dataset as ds

        seat_frags = list(ds.dataset(run / "seats", format="parquet").get_fragments())
        card_frags = list(ds.dataset(run / "cards", format="parquet").get_fragments())
        pairs = [(s.to_table(columns=["game_id", "seat", "strategy", "win"]),
                  c.to_table(columns=["game_id", "seat", "card", "plays"]))
                 for s, c in zip(sorted(seat_frags, key=lambda f: f.path), sorted(card_frags, key=lambda f: f.path))]
    else:
        pairs = ((pq.read_table(s, columns=["game_id", "seat", "strategy", "win"]),
                  pq.read_table(c, columns=["game_id", "seat", "card", "plays"]))
                 for s, c in zip(_files(run, "seats"), _files(run, "cards")))
    for seats, cards in pairs:
        gid = seats["game_id"].to_numpy()
        seat = seats["seat"].to_numpy().astype(np.int64)
        win = seats["win"].to_numpy(zero_copy_only=False)
        strat = seats["strategy"].combine_chunks()
        names = strat.dictionary.to_pylist()
        code = np.array([strategies.index(x) for x in names])[strat.indices.to_numpy()]
        wins_seat += np.bincount(seat, weights=win, minlength=n).astype(np.int64)
        seed = gid // rot
        first = int(seed.min())
        block = np.bincount((seed - first) * n + seat, weights=win, minlength=(int(seed.max()) - first + 1) * n)
        per_seed[first:first + len(block) // n] += block.reshape(-1, n).astype(np.uint8)
        lo = int(gid.min())
        pos = np.empty(len(gid) // n, np.int64)          # seat rows come in blocks of n per game
        pos[gid[::n] - lo] = np.arange(len(gid) // n)
        cell = (seed % GROUPS) * len(strategies) * n + code * n + seat
        cgid = cards["game_id"].to_numpy()
        row = pos[cgid - lo] * n + cards["seat"].to_numpy().astype(np.int64)
        used = cards["plays"].to_numpy() > 0
        card = cards["card"].combine_chunks().indices.to_numpy().astype(np.int64)
        key = card[used] * (GROUPS * len(strategies) * n) + cell[row[used]]
        width = len(cells)
        cells += np.bincount(key, minlength=width)
        cell_wins += np.bincount(key, weights=win[row[used]], minlength=width).astype(np.int64)
    return {"wins": wins_seat.tolist(), "seed_rows": int(per_seed.shape[0]), "cells": int(cells.sum()),
            "cell_wins": int(cell_wins.sum())}


def way_duckdb(run: Path) -> dict:
    import duckdb

    cfg = _manifest(run)["config"]
    n, rot = cfg["players"], cfg["players"] if cfg["seat_rotation"] else 1
    con = duckdb.connect()
    seats = f"read_parquet('{run}/seats/*.parquet')"
    cards = f"read_parquet('{run}/cards/*.parquet')"
    wins = con.execute(f"SELECT seat, sum(win::INT) FROM {seats} GROUP BY seat ORDER BY seat").fetchall()
    per_seed = con.execute(f"SELECT game_id // {rot} AS s, seat, sum(win::INT) AS w FROM {seats} "
                           "GROUP BY ALL").fetchnumpy()
    cells = con.execute(
        f"SELECT c.card, (s.game_id // {rot}) % {GROUPS} AS g, s.strategy, s.seat, count(*) AS m, "
        f"sum(s.win::INT) AS w FROM {cards} c JOIN {seats} s ON c.game_id = s.game_id AND c.seat = s.seat "
        "WHERE c.plays > 0 GROUP BY ALL").fetchnumpy()
    return {"wins": [int(w) for _, w in wins], "seed_rows": int(len(per_seed["s"]) // n),
            "cells": int(cells["m"].sum()), "cell_wins": int(cells["w"].sum())}


def way_dask(run: Path) -> dict:
    import dask
    import dask.dataframe as dd

    dask.config.set(scheduler="threads")
    cfg = _manifest(run)["config"]
    n, rot = cfg["players"], cfg["players"] if cfg["seat_rotation"] else 1
    seats = dd.read_parquet(str(run / "seats"), columns=["game_id", "seat", "strategy", "win"])
    cards = dd.read_parquet(str(run / "cards"), columns=["game_id", "seat", "card", "plays"])
    seats = seats.assign(win=seats["win"].astype("int64"), s=seats["game_id"] // rot)
    wins = seats.groupby("seat")["win"].sum().compute().sort_index()
    per_seed = seats.groupby(["s", "seat"])["win"].sum().compute()
    used = cards[cards["plays"] > 0]
    joined = used.merge(seats, on=["game_id", "seat"])
    joined = joined.assign(g=joined["s"] % GROUPS)
    cells = joined.groupby(["card", "g", "strategy", "seat"], observed=True)["win"].agg(["count", "sum"]).compute()
    return {"wins": [int(x) for x in wins], "seed_rows": int(len(per_seed) // n),
            "cells": int(cells["count"].sum()), "cell_wins": int(cells["sum"].sum())}


WAYS = {"pyarrow": way_pyarrow, "dataset": lambda run: way_pyarrow(run, dataset=True),
        "duckdb": way_duckdb, "dask": way_dask}


def child(way: str, run: Path) -> None:
    t0 = time.perf_counter()
    try:
        out = WAYS[way](run)
    except ImportError as exc:
        print(json.dumps({"skipped": str(exc)}))
        return
    out["seconds"] = time.perf_counter() - t0
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--ways", default="pyarrow,dataset,duckdb,dask")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.run)
        return
    results = {}
    for way in args.ways.split(","):
        proc = subprocess.run([sys.executable, __file__, str(args.run), "--child", way],
                              capture_output=True, text=True)
        if proc.returncode:
            print(f"{way:8s} failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}")
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if "skipped" in res:
            print(f"{way:8s} skipped ({res['skipped']})")
            continue
        results[way] = res
        print(f"{way:8s} {res['seconds']:7.1f} s  peak {res['peak_mb']:7.0f} MB  "
              f"(seat wins {res['wins']}, {res['cells']:,} card-use cells)")
    answers = {json.dumps({k: v for k, v in r.items() if k not in ("seconds", "peak_mb")}) for r in results.values()}
    print("the ways agree" if len(answers) == 1 else "THE WAYS DISAGREE")


if __name__ == "__main__":
    main()
