"""A fix confirmed on fresh seeds at a ladder of rungs: each seat's win rate with an interval, the
seat unfairness, and where the fix holds.

A compensation or a rule change chosen on some games and judged on the same games looks better
than it is (explain's ``2,1.5,1.5,0``, chosen on its own games, left the last seat at 27.6% on
fresh seeds), and the seat finding reverses with skill (bots: the last seat ahead; experts: the
first), so a fix is quoted only from games it was not chosen on, played by the players it is
quoted for. The games are played by :mod:`evora_sim.experiments.confirm`; this is the statistics.

**Intervals.** A seat's win rate has a Wilson interval clustered by seed (a seed's rotations
share its stacks: :func:`analysis.stats.clustered_wilson`). "The fix holds at a rung" means every
seat's interval contains the fair share 1/n, and "holds from rung k up" is that claim at every
rung from k to the top, so the intervals are simultaneous over the seats and the rungs
(Bonferroni: ``family`` = seats x rungs): a fix that is fair everywhere is called unfair at some
rung in at most 5% of ladders (tests/test_confirm.py simulates it). The seat unfairness of each
rung is :func:`analysis.fairness.seat_fairness` with its 95% interval.

A seat's interval that contains the fair share is no proof that the seat is fair: with few seeds
every interval is wide. The lines therefore give the widest interval's half-width beside the
verdict, so a reader sees how closely "holds" was measured.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .fairness import seat_fairness
from .numbers import ranged
from .stats import ALPHA, clustered_wilson


def per_seed_wins(seats: pd.DataFrame, players: int, rotations: int | None = None) -> np.ndarray:
    """Each seed's wins per seat (seeds, n), summed over its rotations, from a run's seats table
    (``game_id``, ``seat``, ``win``); ``rotations``: the run's games a seed (``players`` under seat
    rotation, the default; 1 without)."""
    s = seats.sort_values(["game_id", "seat"])
    win = s["win"].to_numpy().reshape(-1, players)
    seed = s["game_id"].to_numpy()[::players] // (players if rotations is None else rotations)
    return np.stack([np.bincount(seed, weights=win[:, k]) for k in range(players)], axis=1)


def seat_rows(arm: str, wins: np.ndarray, players: int, alpha: float = ALPHA, family: int | None = None,
              rotations: int | None = None, **extra) -> list[dict]:
    """Per seat: the win rate with a Wilson interval clustered by seed, simultaneous over
    ``family`` claims (default: the seats; Bonferroni); then the seat unfairness with its
    (1 - alpha) interval. ``wins``: :func:`per_seed_wins`; ``rotations``: its games a seed
    (default ``players``). ``extra`` columns go on every row."""
    family = players if family is None else family
    m = players if rotations is None else rotations
    z = stats.norm.isf(alpha / (2 * family))
    rows = []
    for k in range(players):
        lo, hi, _ = clustered_wilson(wins[:, k], m, z)
        rate = wins[:, k].sum() / (len(wins) * m)
        rows.append({**extra, "arm": arm, "seat": k, "measure": "win rate", "value": rate, "lo": lo, "hi": hi,
                     "level": 1 - alpha / family, "contains_fair_share": bool(lo <= 1 / players <= hi),
                     "seeds": len(wins), "games": len(wins) * m, "rotations": m})
    f = seat_fairness(wins, alpha=alpha)
    rows.append({**extra, "arm": arm, "seat": -1, "measure": "seat unfairness (pp)", "value": 100 * f.rms,
                 "lo": 100 * f.rms_lo, "hi": 100 * f.rms_hi, "level": 1 - alpha, "p_all_fair": f.p,
                 "seeds": f.seeds, "games": f.games})
    return rows


def rotations_phrase(rates: pd.DataFrame) -> str:
    """How often each seed was played, for a line about ``rates`` (rows of :func:`seat_rows`):
    " x N rotations", "" when once (a field of one player: its rotations would all be the same
    game), or a general phrase when rungs differ. Rows written before the ``rotations`` column
    were played under every rotation."""
    if "rotations" not in rates:
        return f" x {int(rates['seat'].max()) + 1} rotations"
    counts = set(rates["rotations"].astype(int))
    if counts == {1}:
        return ""
    return f" x {counts.pop()} rotations" if len(counts) == 1 else " (each under every seat rotation its players need)"


def holds_from(contains) -> int | None:
    """The lowest rung (0-based, weakest first) from which the fix holds at every rung up to the
    top (``contains[r]``: every seat's interval at rung r contains the fair share); None when it
    does not hold at the top rung."""
    contains = [bool(c) for c in contains]
    if not contains or not contains[-1]:
        return None
    k = len(contains) - 1
    while k > 0 and contains[k - 1]:
        k -= 1
    return k


def rung_holds(table: pd.DataFrame, arm: str) -> list[bool]:
    """Per rung (in order), whether every seat's interval of ``arm`` contains the fair share."""
    rates = table[(table["arm"] == arm) & (table["measure"] == "win rate")]
    return [bool(g["contains_fair_share"].all()) for _, g in rates.groupby("rung", sort=True)]


def verdict(table: pd.DataFrame, arm: str) -> str:
    """"holds at every rung", "holds from rung k (LABEL) up" or "does not hold at the top rung
    (LABEL)", from a confirmation table (``rung``, ``label``, and :func:`seat_rows`' columns)."""
    labels = table.drop_duplicates("rung").sort_values("rung")["label"].tolist()
    k = holds_from(rung_holds(table, arm))
    if k is None:
        return f"does not hold at the top rung ({labels[-1]})"
    if k == 0:
        return "holds at every rung" if len(labels) > 1 else f"holds at {labels[0]}"
    return f"holds from rung {k + 1} ({labels[k]}) up"


def rung_lines(table: pd.DataFrame, arm: str, players: int) -> list[str]:
    """A line per rung: every seat's win rate with its interval, the seat unfairness; then the
    verdict with the widest interval's half-width (how closely "holds" was measured)."""
    rates = table[(table["arm"] == arm) & (table["measure"] == "win rate")]
    unfair = table[(table["arm"] == arm) & (table["measure"] == "seat unfairness (pp)")]
    first = rates.iloc[0]
    lines = [f"On {int(first['seeds']):,} fresh seeds{rotations_phrase(rates)} at each rung (win rates with "
             f"{100 * float(first['level']):.4g}% intervals, simultaneous over every seat at every rung confirmed; "
             f"fair share {100 / players:.1f}%):"]
    for r, g in rates.groupby("rung", sort=True):
        u = unfair[unfair["rung"] == r].iloc[0]
        seats = ", ".join(f"seat {int(x.seat)} {100 * x.value:.1f}% [{100 * x.lo:.1f}, {100 * x.hi:.1f}]"
                          + ("" if x.contains_fair_share else " (excludes the fair share)") for x in g.itertuples())
        lines.append(f"  rung {int(r) + 1} ({g['label'].iloc[0]}): {seats}; seat unfairness "
                     f"{ranged(u['value'] / 100, u['lo'] / 100, u['hi'] / 100, unit=' pp')}")
    widest = 100 * float(((rates["hi"] - rates["lo"]) / 2).max())
    said = verdict(table, arm)
    why = ("a seat's interval there excludes the fair share" if said.startswith("does not") else
           "every seat's interval contains the fair share there")
    lines.append(f"Verdict: the fix {said} ({why}; the widest interval is +-{widest:.1f} pp).")
    return lines


def fix_holds(table: pd.DataFrame, arm: str, rung: int = 0) -> bool:
    """Whether the paired comparison on fresh seeds at ``rung`` finds ``arm`` fairer than the
    rules it changes (Holm over the rungs): the condition for quoting it."""
    row = table[(table["arm"] == arm) & (table["rung"] == rung) & (table["measure"].str.startswith("change"))]
    return bool(len(row)) and bool(row["fairer"].iloc[0])


def fix_quote(table: pd.DataFrame, arm: str, base: str, players: int, rung: int = 0) -> str:
    """A confirmed fix in one clause: where (the rung's players), on how many fresh seeds, the seat
    unfairness it leaves against the rules', and every seat's win rate with its interval."""
    at = table[table["rung"] == rung]
    unfair = at[at["measure"] == "seat unfairness (pp)"].set_index("arm")
    rates = at[(at["arm"] == arm) & (at["measure"] == "win rate")]
    cell = (lambda r: ranged(r["value"] / 100, r["lo"] / 100, r["hi"] / 100, unit=" pp"))
    first = rates.iloc[0]
    seats = ", ".join(f"seat {int(x.seat)} {100 * x.value:.1f}% [{100 * x.lo:.1f}, {100 * x.hi:.1f}]" for x in rates.itertuples())
    fair = ("every seat's interval contains the fair share" if rates["contains_fair_share"].all() else
            "fairer, but not every seat's interval contains the fair share")
    return (f"on {int(first['seeds']):,} fresh seeds{rotations_phrase(rates)} among {first['label']} it leaves a seat "
            f"unfairness of {cell(unfair.loc[arm])} against {cell(unfair.loc[base])} under {base} (paired test); "
            f"win rates {seats} ({100 * float(first['level']):.4g}% intervals; fair share {100 / players:.1f}%): {fair}")


def shown_confirmation(table: pd.DataFrame) -> pd.DataFrame:
    """A row per rung and rules played: every seat's win rate with its interval and the seat
    unfairness, as a designer reads them."""
    rows = []
    for (rung, arm), g in table[table["measure"] != "change of unfairness (pp^2)"].groupby(["rung", "arm"], sort=False):
        row = {"Players": g["label"].iloc[0], "Rules": arm}
        for r in g.itertuples():
            if r.measure == "win rate":
                row[f"Seat {int(r.seat)}"] = ranged(r.value, r.lo, r.hi)
            else:
                row["Seat unfairness"] = ranged(r.value / 100, r.lo / 100, r.hi / 100, unit=" pp")
        row["Fresh seeds"] = f"{int(g['seeds'].iloc[0]):,}"
        rows.append(row)
    return pd.DataFrame(rows)
