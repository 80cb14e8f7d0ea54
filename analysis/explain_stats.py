"""Why a seat wins more or less than its fair share, and what a rule change would do about it.

**Decomposition.** Every game is put down to one cause of its winner's win, from what the game
loop recorded as the game was played (:mod:`evora_sim.gameloop`, the games table's
``decided_by`` and ``leader_at_trigger``):

- a **tie-break step**, when the winner tied the runner-up on VP: V2's half point, fewer parts
  left (D18), the later seat (D18), or the lot of a shared victory (V4);
- the **final round**, when it won on VP but was not the leader when the end was triggered (had
  the game ended right then, another seat would have won): it took the lead in the turns played
  after the trigger;
- **elsewhere**, when it already led at the trigger and won on VP.

Seat s's deviation from the fair share, ``P(s wins) - 1/n``, is then the sum over the causes c of
``P(s wins and c) - P(c)/n``: the games of cause c it won beyond a fair share of them. The parts
add up to the deviation exactly. Each part is a mean over seeds of its per-seed value (a seed's
games under every seat rotation share their stacks, so the seed is the independent unit), with a
t interval on seeds - 1 degrees of freedom; ``tests/test_explain.py`` shows by seeded simulation
of planted mechanisms that the intervals cover at their nominal rate.

For the final round it also says on whose turn the winner took the lead for good: its own, or
another seat's (:func:`decisive_turns`, from the leader recorded before each turn after the
trigger).

**Counterfactuals.** ``evora explain`` replays the run's first seeds under each mechanism switch
(docs/RULES.md V3-V5) and under a seat compensation (V1, the starting VP that re-scoring the
run's games says would equalise the seats), each game paired with the run's own game of the same
seed and rotation (common random numbers). For each: the change of every seat's win rate (a
paired t interval over seeds; Holm over every switch and seat), the change of the seat unfairness
(:func:`analysis.fairness.compare_fairness`, paired; Holm over the switches), and what else it
changes (game length, the majorities' share of the score, the margin of victory, lead changes:
paired t intervals). The fixes are ranked by the seat unfairness they leave.

Statistics only: the games are played by :mod:`evora_sim.experiments.explain_runs`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from evora_sim.layout import MAJORITY_NAMES
from evora_sim.ranking import DECIDED_BY

from .fairness import compare_fairness, seat_fairness
from .numbers import ranged
from .stats import ALPHA, holm

CAUSES = ("final_round", "half_point", "parts_left", "seat_order", "lot", "elsewhere")
TIE_BREAKS = ("half_point", "parts_left", "seat_order", "lot")
# the decomposition's columns: each cause, the tie-break's steps together, and the total deviation
PARTS = CAUSES + ("tie_break", "total")
FEW_GAMES = 50          # games of a cause below which its part's interval may be too narrow (rare events)
CAUSE_WORDS = {
    "final_round": "from the final round (the lead taken after the end was triggered)",
    "half_point": "from the tie-break's half point (V2)",
    "parts_left": "from the tie-break's fewer parts left (D18)",
    "seat_order": "from the tie-break's later seat (D18)",
    "lot": "from the lot of a shared victory (V4)",
    "elsewhere": "elsewhere (the winner already led when the end was triggered)",
    "tie_break": "from the tie-break (a tie on VP broken by the half point, the parts left, the later seat or a lot)",
}
# the games table's columns the decomposition reads (a run played before them cannot be explained)
GAME_FACTS = ("winner_seat", "decided_by", "leader_at_trigger", "trigger_seat")
SEAT_FACTS = ("leader_before_final_turn",)


def seat_words(seat: int, n: int) -> str:
    """A seat in a designer's words: the first player, the second player, ..., the last player."""
    if seat == n - 1:
        return "the last player"
    return f"the {('first', 'second', 'third')[seat]} player"


# ---------------------------------------------------------------------------------------------
# the decomposition
# ---------------------------------------------------------------------------------------------
def game_causes(decided_by, winner, leader_at_trigger) -> np.ndarray:
    """Each game's cause (code into ``CAUSES``) from its ``decided_by`` code (into
    ``ranking.DECIDED_BY``), its winner and its leader at the trigger."""
    decided_by = np.asarray(decided_by, dtype=np.int64)
    step = np.array([CAUSES.index(DECIDED_BY[k]) if DECIDED_BY[k] in CAUSES else -1
                     for k in range(len(DECIDED_BY))], dtype=np.int64)[decided_by]
    on_vp = decided_by == DECIDED_BY.index("vp")
    late = np.asarray(winner) != np.asarray(leader_at_trigger)
    return np.where(on_vp, np.where(late, CAUSES.index("final_round"), CAUSES.index("elsewhere")), step)


def decisive_turns(trigger_seat, leader_at_trigger, leaders_before, winner) -> np.ndarray:
    """Per game, the seat on whose turn the winner took the lead for good after the end was
    triggered (-1: it led at the trigger). The turns after the trigger are the rest of the
    triggering seat's turn, then each seat's that had one (``leaders_before[g, p]`` >= 0: the
    leader before it), in turn order from the seat after the trigger."""
    trig = np.asarray(trigger_seat, dtype=np.int64)
    before = np.asarray(leaders_before, dtype=np.int64)
    winner = np.asarray(winner, dtype=np.int64)
    g, n = before.shape
    out = np.where(np.asarray(leader_at_trigger) != winner, trig, -1)
    for i in range(n):                       # each later turn whose leader before it was not the winner
        seat = (trig + 1 + i) % n
        lead = before[np.arange(g), seat]
        changed = (lead >= 0) & (lead != winner)
        out = np.where(changed, seat, out)
    return out


@dataclass
class SeatParts:
    """The decomposition's sufficient statistics, gathered block by block (each block holding
    whole seeds): per seat and column of ``PARTS`` (each cause, the tie-break's steps together,
    the total deviation) the sum and the sum of squares over seeds of the per-seed part; and the
    final round's wins by the seat on whose turn the lead was taken (``turns[winner, turn]``)."""

    n: int
    seeds: int = 0
    games: int = 0
    s1: np.ndarray = None
    s2: np.ndarray = None
    turns: np.ndarray = None
    causes: np.ndarray = None          # games per cause
    won: np.ndarray = None             # per seat and column of PARTS: the games it won

    def __post_init__(self):
        k = len(PARTS)
        if self.s1 is None:
            self.s1, self.s2 = np.zeros((self.n, k)), np.zeros((self.n, k))
            self.turns = np.zeros((self.n, self.n), np.int64)
            self.causes = np.zeros(len(CAUSES), np.int64)
            self.won = np.zeros((self.n, k), np.int64)

    def add(self, cluster, winner, cause, decisive=None) -> "SeatParts":
        """Fold in games (one entry each): their seed (cluster) number, winner and cause, and
        (optional) the seat on whose turn a final-round winner took the lead."""
        cluster, winner, cause = (np.asarray(a, dtype=np.int64) for a in (cluster, winner, cause))
        if not len(cluster):
            return self
        n, k = self.n, len(CAUSES)
        _, inv = np.unique(cluster, return_inverse=True)
        u = int(inv.max()) + 1
        m = np.bincount(inv, minlength=u).astype(float)
        per_cause = np.bincount(inv * k + cause, minlength=u * k).reshape(u, k)
        won = np.bincount((inv * n + winner) * k + cause, minlength=u * n * k).reshape(u, n, k)
        x = (won - per_cause[:, None, :] / n) / m[:, None, None]
        ties = [CAUSES.index(c) for c in TIE_BREAKS]
        x = np.concatenate([x, x[:, :, ties].sum(axis=2, keepdims=True), x.sum(axis=2, keepdims=True)], axis=2)
        self.s1 += x.sum(axis=0)
        self.s2 += (x * x).sum(axis=0)
        self.seeds += u
        self.games += len(cluster)
        self.causes += np.bincount(cause, minlength=k)
        counts = won.sum(axis=0)
        self.won += np.concatenate([counts, counts[:, ties].sum(axis=1, keepdims=True),
                                    counts.sum(axis=1, keepdims=True)], axis=1)
        if decisive is not None:
            d = np.asarray(decisive, dtype=np.int64)
            late = (cause == CAUSES.index("final_round")) & (d >= 0)
            self.turns += np.bincount(winner[late] * n + d[late], minlength=n * n).reshape(n, n)
        return self

    def merge(self, other: "SeatParts") -> "SeatParts":
        self.seeds += other.seeds
        self.games += other.games
        self.s1 += other.s1
        self.s2 += other.s2
        self.turns += other.turns
        self.causes += other.causes
        self.won += other.won
        return self

    def events(self) -> np.ndarray:
        """The games of each column of ``PARTS`` (a cause's, the tie-break's, all)."""
        ties = sum(int(self.causes[CAUSES.index(k)]) for k in TIE_BREAKS)
        return np.r_[self.causes, ties, self.games]


def seed_parts(games: pd.DataFrame, seats: pd.DataFrame | None, n: int, rotations: int) -> SeatParts:
    """The decomposition's statistics of a run's tables (``games`` with ``game_id`` and
    ``GAME_FACTS``; ``seats`` with ``game_id``, ``seat`` and ``SEAT_FACTS``, or None)."""
    g = games.sort_values("game_id")
    winner = g["winner_seat"].to_numpy()
    cause = game_causes(_codes(g["decided_by"]), winner, g["leader_at_trigger"].to_numpy())
    decisive = None
    if seats is not None:
        s = seats.sort_values(["game_id", "seat"])
        before = s["leader_before_final_turn"].to_numpy().reshape(-1, n)
        decisive = decisive_turns(g["trigger_seat"].to_numpy(), g["leader_at_trigger"].to_numpy(), before, winner)
    return SeatParts(n).add(g["game_id"].to_numpy() // rotations, winner, cause, decisive)


def _codes(decided_by) -> np.ndarray:
    """``decided_by`` as codes into ``DECIDED_BY`` (a categorical column, or its names)."""
    values = pd.Series(decided_by).astype(str).to_numpy()
    lookup = {name: i for i, name in enumerate(DECIDED_BY)}
    bad = sorted({v for v in values if v not in lookup})
    if bad:
        raise ValueError(f"the games table's decided_by holds {bad[0]!r}, not one of {', '.join(DECIDED_BY)}")
    return np.array([lookup[v] for v in values], dtype=np.int64)


def parts_table(parts: SeatParts, alpha: float = ALPHA) -> pd.DataFrame:
    """Per seat and column of ``PARTS`` (each cause, ``tie_break``, ``total``): the part of the
    seat's deviation from a fair share (win rate, x 100 = pp) with its interval and the
    p-value of its t test against 0; the games of the cause. The interval is a t interval over
    seeds (the independent units). It covers at its nominal rate once the cause has some
    ``FEW_GAMES`` games (tests/test_explain.py); below that the part of a rare cause has a sample
    variance as noisy as its mean, its interval covers too rarely, and the tables say so."""
    c = parts.seeds
    mean = parts.s1 / max(c, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.maximum(parts.s2 - c * mean * mean, 0.0) / (c - 1) if c > 1 else np.nan
        se = np.sqrt(var / c) if c > 1 else np.full_like(mean, np.nan)
        half = stats.t.isf(alpha / 2, c - 1) * se if c > 1 else se
        p = np.where(se > 0, 2 * stats.t.sf(np.abs(mean) / se, max(c - 1, 1)), np.where(mean == 0, 1.0, 0.0))
    events = parts.events()
    rows = []
    for q in range(parts.n):
        for j, cause in enumerate(PARTS):
            rows.append({"seat": q, "cause": cause, "part": mean[q, j], "lo": mean[q, j] - half[q, j],
                         "hi": mean[q, j] + half[q, j], "p": float(p[q, j]), "games_of_cause": int(events[j]),
                         "seeds": c, "games": parts.games})
    return pd.DataFrame(rows)


def largest_seat(table: pd.DataFrame) -> int:
    """The seat whose deviation from a fair share is largest (either way)."""
    tot = table[table["cause"] == "total"]
    return int(tot.loc[tot["part"].abs().idxmax(), "seat"])


def _pts(r, unit: str = "") -> str:
    """A part with its interval; a part from fewer than ``FEW_GAMES`` games of its cause has no
    interval that covers (tests/test_explain.py), so it is flagged and shown without one."""
    if r["games_of_cause"] < FEW_GAMES:
        games = int(r["games_of_cause"])
        return f"{100 * r['part']:+.1f}{unit} (from {games:,} game{'s' if games != 1 else ''}: too few for a range)"
    return ranged(r["part"], r["lo"], r["hi"], unit=unit, signed=True)


def why_sentence(table: pd.DataFrame, seat: int, n: int, turns: np.ndarray | None = None) -> str:
    """'+4.8 (4.5 to 5.1) pp for the last player: +3.9 (3.6 to 4.2) from the final round ...,
    +0.6 (..) from the tie-break ..., +0.3 (..) elsewhere ...', the parts adding up to the total;
    then on whose turn its final-round wins were taken."""
    rows = table[table["seat"] == seat].set_index("cause")
    parts = [(cause, rows.loc[cause]) for cause in ("final_round", "tie_break", "elsewhere")
             if rows.loc[cause]["games_of_cause"] > 0]
    parts.sort(key=lambda x: -abs(x[1]["part"]))
    text = (f"{_pts(rows.loc['total'])} pp for {seat_words(seat, n)}: "
            + ", ".join(f"{_pts(r)} {CAUSE_WORDS[cause]}" for cause, r in parts))
    if turns is not None and turns[seat].sum() > 0:
        won = int(turns[seat].sum())
        own = turns[seat, seat] / won
        text += (f"; of the {won:,} games it won by taking the lead in the final round, {100 * own:.0f}% on its own "
                 "turn after the trigger")
    return text + "."


# ---------------------------------------------------------------------------------------------
# counterfactuals: the same seeds under each switch, paired
# ---------------------------------------------------------------------------------------------
def seed_wins(games: pd.DataFrame, n: int, rotations: int) -> np.ndarray:
    """Wins per seed and seat (seeds, n), the seeds in order (game_id // rotations)."""
    seed = games["game_id"].to_numpy() // rotations
    base = seed.min() if len(seed) else 0
    c = int(seed.max() - base + 1) if len(seed) else 0
    return np.bincount((seed - base) * n + games["winner_seat"].to_numpy(), minlength=c * n).reshape(c, n)


def seat_changes(base: np.ndarray, arm: np.ndarray, m: int, alpha: float = ALPHA) -> list[dict]:
    """Per seat: the arm's win rate minus the baseline's on the same seeds (``m`` games a seed),
    paired t interval and p-value over seeds."""
    d = (arm - base) / m
    c = len(d)
    out = []
    for p in range(base.shape[1]):
        mean = float(d[:, p].mean())
        sd = float(d[:, p].std(ddof=1)) if c > 1 else float("nan")
        se = sd / np.sqrt(c) if c > 1 else float("nan")
        half = float(stats.t.isf(alpha / 2, c - 1)) * se if c > 1 else float("nan")
        pval = float(2 * stats.t.sf(abs(mean) / se, c - 1)) if se > 0 else (1.0 if mean == 0 else 0.0)
        out.append({"seat": p, "base_rate": float(base[:, p].sum() / (c * m)), "rate": float(arm[:, p].sum() / (c * m)),
                    "change": mean, "lo": mean - half, "hi": mean + half, "p": pval})
    return out


@dataclass
class Arm:
    """One counterfactual: its label, what it changes (rules --set), per-seed wins, side measures."""

    label: str
    change: str
    wins: np.ndarray
    measures: dict = field(default_factory=dict)     # name -> per-seed means (seeds,)


def game_measures(games: pd.DataFrame, seats: pd.DataFrame, n: int, rotations: int) -> dict:
    """Per seed, the mean over its games of what a fix may change besides the seats: the game's
    length in turns (an end rule changes turns, not rounds), the majorities' share of all seats'
    score, the margin of victory (winner minus runner-up), lead changes (where the run recorded
    them)."""
    g = games.sort_values("game_id")
    s = seats.sort_values(["game_id", "seat"])
    score = s["score"].to_numpy().reshape(-1, n).astype(float)
    majority = sum(s[c].to_numpy() for c in MAJORITY_NAMES).reshape(-1, n).astype(float)
    top2 = np.sort(score, axis=1)[:, -2:]
    per_game = {"turns": g["turns"].to_numpy().astype(float),
                "majority share": majority.sum(axis=1) / np.maximum(score.sum(axis=1), 1),
                "margin (VP)": top2[:, 1] - top2[:, 0]}
    if "lead_changes" in g:
        per_game["lead changes"] = g["lead_changes"].to_numpy().astype(float)
    seed = g["game_id"].to_numpy() // rotations
    seed = seed - seed.min()
    count = np.bincount(seed)
    return {k: np.bincount(seed, weights=v) / count for k, v in per_game.items()}


def counterfactuals(base: Arm, arms: list[Arm], m: int, alpha: float = ALPHA) -> dict[str, pd.DataFrame]:
    """The tables of ``evora explain``'s counterfactuals (see the module): ``seats`` (every arm's
    change of every seat's win rate, Holm over arms and seats), ``fairness`` (each arm's seat
    unfairness and its change, Holm over the arms; ranked: the fixes), ``measures`` (what else
    each changes). Every arm holds the baseline's seeds, row for row."""
    rows = []
    for arm in arms:
        for r in seat_changes(base.wins, arm.wins, m, alpha):
            rows.append({"arm": arm.label, "change_made": arm.change, **r})
    seats_t = pd.DataFrame(rows)
    if len(seats_t):
        seats_t["p_holm"] = holm(seats_t["p"].to_numpy())
        seats_t["significant"] = seats_t["p_holm"] < alpha
    base_f = seat_fairness(base.wins, alpha=alpha)
    fair = [{"arm": base.label, "change_made": base.change, "unfairness": base_f.rms, "lo": base_f.rms_lo,
             "hi": base_f.rms_hi, "change_ms": 0.0, "change_lo": np.nan, "change_hi": np.nan, "p": np.nan,
             "seeds": base_f.seeds}]
    for arm in arms:
        cmp = compare_fairness(base.wins, arm.wins, paired=True, alpha=alpha)
        fair.append({"arm": arm.label, "change_made": arm.change, "unfairness": cmp.b.rms, "lo": cmp.b.rms_lo,
                     "hi": cmp.b.rms_hi, "change_ms": cmp.diff, "change_lo": cmp.lo, "change_hi": cmp.hi,
                     "p": cmp.p, "seeds": cmp.seeds})
    fair_t = pd.DataFrame(fair)
    fair_t["p_holm"] = np.r_[np.nan, holm(fair_t["p"].to_numpy()[1:])] if len(arms) else np.nan
    fair_t["significant"] = fair_t["p_holm"] < alpha
    fair_t = rank_fixes(fair_t)
    measures = []
    for arm in arms:
        for name, values in arm.measures.items():
            if name not in base.measures:
                continue
            d = values - base.measures[name]
            c = len(d)
            mean = float(d.mean())
            half = float(stats.t.isf(alpha / 2, c - 1) * d.std(ddof=1) / np.sqrt(c)) if c > 1 else float("nan")
            measures.append({"arm": arm.label, "measure": name, "base": float(base.measures[name].mean()),
                             "value": float(values.mean()), "change": mean, "lo": mean - half, "hi": mean + half})
    return {"seats": seats_t, "fairness": fair_t, "measures": pd.DataFrame(measures)}


def rank_fixes(fair: pd.DataFrame) -> pd.DataFrame:
    """The fixes in the order a designer should read them, numbered: the changes the paired test
    finds significantly fairer than the run's rules (Holm over the changes), fairest first; then
    the run's rules, followed by the changes no test tells from them; then those significantly less
    fair. Ranked on the estimate alone, a change that does nothing outranked the rules on noise."""
    fair = fair.drop(columns="rank", errors="ignore")
    sig = fair["significant"].astype(bool).to_numpy()
    change = fair["change_ms"].to_numpy(dtype=float)
    group = np.where(sig & (change < 0), 0, np.where(sig & (change > 0), 2, 1))
    base = (fair["arm"] == "the run's rules").to_numpy()
    order = np.lexsort((fair["unfairness"].to_numpy(dtype=float), ~base, group))
    out = fair.iloc[order].reset_index(drop=True)
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    return out


def fairer_fixes(fair: pd.DataFrame) -> pd.DataFrame:
    """The changes that make the seats significantly fairer than the run's rules, by the paired
    test on the seats' mean squared deviation, Holm over the changes; fairest first. Chosen on
    the replayed seeds, so their figures there favour them: a report quotes only
    :func:`confirmed_fixes`."""
    sig = fair["significant"].astype(bool)
    return fair[sig & (fair["change_ms"] < 0)].sort_values("unfairness", kind="stable")


def confirmed_fixes(fair: pd.DataFrame) -> pd.DataFrame:
    """The fairer fixes that were also fairer than the run's rules on fresh seeds among the run's
    own players (``evora explain``'s confirmation: ``confirmed`` column); none for a folder
    written before the confirmation existed."""
    better = fairer_fixes(fair)
    if "confirmed" not in better:
        return better.iloc[:0]
    return better[better["confirmed"].fillna("").astype(str) == "confirmed"]


# ---------------------------------------------------------------------------------------------
# what a reader sees
# ---------------------------------------------------------------------------------------------
METHOD = ("How to read it: each game's win is put down to one cause: a tie-break step when the winner tied the "
          "runner-up on VP; the final round when it won on VP but another seat would have won had the game "
          "ended when the end was triggered (the lead was taken in the turns after the trigger); elsewhere "
          "when it already led then. A seat's deviation from the fair share 1/n is the sum over the causes "
          "of the games of that cause it won beyond a fair share of them, so the parts add up to the total. "
          "Intervals are 95%, over seeds (a seed's games under every rotation share their stacks). The fixes "
          "replay the run's first seeds under each rule change, each game paired with the run's own game of "
          "the same seed and rotation; the seat unfairness is the root mean square of the seats' deviations "
          "(analysis/fairness.py); whether a change moved it is tested on the paired difference of the seats' "
          "mean squared deviations (Holm over the changes; the squared figures are in fixes.csv). The fix "
          "ranked first is chosen on those seeds, so its figures there favour it: it is played again on fresh "
          "seeds (a run seed of their own) with the run's rules, and quoted only when a paired test there finds "
          "it fairer (confirmation.csv). A part from "
          f"fewer than {FEW_GAMES} games of its cause is shown without a range: too few games for one that covers. "
          "docs/explain.md says more.")


def _cell(v, lo, hi, scale=100.0, unit=" pp", signed=True) -> str:
    return ranged(v, lo, hi, scale=scale, unit=unit, signed=signed)


def shown_parts(table: pd.DataFrame) -> pd.DataFrame:
    """The decomposition as a designer reads it: a row per seat, a column per cause."""
    n = int(table["seat"].max()) + 1
    rows = []
    for p in range(n):
        t = table[table["seat"] == p].set_index("cause")
        row = {"Seat": seat_words(p, n)}
        for cause in PARTS:
            r = t.loc[cause]
            if cause in CAUSES and r["games_of_cause"] == 0:
                continue
            name = {"total": "Total", "tie_break": "tie-break (its steps together)"}.get(cause, cause.replace("_", " "))
            row[name] = _pts(r, " pp")
        rows.append(row)
    return pd.DataFrame(rows)


def shown_fixes(fair: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame([{
        "Rank": int(r.rank), "Rules": r.arm,
        "Change made": r.change_made if isinstance(r.change_made, str) and r.change_made else "(none)",
        "Seat unfairness left": _cell(r.unfairness, r.lo, r.hi, signed=False),
        "p (Holm)": "" if not np.isfinite(r.p_holm) else ("< 0.001" if r.p_holm < 0.001 else f"{r.p_holm:.3f}"),
        **({"On fresh seeds": r.confirmed if isinstance(r.confirmed, str) else ""} if "confirmed" in fair else {}),
    } for r in fair.itertuples()])


def shown_measures(measures: pd.DataFrame) -> pd.DataFrame:
    if measures.empty:
        return pd.DataFrame(columns=["Rules", "Measure", "Run", "Under the change", "Change"])
    unit = {"turns": (1.0, " turns"), "majority share": (100.0, " pp"), "margin (VP)": (1.0, " VP"),
            "lead changes": (1.0, "")}
    return pd.DataFrame([{
        "Rules": r.arm, "Measure": r.measure, "Run": f"{r.base * unit[r.measure][0]:.2f}",
        "Under the change": f"{r.value * unit[r.measure][0]:.2f}",
        "Change": _cell(r.change, r.lo, r.hi, *unit[r.measure]),
    } for r in measures.itertuples()])


SUMMARY_FILES = {"parts": "decomposition.csv", "fixes": "fixes.csv", "seats": "counterfactual_seats.csv",
                 "measures": "side_effects.csv", "turns": "final_round_turns.csv", "about": "about.csv"}


def read_summary(folder) -> dict:
    """The tables an ``evora explain`` folder wrote (its ``summary/``) and its settings
    (``config``); ``about`` is its one row as a Series. ValueError if ``folder`` holds none."""
    folder = Path(folder)
    summary = folder / "summary"
    missing = [f for f in SUMMARY_FILES.values() if not (summary / f).is_file()]
    if missing or not (folder / "search.json").is_file():
        raise ValueError(f"{folder} holds no finished evora explain experiment (no summary/{(missing or ['search.json'])[0]})")
    try:
        out = {k: pd.read_csv(summary / f) for k, f in SUMMARY_FILES.items()}
        doc = json.loads((folder / "search.json").read_text(encoding="utf-8"))
    except (ValueError, pd.errors.ParserError) as exc:
        raise ValueError(f"{folder}: its summary cannot be read ({exc})") from None
    if doc.get("kind") != "explain" or out["about"].empty:
        raise ValueError(f"{folder} holds no evora explain experiment (its search.json is of another kind)")
    out["confirmation"] = None              # written since the confirmation on fresh seeds (issue 49)
    if (summary / "confirmation.csv").is_file():
        try:
            out["confirmation"] = pd.read_csv(summary / "confirmation.csv")
        except (ValueError, pd.errors.ParserError) as exc:
            raise ValueError(f"{folder}: its summary cannot be read ({exc})") from None
    out["about"] = out["about"].iloc[0]
    out["config"] = doc["config"]
    return out
