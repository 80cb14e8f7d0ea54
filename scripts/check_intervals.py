#!/usr/bin/env python
"""Measure, with more replicates than the test suite affords, how the seat-fairness interval
and test and the card-value tests behave on simulated data (issue 14's acceptance figures).

    python scripts/check_intervals.py [--reps 1000] [--seed 1]
    python scripts/check_intervals.py --unfairness-grid [--reps 4000] [--seed 1]

Prints one line per check: the observed rate over the replicates, its Monte-Carlo standard
error, and what it should be. The data generators are the test suite's
(tests/test_fairness.py, tests/test_analysis.py), so the figures are about the same methods
the tests check, with tighter Monte-Carlo error. Takes a few minutes on 2 cores.

``--unfairness-grid`` prints instead the seat-unfairness interval's coverage and width in every
cell of 2, 3 and 4 players x three patterns of unfair seats x 0 to 30 points x 30 to 20,000
seeds (issue 50: 93% to 97% in every cell; from 2,000 seeds on, no wider than 1.5 times the
estimate's own 95% spread), and a summary line.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from analysis import fairness as F  # noqa: E402
from analysis import stats as S  # noqa: E402
from analysis import tables as T  # noqa: E402
from test_analysis import placebo_cards, synthetic_seats  # noqa: E402
from test_fairness import (SHAPES, SPIKE, draw, interval_calibration, paired_draw, seat_rates, seed_cov,  # noqa: E402
                           shuffle_labels, true_rms, unfair_rates)


def line(name: str, hits: int, reps: int, target: str) -> None:
    rate = hits / reps
    se = np.sqrt(rate * (1 - rate) / reps)
    print(f"{name}: {rate:.3f} (Monte-Carlo se {se:.3f}, {reps} replicates; should be {target})", flush=True)


def unfairness_grid(rng, reps: int) -> None:
    """The seat-unfairness interval in every cell of the grid (see the module)."""
    effects = (0.0, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3)
    covers, widths, outside = [], [], []
    for n in (2, 3, 4):
        for shape in SHAPES if n > 2 else ["one seat ahead"]:
            for effect in effects:
                p = unfair_rates(n, shape, effect)
                if p is None or (effect == 0 and shape != "one seat ahead"):
                    continue
                for seeds in (30, 100, 300, 2000, 20_000):
                    r = interval_calibration(rng, n, p, seeds, reps)
                    covers.append(r["cover"])
                    if seeds >= 2000:
                        widths.append(r["width"])
                    flag = not 0.93 <= r["cover"] <= 0.97 or (seeds >= 2000 and r["width"] > 1.5)
                    outside += [flag]
                    print(f"{n} players, {shape}, unfairness {100 * effect:g} pts, {seeds:,} seeds: covers "
                          f"{r['cover']:.3f} (truth below it {r['below']:.3f}, above {r['above']:.3f}); width "
                          f"{r['width']:.2f} x the estimate's 95% spread{'  <-- outside' if flag else ''}", flush=True)
    se = np.sqrt(0.95 * 0.05 / reps)
    print(f"{len(covers)} cells, {reps} runs each (Monte-Carlo se {se:.4f}): coverage {min(covers):.3f} to "
          f"{max(covers):.3f}, {sum(outside)} cells outside 93-97% or wider than 1.5 x; width from 2,000 seeds "
          f"{min(widths):.2f} to {max(widths):.2f} x the estimate's 95% spread")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--unfairness-grid", action="store_true",
                    help="the seat-unfairness interval over the full grid of players, unfairness and seeds")
    args = ap.parse_args()
    if args.reps < 10:
        ap.error(f"--reps must be at least 10, got {args.reps}")
    rng = np.random.default_rng(args.seed)
    reps = args.reps
    if args.unfairness_grid:
        unfairness_grid(rng, reps)
        return

    for n, games, base in ((4, 4, [0.28, 0.26, 0.24, 0.22]), (2, 2, [0.56, 0.44])):
        hits = sum(F.seat_fairness(shuffle_labels(rng, draw(rng, 3000, games, base))).rms_lo == 0
                   for _ in range(reps))
        line(f"{n} players, shuffled labels (true unfairness 0), 3,000 seeds: interval covers 0",
             hits, reps, "0.95")

    for spread, spike in ((0.0025, 0.0), (0.005, 0.0), (0.01, 0.0), (0.005, 0.08)):
        p = seat_rates(spread)
        truth = true_rms(p)
        hits = 0
        for _ in range(reps):
            f = F.seat_fairness(draw(rng, 10_000, 4, p, spike, SPIKE))
            hits += f.rms_lo <= truth <= f.rms_hi
        how = "lopsided seed covariance" if spike else "independent games"
        line(f"4 players, planted {100 * spread:g}-point spread (RMS {100 * truth:.3f} points), 10,000 seeds, "
             f"{how}: interval covers the truth", hits, reps, "0.95 or more")

    for spike in (0.0, 0.08):
        p = seat_rates(0.005)
        expected = F.fairness_power(p - 0.25, seed_cov(p, 4, spike, SPIKE), 20_000)
        hits = sum(F.seat_fairness(draw(rng, 20_000, 4, p, spike, SPIKE)).p < S.ALPHA for _ in range(reps))
        line(f"4 players, planted 0.5-point spread, 20,000 seeds x 4 games, spike {spike}: 'all fair' rejected",
             hits, reps, f"the computed power {expected:.3f}")

    ours = naive = 0
    for _ in range(reps):
        tilt = shuffle_labels(rng, np.tile(SPIKE, (2000, 1)))
        wins = draw(rng, 2000, 8, np.full(4, 0.25), spike=0.3, direction=tilt)
        ours += F.seat_fairness(wins).p < S.ALPHA
        naive += S.chi_square_uniform(wins.sum(axis=0))[1] < S.ALPHA
    line("fair seats, seeds with design effect ~1.8: 'all fair' rejected, seeds as units", ours, reps, "0.05")
    line("  the same, games as independent (Pearson chi-square)", naive, reps, "0.05 (it is not)")

    for sa, sb in ((0.0, 0.0), (0.01, 0.01), (0.01, 0.0)):
        two = fairer = 0
        for _ in range(reps):
            wa, wb = paired_draw(rng, 5000, 4, seat_rates(sa), seat_rates(sb))
            c = F.compare_fairness(wa, wb, paired=True)
            two += c.p < S.ALPHA
            fairer += c.b_fairer
        target = "0.05 or less" if sa == sb else "as high as possible"
        line(f"paired, A spread {100 * sa:g} pts vs B {100 * sb:g} pts, 5,000 seeds: 'B fairer' at 5%",
             fairer, reps, target)

    reports, cards = max(reps // 10, 10), 16
    raw = adjusted = flagged = 0
    for r in range(reports):
        seats = synthetic_seats(2, 2000, strategies=["a", "b"], strength={"a": 0.55, "b": 0.45},
                                seed=int(rng.integers(1 << 31)))
        t = T.exposure_table(T.frame_stats(seats, uses={"cards": placebo_cards(rng, seats, 2, cards)}), "cards",
                             [f"fake{c}" for c in range(cards)])
        raw += int((t["p_raw"] < S.ALPHA).sum())
        adjusted += int((t["p_adj"] < S.ALPHA).sum())
        flagged += bool(t["significant"].any())
    line("placebo card, 2 players, 2,000 games: raw difference p < 0.05", raw, reports * cards, "0.05")
    line("placebo card, 2 players, 2,000 games: adjusted (logistic) p < 0.05", adjusted, reports * cards, "0.05")
    line("placebo cards: reports with any Holm-significant card of 16", flagged, reports, "0.05 or less")


if __name__ == "__main__":
    main()
