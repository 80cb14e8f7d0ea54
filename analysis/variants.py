"""Headline metrics of a run, and how they move between runs (``evora compare``, ``evora sweep``).

Most headline metrics are a ratio of sums over games: a seat's win rate (wins / games), a
strategy's win rate (its wins / its seat-games), the mean score (points / seat-games), the game
length (rounds / games), the majority share of the score (per game: VP from majorities / all VP,
averaged over games). Its interval treats the **seed** as the unit (the games one seed gives
under every seat rotation are one cluster): the cluster-robust delta method (linearisation of
the ratio), with a t quantile on clusters - 1 degrees of freedom. With one game per seed this is
the ordinary t interval of a mean (for a win rate: the Wald interval).

The **seat unfairness** (root mean square seat deviation from the fair share, in points of win
rate) comes from :mod:`analysis.fairness`: an unbiased estimate, an interval that covers at its
nominal rate at and near a fair game, and a paired test of "is B fairer than A". Between runs it
moves as the difference of the mean square deviations (points squared).

Between two runs the difference is **paired** when both hold the same games (same game ids with
the same seeds: common random numbers, e.g. the same ``--seed`` under two rule variants): the
interval then comes from the per-seed differences of the linearised metric, which removes the
variation the two runs share. Otherwise the runs are independent samples: each run's
cluster-robust variance, added, with Welch's degrees of freedom. Every difference gets a
p-value; "moved" means Holm-adjusted over the family of metrics compared, and a move smaller
than the smallest difference that matters (``min_effect``, rates only) is called negligible.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from evora_sim.rules import flatten
from evora_sim.storage import RunResult

from . import numbers
from .fairness import compare_fairness, distinct_rows, seat_fairness
from .scan import AnalysisError, scan
from .stats import ALPHA, MIN_EFFECT, holm, negligible, p_text

UNFAIRNESS = "seat unfairness (RMS seat deviation)"
GROUPS = {                   # metric group (as --ci-metrics names it) -> what it holds
    "seats": "every seat's win rate",
    "fairness": "the seat unfairness (root mean square seat deviation)",
    "strategies": "every strategy's win rate",
    "score": "the mean score (VP)",
    "majority": "the majority share of the score",
    "length": "the game length (rounds)",
}


def metric_group(name: str) -> str:
    """The group of a headline metric's name (the keys of GROUPS)."""
    if name == UNFAIRNESS:
        return "fairness"
    if name.startswith("seat ") and name.endswith(" win rate") and name[5:-9].isdigit():
        return "seats"
    if name.endswith(" win rate"):
        return "strategies"
    return {"mean score": "score", "majority share of score": "majority",
            "game length (rounds)": "length"}[name]


@dataclass
class GameData:
    """One run's headline metrics as per-seed numerators and denominators: every statistic of
    this module is a function of sums over seeds (the clusters), so these are all it keeps
    (:class:`analysis.aggregate.SeedSums`, about 40 bytes per seed)."""

    n_players: int
    rotations: int
    seed_index: np.ndarray                   # the seeds analysed (game id // rotations), sorted
    seed: np.ndarray                         # each one's seed value
    games: np.ndarray                        # games per seed
    metrics: dict                            # name -> (num per seed, den per seed, kind)
    manifest: dict | None = None

    @property
    def cluster(self) -> np.ndarray:
        return np.arange(len(self.seed_index))

    @property
    def n_games(self) -> int:
        return int(self.games.sum())

    def names(self) -> list[str]:
        return list(self.metrics)

    def seed_wins(self) -> np.ndarray:
        """Win counts per seed (cluster) and seat, shape (seeds, seats)."""
        return np.stack([self.metrics[f"seat {s} win rate"][0] for s in range(self.n_players)], axis=1)


def from_sums(sums, manifest: dict) -> GameData:
    """The :class:`GameData` of a run's per-seed sums."""
    cfg = manifest["config"]
    n = int(cfg["players"])
    a = sums.arrays()
    games = a["games"].astype(float)
    m: dict = {}
    for s in range(n):
        m[f"seat {s} win rate"] = (a["seat_wins"][:, s].astype(float), games, "rate")
    if len(sums.strategies) > 1:
        for i, name in enumerate(sums.strategies):
            m[f"{name} win rate"] = (a["strat_wins"][:, i].astype(float), a["strat_seats"][:, i].astype(float), "rate")
    m["mean score"] = (a["score"].astype(float), games * n, "mean")
    m["majority share of score"] = (a["share"], games, "share")
    m["game length (rounds)"] = (a["rounds"].astype(float), games, "mean")
    return GameData(n, n if cfg["seat_rotation"] else 1, a["seed"], a["value"], a["games"], m, manifest)


def game_datas(runs, backend: str = "local", scheduler: str | None = None) -> list[GameData]:
    """The per-seed sums of several runs' finished chunks, read in one pass."""
    found = scan(list(runs), report=False, sums=range(len(runs)), backend=backend, scheduler=scheduler)
    return [from_sums(found.sums[i], r.manifest) for i, r in enumerate(runs)]


def game_data(run: RunResult, backend: str = "local", scheduler: str | None = None) -> GameData:
    """The per-seed sums of a run's finished chunks."""
    return game_datas([run], backend, scheduler)[0]


def _cluster_sums(num, den, cluster, n_clusters):
    return (np.bincount(cluster, weights=num, minlength=n_clusters),
            np.bincount(cluster, weights=den, minlength=n_clusters))


def linearised_ratio(num, den, cluster, n_clusters):
    """Ratio of sums and its per-cluster linearised values (mean 0); (ratio, z per cluster).
    Public, with :func:`ratio_with_se` and :func:`difference_row`: the tests' per-game oracle of
    :func:`compare` is built of the same pieces, so that it checks how the games are summed."""
    nc, dc = _cluster_sums(num, den, cluster, n_clusters)
    ratio = nc.sum() / dc.sum()
    return ratio, (nc - ratio * dc) / dc.mean()


def _t(df, alpha: float = ALPHA) -> float:
    return float(stats.t.ppf(1 - alpha / 2, df)) if df >= 1 else float("nan")


def ratio_with_se(num, den, cluster) -> tuple[float, float, int]:
    """Ratio of sums, its cluster-robust standard error and the number of clusters (the one
    definition, shared with the tests' oracle of :func:`compare`)."""
    c = int(cluster.max()) + 1 if len(cluster) else 0
    if c == 0:
        return float("nan"), float("nan"), 0
    r, z = linearised_ratio(num, den, cluster, c)
    se = float(z.std(ddof=1) / np.sqrt(c)) if c >= 2 else float("nan")
    return float(r), se, c


def ratio_ci(num, den, cluster, alpha: float = ALPHA) -> tuple[float, float, float]:
    """Ratio of sums with its cluster-robust 1 - alpha interval; (value, lo, hi)."""
    r, se, c = ratio_with_se(num, den, cluster)
    half = _t(c - 1, alpha) * se
    return r, r - half, r + half


def subset(data: GameData, mask: np.ndarray) -> GameData:
    """The seeds of ``mask`` (a boolean mask or an index array) only."""
    return GameData(data.n_players, data.rotations, data.seed_index[mask], data.seed[mask], data.games[mask],
                    {k: (v[0][mask], v[1][mask], v[2]) for k, v in data.metrics.items()}, data.manifest)


def run_metrics(run: RunResult | GameData, alpha: float = ALPHA) -> pd.DataFrame:
    """Every headline metric of one run with its 1 - alpha interval: metric, kind, value, lo,
    hi, games. The seat unfairness follows the seat win rates."""
    data = run if isinstance(run, GameData) else game_data(run)
    rows = []
    for name, (num, den, kind) in data.metrics.items():
        v, lo, hi = ratio_ci(num, den, data.cluster, alpha)
        if kind in ("rate", "share"):
            lo, hi = max(lo, 0.0), min(hi, 1.0)
        rows.append({"metric": name, "kind": kind, "value": v, "lo": lo, "hi": hi,
                     "games": data.n_games})
    win_rows, seeds_with = distinct_rows(data.seed_wins())
    f = seat_fairness(win_rows, alpha=alpha, counts=seeds_with)
    rows.insert(data.n_players, {"metric": UNFAIRNESS, "kind": "unfairness", "value": f.rms,
                                 "lo": f.rms_lo, "hi": f.rms_hi, "games": data.n_games})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------
def pairing(a: GameData, b: GameData) -> tuple[np.ndarray, np.ndarray] | None:
    """Indexes of the seeds both runs hold with the same games (same seed index and rotations,
    same seed value), or None when they share no such seed (independent samples)."""
    if a.rotations != b.rotations:
        return None
    common, ia, ib = np.intersect1d(a.seed_index, b.seed_index, assume_unique=True, return_indices=True)
    if len(common) == 0 or not (a.seed[ia] == b.seed[ib]).all():
        return None
    return ia, ib


def difference_row(name, kind, a, b, d, se, df, method, alpha) -> dict:
    """A row of :func:`compare`'s table: B - A with its t interval and p on ``df`` degrees of
    freedom (one place for the row's columns, which the tests' oracle of ``compare`` shares)."""
    half = _t(df, alpha) * se
    p = float(2 * stats.t.sf(abs(d / se), df)) if se > 0 and df >= 1 else float("nan")
    return {"metric": name, "kind": kind, "a": a, "b": b, "diff": d, "lo": d - half, "hi": d + half,
            "p": p, "method": method}


def compare(run_a: RunResult | GameData, run_b: RunResult | GameData, alpha: float = ALPHA,
            min_effect: float = MIN_EFFECT) -> tuple[pd.DataFrame, dict]:
    """How each headline metric moved from run A to run B: metric, kind, a, b, diff (B - A), lo,
    hi (1 - alpha), p, p_holm (Holm over the metrics compared), moved, negligible, method.
    Paired by seed when both runs hold the same games (only those games are used). The seat
    unfairness row's diff is the change in the mean square seat deviation (see the module)."""
    a, b = (r if isinstance(r, GameData) else game_data(r) for r in (run_a, run_b))
    if a.n_players != b.n_players:
        raise AnalysisError(f"the runs have different player counts ({a.n_players} and {b.n_players}); "
                            "compare runs of one player count")
    pair = pairing(a, b)
    info = {"paired": pair is not None, "games_a": a.n_games, "games_b": b.n_games,
            "setup": setup_differences(a.manifest or {}, b.manifest or {}), "alpha": alpha,
            "min_effect": min_effect}
    if pair is not None:
        ia, ib = pair
        c = len(ia)
        a, b = subset(a, ia), subset(b, ib)
        info.update(games_paired=a.n_games, seeds_paired=c)
    rows = []
    for name in a.metrics:
        if name not in b.metrics:
            continue
        (na, da, kind), (nb, db, _) = a.metrics[name], b.metrics[name]
        if pair is not None:
            ra, za = linearised_ratio(na, da, a.cluster, c)
            rb, zb = linearised_ratio(nb, db, b.cluster, c)
            se = (zb - za).std(ddof=1) / np.sqrt(c) if c > 1 else float("nan")
            rows.append(difference_row(name, kind, ra, rb, rb - ra, se, c - 1,
                                       "paired by seed (t on per-seed differences)", alpha))
        else:
            (ra, sa, ca), (rb, sb, cb) = ratio_with_se(na, da, a.cluster), ratio_with_se(nb, db, b.cluster)
            se = float(np.hypot(sa, sb))
            df = se ** 4 / (sa ** 4 / (ca - 1) + sb ** 4 / (cb - 1)) if se > 0 else float("nan")
            rows.append(difference_row(name, kind, ra, rb, rb - ra, se, df,
                                       "independent runs (cluster-robust, Welch t)", alpha))
    fc = compare_fairness(a.seed_wins(), b.seed_wins(), paired=pair is not None, alpha=alpha)
    rows.insert(a.n_players, {"metric": UNFAIRNESS, "kind": "unfairness", "a": fc.a.rms, "b": fc.b.rms,
                              "diff": fc.diff, "lo": fc.lo, "hi": fc.hi, "p": fc.p,
                              "method": fc.method + "; diff = change in mean square seat deviation"})
    table = pd.DataFrame(rows)
    table["p_holm"] = holm(table["p"])
    table["moved"] = table["p_holm"] < alpha
    size = np.where(table["metric"] == UNFAIRNESS, table["b"] - table["a"], table["diff"])
    table["negligible"] = table["kind"].map(numbers.in_points) & negligible(size, min_effect)
    cols = ["metric", "kind", "a", "b", "diff", "lo", "hi", "p", "p_holm", "moved", "negligible", "method"]
    return table[cols], info


def _fmt_value(v: float, kind: str) -> str:
    if not np.isfinite(v):
        return "n/a"
    scale, unit = numbers.units(kind)
    return f"{scale * v:.1f}{unit}" if kind in ("rate", "share") else f"{scale * v:.2f}{unit}"


def _fmt_diff(r) -> str:
    """B - A with its interval; the seat unfairness's change as B's unfairness minus A's, in pp
    (its test is on the mean square, whose squared unit no designer reads: no interval here,
    each side has its own)."""
    scale, unit = numbers.units(r.kind, change=True)
    if r.kind == "unfairness":
        return f"{scale * (r.b - r.a):+.2f}{unit} (tested on the mean square)"
    return numbers.estimate(r.diff, r.lo, r.hi, scale, unit, signed=True)


def setup_differences(manifest_a: dict, manifest_b: dict) -> list[str]:
    """What differs between two runs' set-ups: each rules key (as a --set would name it), the
    strategies, the player count; so a reader knows what a moved metric was moved by."""
    out = []
    ra, rb = dict(flatten(manifest_a.get("rules", {}))), dict(flatten(manifest_b.get("rules", {})))
    for key in sorted(set(ra) | set(rb)):
        if ra.get(key) != rb.get(key):
            out.append(f"rules {key}: {ra.get(key)!r} -> {rb.get(key)!r}")
    ca, cb = manifest_a.get("config", {}), manifest_b.get("config", {})
    for key in ("players", "strategies", "seat_rotation"):
        if ca.get(key) != cb.get(key):
            out.append(f"{key}: {ca.get(key)!r} -> {cb.get(key)!r}")
    return out


def verdicts(table: pd.DataFrame) -> list[str]:
    """Per row of a :func:`compare` table: 'moved', 'moved, negligible' or 'no clear change'."""
    return ["no clear change" if not r.moved else ("moved, negligible" if r.negligible else "moved")
            for r in table.itertuples()]


def compare_lines(table: pd.DataFrame, info: dict, name_a: str, name_b: str) -> list[str]:
    how = (f"paired by seed: {info['games_paired']:,} games on {info['seeds_paired']:,} shared seeds"
           if info["paired"] else
           f"independent runs (no shared seeds): {info['games_a']:,} and {info['games_b']:,} games")
    lines = [f"A = {name_a}", f"B = {name_b}"]
    setup = info.get("setup", [])
    lines += ["What differs: " + ("; ".join(setup) if setup else "nothing in the rules or the field")]
    if any(s.startswith("strategies:") for s in setup):
        lines += ["Note: the fields differ, so strategy metrics present in only one run are left out."]
    level = round(100 * (1 - info.get("alpha", ALPHA)), 3)
    lines += [f"Differences B - A with {level:g}% intervals; {how}.",
              f"'moved': Holm-adjusted p < {info.get('alpha', ALPHA):g} over the {len(table)} metrics "
              f"(the intervals are each metric's own); 'negligible': a rate that moved by less than "
              f"{numbers.pp(info.get('min_effect', MIN_EFFECT))} (--min-effect).",
              f"{UNFAIRNESS}: root mean square of the seats' deviations from the fair share, in pp; its "
              "change is B's minus A's (negative: B is fairer), tested on the mean square.", ""]
    width = max(len(m) for m in table["metric"])
    for r, moved in zip(table.itertuples(), verdicts(table)):
        lines.append(f"{r.metric.ljust(width)}  {_fmt_value(r.a, r.kind):>11} -> {_fmt_value(r.b, r.kind):>11}  "
                     f"{_fmt_diff(r)}  ({moved}, {p_words(r.p_holm)})")
    return lines


def p_words(p: float) -> str:
    return p_text(p).replace("p ", "Holm p ", 1)


def compare_plot(table: pd.DataFrame):
    """Before and after: each rate metric of a :func:`compare` table (one panel per player
    count; ``n_players`` column) as A then B (%), and beside it the change B - A with its 95%
    range (pp). The means (score, length) and the seat unfairness stay in the table."""
    # lazy: matplotlib, 0.8 s of processor (measured); evora compare's tables and the dashboard draw no such figure
    from .plots import COLOURS, plt, tight_layout

    rates = table[table["kind"].isin(["rate", "share"])]
    counts = sorted(rates["n_players"].unique()) if "n_players" in rates else [None]
    rows = max(int(rates.groupby("n_players").size().max()) if len(rates) else 1, 1)
    fig, axes = plt.subplots(len(counts), 2, figsize=(11, 0.42 * rows * len(counts) + 1.6 * len(counts)),
                             squeeze=False)
    for (left, right), n in zip(axes, counts):
        d = rates[rates["n_players"] == n] if n is not None else rates
        y = np.arange(len(d))
        for i, r in enumerate(d.itertuples()):
            left.plot([100 * r.a, 100 * r.b], [i, i], color="#999999", linewidth=1)
        left.plot(100 * d["a"], y, "o", color="#999999", label="A (before)")
        left.plot(100 * d["b"], y, "o", color=COLOURS[0], label="B (after)")
        left.set_yticks(y, d["metric"])
        left.set_xlabel("value (%)")
        left.set_title(f"{n} players: before and after" if n is not None else "before and after")
        left.legend(fontsize=8, loc="lower right")
        v, lo, hi = 100 * d["diff"].to_numpy(), 100 * d["lo"].to_numpy(), 100 * d["hi"].to_numpy()
        moved = d["moved"].to_numpy()
        colours = [COLOURS[3] if m else "#777777" for m in moved]
        for i in range(len(d)):
            right.errorbar(v[i], y[i], xerr=[[max(v[i] - lo[i], 0)], [max(hi[i] - v[i], 0)]], fmt="o",
                           color=colours[i], capsize=3)
        right.axvline(0, color="black", linewidth=0.8)
        right.set_yticks(y, [""] * len(d))
        right.set_xlabel("change B - A (percentage points, 95% range; red: moved)")
        lim = max(1.0, float(np.nanmax(np.abs(np.concatenate([lo, hi])))) * 1.1) if len(d) else 1.0
        right.set_xlim(-lim, lim)
        for ax in (left, right):
            ax.set_ylim(len(d) - 0.5, -0.5)
            ax.grid(axis="x", alpha=0.3)
    tight_layout(fig)
    return fig
