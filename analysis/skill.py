"""Findings against skill: the headline figures of runs that form a skill ladder, a verdict per
finding, and the rungs' strength on one scale.

A **ladder** is a list of runs of the same player count, rules, run seed and seeds (common
random numbers: game ``i`` of every rung is dealt the same stacks), each with its seats filled by
one rung's players, weakest first. For each headline figure (every seat's win rate, the seat
unfairness, the strongest cards and spaces, the majorities' share of the score, game length, the
end triggers' shares) :func:`figure_table` gives its value at each rung with its 95% interval,
and :func:`verdicts` says how it moves with skill:

- **grows / shrinks with skill**: the weighted least-squares slope of the figure on the rung's
  place in the ladder (0, 1, 2, ...) is significant. "Grows" means the finding gets larger: its
  effect moves away from "no effect" (a fair share, no difference) going up the ladder; for a
  figure without a "no effect" value (game length, shares) it means the figure rises. The rungs
  are treated as independent; they share their seeds, which correlates their estimates
  positively (the same deals). A correlation shared by every pair of rungs cancels from any
  contrast of them (a slope, a deviation from the mean), so then the true variance is smaller
  than assumed and the tests are conservative.
- **reverses**: the effect is significant in one direction at one rung and in the other at
  another.
- **varies with skill, no trend** (figures without a "no effect" value): no significant trend,
  but the rungs differ (Cochran's heterogeneity test).
- **no difference found between rungs** (figures without a "no effect" value): neither; this
  says no test found a difference, not that there is none.
- **holds at every rung**: significant at every rung, in the same direction, with no trend.
- **some rungs only**: significant at some rungs (in one direction), not at others, no trend.
- **no effect at any rung**: never significant, no trend.

Every test behind a verdict is Holm-corrected in one family: each figure's trend, each
descriptive figure's heterogeneity, and each figure's test at each rung. So a ladder in which
skill changes nothing and nothing has an effect states a finding (any verdict but "no effect at
any rung" and "no difference found between rungs") in at most 5% of ladders, however many
figures and rungs it has (tests/test_skill.py: 2% of simulated eleven-figure, five-rung
ladders; with each rung's test uncorrected across the rungs, 45% stated one).

A figure's test at a rung starts from the p-value its rung's report gives (the seat tests
Holm-corrected over the seats, the seat unfairness's test of "all seats fair", the card and
space effects Holm-corrected over all cards, spaces, so that picking the strongest over the
rungs (below) does not pick noise), which the ladder's family then corrects again.

The strongest cards and spaces are chosen by their mean absolute adjusted effect over all rungs,
so no rung's noise decides alone which findings are followed (the choice inflates every rung's
effect a little, not one rung's).

**Strength on one scale** (:func:`rung_ratings`): 2-player duels between the rungs (each pair
seat-rotated over the same seeds; a rung holding a mixed field plays each of its members in
turn) fitted by Bradley-Terry on the Elo scale, with a bootstrap over seeds, stratified by duel
(seeds resampled within each duel run, as duels are independent experiments). A ladder's rungs
are meant to be far apart, so a weak rung may never beat a strong one, and then no finite rating
fits: half a win is added to both directions of every pair of rungs that met (the usual
small-sample correction), which pulls the ratings together a little and so only makes a step
harder to call significant. A range resting on that correction would be false precision (a
bootstrap over a perfect record resamples the same record): where a rung lost, or won, in few
seeds its range is open on that side, or exact from its record (:func:`analysis.stats.rating_ranges`,
:func:`analysis.stats.step_range`). A step up the ladder is significant when the bootstrap p-value of
"the upper rung is no stronger", Holm-corrected over the steps, is below ``ALPHA``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as sps

from evora_sim.manifest import RunError

from .stats import ALPHA, ELO, bradley_terry, bradley_terry_many, holm, rating_ranges, seed_records, step_range

TOP_CARDS = 3                      # cards, and spaces, followed up the ladder
VERDICTS = ("holds at every rung", "grows with skill", "shrinks with skill", "reverses",
            "varies with skill, no trend", "some rungs only", "no effect at any rung",
            "no difference found between rungs")
QUIET = ("no effect at any rung", "no difference found between rungs")     # verdicts that state no finding


class LadderError(RunError):
    """Runs that cannot be read as a ladder: the message names the problem in one line."""


@dataclass
class DuelRun:
    """One 2-player duel run between two rungs: which strategy name (as the run records it)
    stands for which rung."""

    run: object                    # evora_sim.runner.RunResult
    rung_of: dict                  # strategy name -> rung index


@dataclass
class Ladder:
    labels: list                   # each rung's players, as the user gave them
    runs: list                     # RunResult per rung, weakest first
    duels: list = field(default_factory=list)   # DuelRun
    explained: list = field(default_factory=list)   # per rung: its evora explain summary, or None

    @property
    def fixes(self) -> list:
        """Per rung: the fixes its evora explain ranked, or None."""
        return [s["fixes"] if s is not None else None for s in self.explained]

    @property
    def players(self) -> int:
        return int(self.runs[0].manifest["config"]["players"])


def rung_label(manifest: dict) -> str:
    """A run's players in one phrase: its strategy when every seat holds the same, else the field."""
    names = manifest["config"]["strategies"]
    return names[0] if len(set(names)) == 1 else ",".join(names)


def check_ladder(runs, labels=None) -> Ladder:
    """The runs as a ladder, weakest first, or :class:`LadderError` naming what breaks common
    random numbers: a different player count, run seed, number of seeds or rules."""
    runs = list(runs)
    if len(runs) < 2:
        raise LadderError(f"a skill ladder needs at least two rungs (runs), got {len(runs)}")
    first = runs[0].manifest["config"]
    for r in runs[1:]:
        c = r.manifest["config"]
        for key, what in (("players", "player count"), ("seed", "run seed"), ("games", "number of seeds"),
                          ("rules_hash", "rules")):
            if c[key] != first[key]:
                shown = (f"{first[key]} and {c[key]}" if key != "rules_hash"
                         else f"rules hash {first[key][:12]} and {c[key][:12]}")
                raise LadderError(f"{runs[0].out} and {r.out} cannot be rungs of one ladder: their {what} "
                                  f"differ ({shown}); a ladder plays the same seeds under the same rules")
    return Ladder(list(labels) if labels else [rung_label(r.manifest) for r in runs], runs)


# ---------------------------------------------------------------------------------------------
# the figures at each rung
# ---------------------------------------------------------------------------------------------
def _row(figure, label, kind, null, value, lo, hi, n, significant=None, p=np.nan) -> dict:
    """One figure at one rung; ``significant`` and ``p``: its test as the rung's report gives it."""
    return {"figure": figure, "label": label, "kind": kind, "null": null, "value": float(value),
            "lo": float(lo), "hi": float(hi), "n": int(n),
            "significant": (bool(significant) if significant is not None else None), "p": float(p)}


def rung_figures(data, n: int, min_effect: float) -> tuple[list[dict], pd.DataFrame, pd.DataFrame]:
    """The headline figures of one rung's scan (``analysis.scan``): rows for
    :func:`figure_table`, and the card and space tables (their strongest are chosen over all
    rungs later)."""
    from . import tables as T

    adv, tests = T.seat_advantage(data, min_effect)
    rows = []
    for _, r in adv[adv["n_players"] == n].iterrows():
        seat = int(r["seat"])
        rows.append(_row(f"seat {seat}", f"Seat {seat}{' (first)' if seat == 0 else ''} win rate", "rate",
                         r["fair_share"], r["win_rate"], r["ci_lo"], r["ci_hi"], r["games"], r["significant"],
                         r["p_holm"]))
    t = tests[tests["n_players"] == n].iloc[0]
    rows.append(_row("unfairness", "Seat unfairness", "unfairness", 0.0, t["unfairness"], t["unfairness_lo"],
                     t["unfairness_hi"], t["seeds"], t["significant"], t["p"]))
    share = T.majority_share(data)
    s = share[(share["n_players"] == n) & (share["group"] == "all seats")].iloc[0]
    rows.append(_row("majority share", "Majorities' share of the score", "share", np.nan, s["mean_share"],
                     s["ci_lo"], s["ci_hi"], s["seat_games"]))
    g = T.game_shape(data)
    g = g[g["n_players"] == n].iloc[0]
    rows.append(_row("rounds", "Game length (rounds)", "mean", np.nan, g["rounds_mean"], g["rounds_lo"],
                     g["rounds_hi"], g["games"]))
    for _, e in T.end_triggers(data).query("n_players == @n").iterrows():
        rows.append(_row(f"end {e['end_trigger']}", f"Games ended by {e['end_trigger'].replace('_', ' ')}", "share",
                         np.nan, e["share"], e["ci_lo"], e["ci_hi"], e["games"]))
    rows += why_rows(T.why(data).get(n), n)
    cards = T.card_value(data, min_effect).query("n_players == @n")
    spaces = T.space_value(data, min_effect).query("n_players == @n")
    return rows, cards, spaces


def why_rows(why, n: int) -> list[dict]:
    """Where each seat's deviation comes from, at one rung (:mod:`analysis.explain`): the part won
    in the final round after the end was triggered and the part won by the tie-break, so the
    verdicts say whether a mechanism grows with skill (the last turn played better by better
    players). None (a rung played before these facts were recorded): no rows."""
    from .explain import seat_words

    if why is None:
        return []
    table, _ = why
    rows = []
    for cause, what in (("final_round", "won in the final round"), ("tie_break", "won by the tie-break")):
        for r in table[table["cause"] == cause].itertuples():
            rows.append(_row(f"why {cause} seat {r.seat}", f"{seat_words(r.seat, n).capitalize()}: part of its "
                             f"deviation {what}", "rate change", 0.0, r.part, r.lo, r.hi, r.seeds,
                             r.lo > 0 or r.hi < 0, r.p))
    return rows


def _strongest(tables: list, key: str, what: str) -> list[dict]:
    """Rows for the ``TOP_CARDS`` cards (spaces) of largest mean |adjusted effect| over the rungs."""
    both = pd.concat([t.assign(rung=i) for i, t in enumerate(tables)], ignore_index=True)
    both = both[np.isfinite(both["adj_diff"])]
    if both.empty:
        return []
    size = both.groupby(key)["adj_diff"].apply(lambda x: np.abs(x).mean())
    seen = both.groupby(key)["rung"].nunique()
    keep = size[seen == len(tables)].sort_values(ascending=False).index[:TOP_CARDS]
    rows = []
    for k in keep:
        for _, r in both[both[key] == k].iterrows():
            rows.append({**_row(f"{what} {k}", f"{r['name']}: win rate when {'played' if what == 'card' else 'used'}"
                                " (adjusted difference)", "rate change", 0.0, r["adj_diff"], r["adj_lo"],
                                r["adj_hi"], r["seat_games_used"], r["significant"], r["p_adj_holm"]),
                         "rung": int(r["rung"])})
    return rows


def figure_table(ladder: Ladder, min_effect: float, backend: str = "local",
                 scheduler: str | None = None) -> pd.DataFrame:
    """Every headline figure at every rung: one row per (figure, rung) with value, 95% interval,
    sample size, and the rung's own significance where the figure has a "no effect" value."""
    from .scan import scan

    n = ladder.players
    rows, cards, spaces = [], [], []
    for i, run in enumerate(ladder.runs):
        data = scan([run], report=True, backend=backend, scheduler=scheduler)
        got, c, s = rung_figures(data, n, min_effect)
        rows += [{**r, "rung": i} for r in got]
        cards.append(c)
        spaces.append(s)
    rows += _strongest(cards, "card", "card") + _strongest(spaces, "space", "space")
    out = pd.DataFrame(rows)
    out["rung_label"] = [ladder.labels[i] for i in out["rung"]]
    order = {f: k for k, f in enumerate(dict.fromkeys(out["figure"]))}
    out = out.sort_values(["figure", "rung"], key=lambda c: c.map(order) if c.name == "figure" else c)
    return out.reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# verdicts
# ---------------------------------------------------------------------------------------------
def half_width_se(lo, hi) -> np.ndarray:
    """A standard error from a 95% interval (its half-width over 1.96): exact for the t and
    normal intervals, close for Wilson's away from 0 and 1."""
    return (np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)) / (2 * sps.norm.ppf(0.975))


def trend(values, ses) -> tuple[float, float, float]:
    """Weighted least-squares slope of ``values`` on their place (0, 1, ...) with known standard
    errors ``ses``: (slope per rung, its standard error, two-sided p of "no slope"). A rung with
    no variation (standard error 0) is given the smallest positive error of the others."""
    v = np.asarray(values, dtype=float)
    se = np.asarray(ses, dtype=float)
    ok = np.isfinite(v) & np.isfinite(se)
    x, v, se = np.arange(len(ok))[ok].astype(float), v[ok], se[ok]
    if len(v) < 2 or not np.any(se > 0):
        return float("nan"), float("nan"), float("nan")
    se = np.where(se > 0, se, se[se > 0].min())
    w = 1.0 / se ** 2
    xc = x - (w * x).sum() / w.sum()
    sxx = (w * xc ** 2).sum()
    slope = float((w * xc * v).sum() / sxx)
    s = float(np.sqrt(1.0 / sxx))
    return slope, s, float(2 * sps.norm.sf(abs(slope / s)))


def heterogeneity(values, ses) -> float:
    """p-value of "the figure is the same at every rung" (Cochran's Q: weighted squared deviations
    from the weighted mean, chi-square on rungs - 1 degrees of freedom). It catches a figure that
    rises and falls again, which a linear trend misses."""
    v = np.asarray(values, dtype=float)
    se = np.asarray(ses, dtype=float)
    ok = np.isfinite(v) & np.isfinite(se)
    v, se = v[ok], se[ok]
    if len(v) < 2 or not np.any(se > 0):
        return float("nan")
    se = np.where(se > 0, se, se[se > 0].min())
    w = 1.0 / se ** 2
    q = float((w * (v - (w * v).sum() / w.sum()) ** 2).sum())
    return float(sps.chi2.sf(q, len(v) - 1))


def verdict(values, lo, hi, significant, null, trend_slope, trend_significant,
            varies: bool = False) -> str:
    """One figure's verdict from its values at the rungs (weakest first); ``significant``,
    ``trend_significant`` and ``varies``: its tests after the ladder's correction (the module)."""
    v = np.asarray(values, dtype=float)
    if not np.isfinite(null):                       # descriptive: a trend, or a change without one
        if trend_significant:
            return "grows with skill" if trend_slope > 0 else "shrinks with skill"
        return "varies with skill, no trend" if varies else "no difference found between rungs"
    e = v - null
    sig = np.array([bool(x) for x in significant])
    if np.any(sig & (e > 0)) and np.any(sig & (e < 0)):
        return "reverses"
    if trend_significant:
        z = np.abs(e) / np.maximum(half_width_se(lo, hi), 1e-12)
        direction = np.sign(e[int(np.argmax(z))]) or np.sign(trend_slope)
        return "grows with skill" if direction * trend_slope > 0 else "shrinks with skill"
    if not sig.any():
        return "no effect at any rung"
    if sig.all() and len(set(np.sign(e))) == 1:
        return "holds at every rung"
    return "some rungs only"


def verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """Per figure: the trend (slope per rung), the tests behind its verdict Holm-corrected in
    the ladder's one family (see the module), the rungs (0 the weakest) where its own test is
    significant after that correction, and the verdict, in the table's figure order."""
    rows, groups = [], []
    for fig, g in table.groupby("figure", sort=False):
        g = g.sort_values("rung")
        groups.append(g)
        ses = half_width_se(g["lo"], g["hi"])
        slope, s, p = trend(g["value"], ses)
        descriptive = not np.isfinite(g["null"].iloc[0])
        rows.append({"figure": fig, "label": g["label"].iloc[0], "kind": g["kind"].iloc[0],
                     "null": g["null"].iloc[0], "rungs": len(g), "slope": slope, "slope_se": s, "p_trend": p,
                     "p_same": heterogeneity(g["value"], ses) if descriptive else np.nan})
    out = pd.DataFrame(rows)
    at_rungs = [g["p"].to_numpy(dtype=float) if np.isfinite(g["null"].iloc[0]) else np.full(len(g), np.nan)
                for g in groups]
    family = holm(np.concatenate([out["p_trend"].to_numpy(), out["p_same"].to_numpy(), *at_rungs]))
    m = len(out)
    out["p_trend_holm"], out["p_same_holm"] = family[:m], family[m:2 * m]
    rung_sig = np.split(np.nan_to_num(family[2 * m:], nan=1.0) < ALPHA, np.cumsum([len(a) for a in at_rungs])[:-1])
    out["significant_rungs"] = [[int(r) for r in g["rung"].to_numpy()[sig]] for g, sig in zip(groups, rung_sig)]
    out["trend_significant"] = np.nan_to_num(out["p_trend_holm"].to_numpy(), nan=1.0) < ALPHA
    varies = np.nan_to_num(out["p_same_holm"].to_numpy(), nan=1.0) < ALPHA
    out["verdict"] = [verdict(g["value"], g["lo"], g["hi"], sig, r.null, r.slope, r.trend_significant, bool(v))
                      for r, v, g, sig in zip(out.itertuples(), varies, groups, rung_sig)]
    return out


# ---------------------------------------------------------------------------------------------
# strength on one scale
# ---------------------------------------------------------------------------------------------
def duel_wins(duel: DuelRun, k: int) -> np.ndarray:
    """Per seed of a 2-player duel run: wins[seed, a, b] = games of the seed in which rung a's
    player beat rung b's."""
    cfg = duel.run.manifest["config"]
    rotations = 2 if cfg["seat_rotation"] else 1
    s = duel.run.table("seats", ["game_id", "strategy", "win"])
    if s.empty:
        return np.zeros((0, k, k))
    rung = s["strategy"].map(duel.rung_of)
    if rung.isna().any():
        bad = sorted(set(s["strategy"][rung.isna()]))
        raise LadderError(f"duel run {duel.run.out} holds {', '.join(bad)}, which is no rung of the ladder")
    game = s["game_id"].to_numpy()
    order = np.lexsort((~s["win"].to_numpy(), game))      # per game: the winner first
    g, r = game[order], rung.to_numpy(dtype=int)[order]
    winners, losers = r[0::2], r[1::2]
    seeds = g[0::2] // rotations
    idx, seed_row = np.unique(seeds, return_inverse=True)
    out = np.zeros((len(idx), k, k))
    np.add.at(out, (seed_row, winners, losers), 1)
    return out


def rung_ratings(ladder: Ladder, n_boot: int = 2000, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bradley-Terry ratings of the rungs on the Elo scale (mean 0) with 95% bootstrap intervals,
    and each step up the ladder with its difference, interval and Holm-corrected p-value."""
    k = len(ladder.labels)
    return ratings_from_wins([duel_wins(d, k) for d in ladder.duels], ladder.labels, n_boot, seed)


def ratings_from_wins(per_duel: list, labels: list, n_boot: int = 2000,
                      seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`rung_ratings` from each duel's per-seed win matrices (seeds, k, k)."""
    k = len(labels)
    per_duel = [np.asarray(w, dtype=float) for w in per_duel if len(w)]
    if not per_duel:
        return pd.DataFrame(), pd.DataFrame()
    total = sum(w.sum(axis=0) for w in per_duel)
    met = (total + total.T) > 0
    prior = 0.5 * met           # see the module: a rung that never lost to another stays finite
    est = bradley_terry(total + prior) * ELO
    rng = np.random.default_rng(seed)
    tots = np.empty((n_boot, k, k))
    for b in range(n_boot):
        tot = np.zeros((k, k))
        for w in per_duel:
            weights = np.bincount(rng.integers(0, len(w), len(w)), minlength=len(w))
            tot += np.tensordot(weights, w, axes=1)
        tots[b] = tot + prior
    boot = bradley_terry_many(tots, tol=1e-8, max_iter=5000) * ELO
    lost, met, games = seed_records(per_duel)
    lo, hi = (ELO * x for x in rating_ranges(*np.percentile(boot, [2.5, 97.5], axis=0) / ELO, lost, met))
    comps = (total + total.T).sum(axis=1)
    ratings = pd.DataFrame({"rung": np.arange(k), "players": list(labels), "elo": est, "ci_lo": lo,
                            "ci_hi": hi, "games": comps.astype(int), "wins": total.sum(axis=1).astype(int),
                            "opponents": met.sum(axis=1)})
    steps = []
    for i in range(k - 1):
        d = boot[:, i + 1] - boot[:, i]
        p = (1 + np.count_nonzero(d <= 0)) / (n_boot + 1)          # one-sided: upper no stronger
        step_lo, step_hi = step_range(*np.percentile(d, [2.5, 97.5]) / ELO, i + 1, i, lost, met, games)
        steps.append({"step": f"{i} -> {i + 1}", "lower": labels[i], "upper": labels[i + 1],
                      "elo_gain": est[i + 1] - est[i], "ci_lo": float(ELO * step_lo),
                      "ci_hi": float(ELO * step_hi), "p": p})
    steps = pd.DataFrame(steps)
    steps["p_holm"] = holm(steps["p"].to_numpy())
    steps["significant"] = steps["p_holm"] < ALPHA
    return ratings, steps


def open_ladder(folder) -> Ladder:
    """The ladder ``evora skill`` played into ``folder``: its rungs' runs (finished) and duels."""
    from pathlib import Path

    from evora_sim.ladder import load_plan, own_folder, read_plan

    from .tables import open_runs

    doc = read_plan(folder)
    if doc is None:
        raise LadderError(f"{folder} holds no skill ladder (no ladder.json): play one with evora skill")
    plan = load_plan(doc)
    folder = Path(folder)
    runs = open_runs([own_folder(folder, plan.rung_folder(i)) for i in range(len(plan.rungs))])
    ladder = check_ladder(runs, plan.rungs)
    duels = open_runs([own_folder(folder, d.folder) for d in plan.duels])
    _check_played(plan, runs, duels, folder / "ladder.json")
    ladder.duels = [DuelRun(r, {d.field[0]: d.a, d.field[1]: d.b}) for d, r in zip(plan.duels, duels)]
    ladder.explained = [rung_summary(own_folder(folder, plan.why_folder(i))) for i in range(len(plan.rungs))]
    return ladder


def rung_summary(why):
    """What ``evora skill --explain-seeds`` found for a rung (its explain folder's summary), or
    None when the rung was not explained (or its summary is not finished)."""
    from .explain import read_summary

    if not why.exists():
        return None
    try:
        return read_summary(why)
    except ValueError:
        return None


def _check_played(plan, runs, duels, where) -> None:
    """Each run is what the plan says it is (its size, seed, rules and players), so a label in the
    report is never one an edited ladder.json gave another rung's games."""
    from evora_sim.ladder import rung_played

    def same(run, want: dict) -> None:
        cfg = run.manifest["config"]
        for key, value in want.items():
            if cfg[key] != value:
                raise LadderError(f"{where} does not describe its run {run.out}: the plan says {key} {value!r}, "
                                  f"the run has {cfg[key]!r}; play the ladder into a new --out")

    for i, (rung, run) in enumerate(zip(plan.rungs, runs)):
        same(run, {"players": plan.players, "seed": plan.seed, "games": plan.seeds, "rules_hash": plan.rules_hash})
        if not rung_played(rung, run.manifest["config"]["strategies"]):
            raise LadderError(f"{where} names rung {i + 1} {rung!r}, but its run {run.out} played "
                              f"{rung_label(run.manifest)!r}; play the ladder into a new --out")
    for d, run in zip(plan.duels, duels):
        same(run, {"players": 2, "seed": plan.seed, "games": d.seeds, "rules_hash": plan.rules_hash,
                   "strategies": d.field})
        for name, rung in zip(d.field, (d.a, d.b)):
            if name not in runs[rung].manifest["config"]["strategies"]:
                raise LadderError(f"{where}: duel {d.folder} plays {name!r} for rung {rung + 1}, which does not "
                                  "hold it; play the ladder into a new --out")
