"""The report: findings in plain words, tables (also as CSV), figures, and the runs' manifests.

``build_report`` writes ``report.md`` (PNG figures beside it, SVG copies too) and
``report.html`` (one file, figures embedded as data URIs, opens offline), plus every table as
CSV. It is written into a temporary folder and renamed into place, so a failed build never
leaves a half report behind.
"""
from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from evora_sim.fsutil import atomic_folder

from . import numbers, plots
from . import tables as T
from .stats import ALPHA, MIN_EFFECT, p_text, verdict

REPORT_KIND = "report"          # the marker kind of a report folder (evora_sim.fsutil)
TITLE = "Évora balance report"
TIES = ("Every game has exactly one winner: the engine breaks ties for the win by the rules "
        "(D18: fewer parts left, then the later seat).")


@dataclass
class Table:
    name: str                      # CSV file name (without .csv)
    df: pd.DataFrame
    pct: tuple = ()                # columns shown as percentages (differences: percentage points)
    show: list | None = None       # columns shown in the report (the CSV has them all)


@dataclass
class Section:
    title: str
    note: str
    tables: list = field(default_factory=list)
    figures: list = field(default_factory=list)    # (title, file stem, draw function)


# ---------------------------------------------------------------------------------------------
# words
# ---------------------------------------------------------------------------------------------
def _est(v, lo, hi, scale=100.0, unit="%", signed=False) -> str:
    """'25.57% ± 0.09%': the estimate and its 95% interval, in the digits the interval needs."""
    return numbers.estimate(v, lo, hi, scale, unit, signed)


def _pct(v, digits=1) -> str:
    return f"{100 * v:.{digits}f}%"


def _signed_pp(v) -> str:
    return f"{100 * v:+.1f}"


def seating_note(runs) -> str:
    """How seat effects were kept apart from strategy effects, in plain words."""
    mirror = all(len(set(r.manifest["config"]["strategies"])) == 1 for r in runs)
    rotated = all(r.manifest["config"]["seat_rotation"] for r in runs)
    if mirror:
        return "Every seat played the same strategy, so seat differences are seat effects alone."
    if rotated:
        return ("Seat rotation was used: every seed was played once under each cyclic rotation of "
                "the strategies (same seeds, strategies rotated), so each strategy sat in each "
                "seat equally often on the same deals, and seat differences are not strategy "
                "differences.")
    if any(r.manifest["config"]["seat_rotation"] for r in runs):
        return ("Some runs used seat rotation and some did not: seat differences of the runs "
                "without it mix seat and strategy effects.")
    return ("Seats played different strategies without seat rotation: seat differences mix seat "
            "and strategy effects.")


def _by_count(items) -> str:
    """'a (2 players), b (3), c (4)' from [(n, text), ...]."""
    items = list(items)
    return ", ".join(f"{t} ({n} players)" if i == 0 else f"{t} ({n})" for i, (n, t) in enumerate(items))


def seat_findings(adv, tests, runs, min_effect: float = MIN_EFFECT) -> list[str]:
    out = []
    rot = {r.manifest["config"]["players"]: r.manifest["config"]["seat_rotation"] for r in runs}
    mixed = {r.manifest["config"]["players"]: len(set(r.manifest["config"]["strategies"])) > 1 for r in runs}
    for n, grp in adv.groupby("n_players"):
        first = grp[grp["seat"] == 0].iloc[0]
        t = tests[tests["n_players"] == n].iloc[0]
        how = ""
        if mixed.get(n):
            how = " (seat rotation: every strategy in every seat)" if rot.get(n) else " (no seat rotation: mixed with strategy)"
        family = ("one test, the t test of seat 0's per-seed wins: at 2 players seat 1 wins exactly "
                  "the other games" if n == 2 else f"Holm over {n} seats")
        clustered = "clustered by seed, " if np.isfinite(first.get("design_effect", np.nan)) else ""
        text = (f"Seat 0 (the first player) wins {_est(first['win_rate'], first['ci_lo'], first['ci_hi'])} "
                f"of {n}-player games{how}, fair share {_pct(1 / n)}: "
                f"{verdict(first['p_holm'], size=first['diff'], min_effect=min_effect)}, "
                f"{p_text(first['p_holm'])} ({int(first['games']):,} games; {clustered}{family}).")
        worst = grp.loc[grp["diff"].abs().idxmax()]
        if int(worst["seat"]) != 0 and worst["significant"]:
            text += (f" Seat {int(worst['seat'])} wins {_est(worst['win_rate'], worst['ci_lo'], worst['ci_hi'])}: "
                     f"{verdict(worst['p_holm'], size=worst['diff'], min_effect=min_effect)}, {p_text(worst['p_holm'])}.")
        if np.isfinite(t["unfairness_lo"]):
            judged = ("consistent with fair seats" if not t["significant"] else
                      "the seats are not all fair" + (", but the unfairness is negligible (below "
                                                      f"{numbers.points(min_effect)})" if t["negligible"] else ""))
            test = "the same test" if n == 2 else (f"{p_text(t['p'])}; Hotelling test on {int(t['seeds']):,} "
                                                   "seeds as the independent units")
            text += (f" Seat unfairness (root mean square of the seats' deviations from the fair share): "
                     f"{_est(t['unfairness'], t['unfairness_lo'], t['unfairness_hi'], unit=' points')}; "
                     f"{judged} ({test}).")
        out.append(text)
    return out


def strategy_findings(rat, mu, min_effect: float = MIN_EFFECT) -> list[str]:
    out = []
    for n, grp in rat.groupby("n_players"):
        grp = grp.sort_values("elo", ascending=False)
        if len(grp) < 2:
            continue
        top, second, low = grp.iloc[0], grp.iloc[1], grp.iloc[-1]
        row = mu[(mu["n_players"] == n) & (mu["strategy"] == top["strategy"]) & (mu["opponent"] == second["strategy"])]
        # one decimal when the interval is narrower than 2 Elo points (large runs)
        dec = 1 if (grp["ci_hi"] - grp["ci_lo"]).max() < 2 else 0
        text = (f"In {n}-player games {top['strategy']} rates highest (Elo {top['elo']:+.{dec}f}, 95% CI "
                f"{top['ci_lo']:+.{dec}f} to {top['ci_hi']:+.{dec}f}")
        text += (f"; lowest: {low['strategy']} {low['elo']:+.{dec}f}, {low['ci_lo']:+.{dec}f} to "
                 f"{low['ci_hi']:+.{dec}f})" if len(grp) > 2 else ")")
        if len(row):
            r = row.iloc[0]
            what = f"wins against {second['strategy']} in" if n == 2 else f"finishes ahead of {second['strategy']} in"
            text += (f": it {what} {_est(r['win_rate'], r['ci_lo'], r['ci_hi'])} of their "
                     f"{'games' if n == 2 else 'shared games'}, "
                     f"{verdict(r['p_holm'], size=r['win_rate'] - 0.5, min_effect=min_effect)}, {p_text(r['p_holm'])}.")
        else:
            text += "."
        out.append(text)
    return out


def exposure_findings(t, label, verb, what, section, min_effect: float = MIN_EFFECT) -> list[str]:
    """Per player count, the largest significant adjusted differences (one up, one down)."""
    out = []
    for n, grp in t.groupby("n_players"):
        sig = grp[grp["significant"]]
        if sig.empty:
            out.append(f"No {what}'s win rate when used differs significantly in {n}-player games once "
                       "strategy and seat are adjusted for.")
            continue
        best, worst = sig.loc[sig["adj_diff"].idxmax()], sig.loc[sig["adj_diff"].idxmin()]
        picks = ([best] if best["adj_diff"] > 0 else []) + ([worst] if worst["adj_diff"] < 0 else [])
        items = [f"{r[label]} {_est(r['adj_diff'], r['adj_lo'], r['adj_hi'], unit='', signed=True)} points "
                 f"(raw {_signed_pp(r['diff'])}, {p_text(r['p_adj_holm'])})" for r in picks]
        small = int(sig["negligible"].sum())
        note = f", {small} of them negligible (below {numbers.points(min_effect)})" if small else ""
        out.append(f"{n} players, seats that {verb}: largest differences in win rate when used, adjusted for "
                   f"strategy and seat: {'; '.join(items)}; {len(sig)} of {len(grp)} significant "
                   f"(Holm; seeds as clusters){note}. Associations, not causes (see {section}).")
    return out


def majority_findings(share, outcomes, margin, shape, triggers) -> list[str]:
    """The descriptive figures, each with the number of seat-games or games behind it."""
    out = []
    rows = [(n, grp.set_index("group")) for n, grp in share.groupby("n_players")]
    out.append("Majorities (columns, heights 1-4, capitals) give "
               + _by_count((n, _est(g.loc['all seats', 'mean_share'], g.loc['all seats', 'ci_lo'], g.loc['all seats', 'ci_hi'])
                            + f" of {int(g.loc['all seats', 'seat_games']):,} seat-games") for n, g in rows)
               + " of a seat's final score; for winners "
               + _by_count((n, f"{_pct(g.loc['winners', 'mean_share'])} of {int(g.loc['winners', 'seat_games']):,}")
                           for n, g in rows) + " (descriptive).")
    if len(outcomes):
        nob = outcomes[outcomes["outcome"] == "white or unclaimed"]
        top = nob.loc[nob["share"].idxmax()]
        out.append(f"The {top['majority']} majority is scored by no player (held by white or "
                   f"unclaimed) in {_est(top['share'], top['ci_lo'], top['ci_hi'])} of "
                   f"{int(top['n_players'])}-player games ({int(top['games']):,} games), the most of "
                   "any majority (descriptive).")
    out.append("Median margin of victory "
               + _by_count((int(r["n_players"]), f"{r['median']:.0f} VP of {int(r['games']):,} games")
                           for _, r in margin.iterrows())
               + "; games decided by the tie-break "
               + _by_count((int(r["n_players"]), _est(r['share_tiebreak'], r['tiebreak_lo'], r['tiebreak_hi']))
                           for _, r in margin.iterrows()) + " (descriptive).")
    ends = []
    for _, r in shape.iterrows():
        tr = triggers[triggers["n_players"] == r["n_players"]]
        main = tr.loc[tr["share"].idxmax()]
        ends.append((int(r["n_players"]), f"{_pct(main['share'], 0)} {main['end_trigger'].replace('_', ' ')}"))
    out.append("Games last "
               + _by_count((int(r["n_players"]), _est(r['rounds_mean'], r['rounds_lo'], r['rounds_hi'], 1, '')
                            + f" rounds over {int(r['games']):,} games") for _, r in shape.iterrows())
               + " on average; the most common end: " + _by_count(ends) + " (descriptive).")
    lim = triggers[(triggers["end_trigger"] == "round_limit") & (triggers["count"] > 0)]
    for _, r in lim.iterrows():
        out.append(f"{int(r['count']):,} {int(r['n_players'])}-player games hit the simulation's round "
                   "limit (P4) instead of a rule's end trigger.")
    return out


# ---------------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------------
PP = {"diff", "diff_lo", "diff_hi", "adj_diff", "adj_lo", "adj_hi"}
POINTS = {"unfairness", "unfairness_lo", "unfairness_hi", "max_deviation"}    # unsigned points
RATE = ("win_rate", "ci_lo", "ci_hi", "fair_share", "diff")
SEAT_SHOW = ["n_players", "seat", "games", "wins", "win_rate", "ci_lo", "ci_hi", "fair_share", "diff",
             "design_effect", "p_holm", "significant", "negligible", "mean_score", "score_lo", "score_hi",
             "mean_margin", "margin_lo", "margin_hi"]
FAIRNESS_SHOW = ["n_players", "games", "seeds", "unfairness", "unfairness_lo", "unfairness_hi",
                 "max_deviation", "t_squared", "df1", "df2", "p", "significant", "negligible", "design_effect"]
CARD_SHOW = ["n_players", None, "times", "per_game", "share_used", "vp_per_play", "win_used", "win_not",
             "diff", "diff_lo", "diff_hi", "design_effect", "adj_diff", "adj_lo", "adj_hi", "odds_ratio",
             "p_adj_holm", "significant", "negligible"]
CARD_PCT = ("share_used", "win_used", "win_used_lo", "win_used_hi", "win_not", "win_not_lo",
            "win_not_hi", "diff", "diff_lo", "diff_hi", "adj_diff", "adj_lo", "adj_hi")


def until_sure(runs) -> pd.DataFrame:
    """The headline metrics of each run played with --until-ci at the level its stopping keeps
    valid (1 - 0.05/K over its K planned looks)."""
    from .variants import game_data, run_metrics

    frames = []
    for r in runs:
        seq = r.manifest.get("sequential")
        if seq:
            table = run_metrics(game_data(r), alpha=seq["alpha_per_look"])
            table.insert(0, "run", str(r.out))
            table["level"] = 1 - seq["alpha_per_look"]
            table["interval"] = [numbers.bracket(x.value, x.lo, x.hi, *numbers.units(x.kind)) for x in table.itertuples()]
            frames.append(table)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def analyse(runs, n_boot: int = 1000, min_effect: float = MIN_EFFECT) -> tuple[list[str], list[Section], T.Dataset]:
    data = T.load(runs)
    seats = data.seats
    adv, tests = T.seat_advantage(seats, min_effect)
    strat = T.strategy_win_rates(seats)
    mu = T.matchups(seats)
    rat = T.ratings(seats, n_boot=n_boot)
    cards = T.card_value(data, min_effect)
    spaces = T.space_value(data, min_effect)
    sure = until_sure(runs)
    vp = T.vp_by_category(seats)
    outcomes = T.majority_outcomes(data)
    held = T.columns_held(data)
    share = T.majority_share(seats)
    margin = T.victory_margin(seats)
    shape = T.game_shape(data)
    triggers = T.end_triggers(data)
    dists = T.score_distribution(seats)
    margins = T.victory_margins(seats)

    facts = []
    partial = [r for r in runs if len(r.done_chunks()) < len(r.manifest["chunks"])]
    for r in partial:
        facts.append(f"PARTIAL RUN: {r.out} is incomplete; only {len(r.done_chunks())} of "
                     f"{len(r.manifest['chunks'])} chunks are analysed.")
    for r in runs:
        seq = r.manifest.get("sequential")
        if seq:
            from evora_sim.sequential import describe

            facts.append(f"RUN UNTIL SURE: {r.out} was played with {describe(seq)}. Method: "
                         f"{seq['method']} The tables and findings of this report show plain 95% "
                         "intervals, which do not account for the stopping; the headline metrics "
                         "with the adjusted intervals that do (level "
                         f"{1 - seq['alpha_per_look']:.4g}) are in the section 'Run until sure'.")
    facts += seat_findings(adv, tests, runs, min_effect)
    facts += strategy_findings(rat, mu, min_effect)
    facts += exposure_findings(cards, "card", "played a card or took a tile", "card effect or instant tile",
                               "Card value", min_effect)
    facts += exposure_findings(spaces, "space", "used a Construction Site space", "Construction Site space",
                               "Construction Site spaces", min_effect)
    facts += majority_findings(share, outcomes, margin, shape, triggers)

    rotated = tests["seat_rotation"].any()
    deff_note = ""
    if rotated:
        deff_note = (" Design effect: the variance of a seat's win rate over seeds relative to "
                     "independent games. Above 1 the interval and test use the effective sample "
                     "(seat-games / design effect); below 1 the plain Wilson interval and exact "
                     "binomial test are kept (slightly conservative).")
    negligible_note = (f" 'negligible': below {numbers.points(min_effect)} of win rate, the smallest "
                       "difference that matters (evora report --min-effect), even when significant.")
    sections = [
        Section("Seat advantage",
                "Win rate per seat with 95% Wilson intervals against the fair share 1/n, clustered by "
                "seed under seat rotation; each seat tested (exact binomial, or the score test on the "
                "effective sample), Holm-corrected over the seats of a player count from 3 players "
                "on; at 2 players the two seats' tests are one and the same test (the t test of seat "
                "0's per-seed wins, which is also the test of all seats fair below), so it is not "
                "corrected. Mean score and mean margin (own score minus the best other score in the "
                "game) with 95% t intervals." + deff_note + " Second table, per player count: the "
                "seat unfairness, the root mean square of the seats' deviations from the fair share "
                "(points of win rate; 0 = every seat wins 1/n), estimated without the upward bias of "
                "noise, with a 95% Feldman-Cousins interval that covers at its nominal rate at and "
                "near a fair game, and the test of \"all seats fair\" (Hotelling's T-squared on the "
                "per-seed win counts: the seeds are the independent units, so the games a seed shares "
                "its stacks with are not counted as independent; p; the interval excludes 0 exactly "
                "when p < 0.05). max_deviation is the largest |win rate - 1/n| (descriptive: noise "
                "pushes it up). analysis/fairness.py documents the method." + negligible_note + " "
                + seating_note(runs),
                [Table("seat_advantage", adv, RATE, SEAT_SHOW),
                 Table("seat_test", tests, tuple(POINTS), FAIRNESS_SHOW)],
                [("Win rate by seat", "seat_win_rates", lambda: plots.seat_win_rates(adv)),
                 ("Final score distribution by seat", "score_by_seat", lambda: plots.score_by_seat(dists))]),
        Section("Strategy match-ups",
                "Win rate of each strategy over its seat-games (95% Wilson intervals); each strategy "
                "against each other: in 2-player games the share of their games it won, in 3- and "
                "4-player (mixed) fields the share of the games with both at the table in which it "
                "finished ahead of the other (exact binomial test against 50%, Holm over the pairs "
                "of a player count); and Bradley-Terry ratings fitted to those pairwise results, on "
                "the Elo scale (mean 0; +100 = finishes ahead of a 0-rated strategy 64% of the time), "
                "with 95% intervals from a bootstrap over seeds (1000 replicates, a seed's rotations "
                "kept together).",
                [Table("strategy_win_rates", strat, ("win_rate", "ci_lo", "ci_hi", "fair_share")),
                 Table("matchups", mu, ("win_rate", "ci_lo", "ci_hi")),
                 Table("ratings", rat)],
                [("Strategy match-ups", "matchups", lambda: plots.matchup_heatmap(mu))] if len(mu) else []),
        Section("Card value",
                "For each card effect (played from hand) and instant bonus tile (taken), per player "
                "count: times played, plays per game, the share of seat-games that played it at "
                "least once, VP scored while resolving one play (0 for effects that score only at the "
                "end, such as placing or flipping an Emperor tile), Temple uses of the effect; the "
                "win rate of seats that played it vs. seats that did not and their difference "
                "(Newcombe interval, widened by the design effect of the difference when above 1: "
                "the seats of one game share one winner and a seed's rotations its stacks, so the "
                "seed is the independent unit), and the win rate when played, adjusted for strategy "
                "and seat (logistic regression with seed-clustered, robust standard errors: the "
                "average difference in win rate between played and not played over all seat-games, "
                "with a delta-method interval, and the odds ratio; p-values Holm-corrected over the "
                "16)." + negligible_note + " KNOWN BIAS: \"win rate when played\" is an "
                "association, not the card's value. Seats play cards when they can use them, in "
                "longer games, with more turns and more cards in hand, and a strong position both "
                "wins and lets a seat play more; a weak strategy may lean on a card it plays badly. "
                "The adjustment removes strategy and seat, not these; read large effects as leads "
                "for a designer to test (for example with a rules variant), not as proof.",
                [Table("card_value", cards, CARD_PCT, [c or "card" for c in CARD_SHOW])],
                [("Card value (win rate when played, adjusted)", "card_value",
                  lambda: plots.forest(cards, "card", "Card effects and instant tiles: win rate when played vs. not, adjusted"))]),
        Section("Construction Site spaces",
                "The same for each Construction Site space (its action carried out at least once by "
                "the seat; the tables record no VP per space), with the same bias: a seat's position "
                "decides which spaces it can reach and wants.",
                [Table("space_value", spaces, CARD_PCT, [c or "space" for c in CARD_SHOW if c != "vp_per_play"])],
                [("Construction Site spaces (win rate when used, adjusted)", "space_value",
                  lambda: plots.forest(spaces, "space", "Construction Site spaces: win rate when used vs. not, adjusted"))]),
        Section("Majority scoring",
                "VP from each scoring category by seat and by strategy (mean with 95% interval, sd, "
                "quartiles, 90th percentile, share of seat-games scoring in it; 'score' is the final "
                "total). Height and capitals majorities per game: won outright by one player, tied "
                "(tied players score the tie value), or scored by no player - which means white held "
                "it or no colour had the minimum parts: the result tables do not record white's "
                "standing, so these two are reported together. Column majorities held per player at "
                "the end (column-majority VP / VP per column). Share of the final score from "
                "majorities (columns, heights, capitals). Margin of victory: winner minus runner-up. "
                + TIES,
                [Table("vp_by_category", vp, ("share_nonzero",)),
                 Table("majority_outcomes", outcomes, ("share", "ci_lo", "ci_hi")),
                 Table("columns_held", held, ("share_0", "share_1", "share_2", "share_3", "share_4+",
                                              "share_of_columns")),
                 Table("majority_share", share, ("pooled_share", "mean_share", "ci_lo", "ci_hi")),
                 Table("victory_margin", margin, ("share_tiebreak", "tiebreak_lo", "tiebreak_hi",
                                                  "share_within_5", "within_5_lo", "within_5_hi"))],
                [("Score breakdown by strategy", "score_breakdown", lambda: plots.score_breakdown(vp)),
                 ("Majority outcomes", "majority_outcomes", lambda: plots.majority_outcomes(outcomes)),
                 ("Margin of victory", "victory_margin", lambda: plots.victory_margin(margins))]),
        Section("Game shape",
                "Rounds and turns per game (mean with 95% interval, 10th/50th/90th percentiles, "
                "maximum), final scores of all seats and of winners, and the share of games ending "
                "by each trigger (95% Wilson intervals).",
                [Table("game_shape", shape), Table("end_triggers", triggers, ("share", "ci_lo", "ci_hi"))],
                [("Game length", "game_length", lambda: plots.game_length(data.games))]),
    ]
    if len(sure):
        sections.append(Section(
            "Run until sure",
            "Runs played with --until-ci: the headline metrics with the intervals their stopping "
            "keeps valid, at level 1 - 0.05/K over the K planned looks (column level): "
            "cluster-robust (seed = cluster) t intervals, and the Feldman-Cousins interval for the "
            "seat unfairness (points). The other sections show plain 95% intervals.",
            [Table("until_sure", sure, (), ["run", "metric", "interval", "level", "games"])]))
    return facts, sections, data


def build_report(runs, out: str | Path, n_boot: int = 1000, min_effect: float = MIN_EFFECT) -> Path:
    out = Path(out)
    facts, sections, _ = analyse(runs, n_boot=n_boot, min_effect=min_effect)
    manifests = [r.manifest for r in runs]
    partial = {str(r.out): (len(r.done_chunks()), len(r.manifest["chunks"])) for r in runs}

    with atomic_folder(out, REPORT_KIND) as tmp:
        figures = {}
        for sec in sections:
            for title, stem, draw in sec.figures:
                figures[stem] = plots.save(draw(), tmp, stem)
            for t in sec.tables:
                t.df.to_csv(tmp / f"{t.name}.csv", index=False)
        _write_markdown(tmp / "report.md", facts, sections, figures, manifests, partial)
        _write_html(tmp / "report.html", facts, sections, figures, manifests, partial)
    return out


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------
def _fmt(t: Table) -> pd.DataFrame:
    df = t.df[[c for c in (t.show or t.df.columns) if c in t.df.columns]].copy()
    for col in df.columns:
        if df[col].dtype.kind != "f":
            continue
        if col in t.pct and col in PP:
            df[col] = (100 * df[col]).map(lambda v: "" if not np.isfinite(v) else f"{v:+.2f} pp")
        elif col in t.pct and col in POINTS:
            df[col] = (100 * df[col]).map(lambda v: "" if not np.isfinite(v) else f"{v:.2f} pp")
        elif col in t.pct:
            df[col] = (100 * df[col]).map(lambda v: "" if not np.isfinite(v) else f"{v:.2f}%")
        elif col == "p" or col.startswith("p_"):
            df[col] = df[col].map(lambda v: "" if not np.isfinite(v) else ("<1e-300" if v < 1e-300 else f"{v:.2g}"))
        else:
            df[col] = df[col].map(lambda v: "" if not np.isfinite(v) else f"{v:.2f}")
    return df


def _manifest_summary(m: dict, done: tuple[int, int]) -> dict:
    keep = ("command", "created", "package_version", "rules_hash", "rules_source", "python", "numpy", "pandas")
    extra = {}
    if m.get("sequential"):
        seq = m["sequential"]
        extra["sequential"] = {k: seq.get(k) for k in ("method", "width", "metrics", "looks_planned",
                                                         "alpha_per_look", "stopped_at_seeds", "reason")}
    return {"config": m["config"], **{k: m.get(k) for k in keep}, **extra,
            "chunks_analysed": f"{done[0]} of {done[1]}"}


def _anchor(title: str) -> str:
    return title.lower().replace(" ", "-")


def _write_markdown(path, facts, sections, figures, manifests, partial):
    lines = [f"# {TITLE}", "", "## Findings", ""]
    lines += [f"- {f}" for f in facts]
    lines += ["", f"Significance level {ALPHA}; intervals are 95%. {TIES}"]
    for sec in sections:
        lines += ["", f"## {sec.title}", "", sec.note]
        for t in sec.tables:
            lines += ["", f"Table `{t.name}.csv`:", "", _fmt(t).to_markdown(index=False)]
        for title, stem, _ in sec.figures:
            lines += ["", f"![{title}]({figures[stem].name})"]
    lines += ["", "## Runs", ""]
    for m, (where, done) in zip(manifests, partial.items()):
        lines += [f"`{where}`", "", "```json", json.dumps(_manifest_summary(m, done), indent=1, sort_keys=True,
                                                           ensure_ascii=False), "```", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_html(path, facts, sections, figures, manifests, partial):
    esc = html.escape
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{TITLE}</title>",
             "<style>body{font-family:system-ui,sans-serif;max-width:80em;margin:2em auto;padding:0 1em;"
             "line-height:1.4}table{border-collapse:collapse;font-size:85%;margin:.5em 0}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f3f3f3;"
             "position:sticky;top:0}td:nth-child(-n+3){text-align:left}img{max-width:100%}"
             "pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:85%}"
             ".scroll{max-height:32em;overflow:auto}li{margin:.25em 0}</style></head><body>",
             f"<h1>{TITLE}</h1>", "<nav>" + " · ".join(
                 f"<a href='#{_anchor(s)}'>{esc(s)}</a>" for s in ["Findings"] + [x.title for x in sections] + ["Runs"])
             + "</nav>", "<h2 id='findings'>Findings</h2><ul>"]
    parts += [f"<li>{esc(f)}</li>" for f in facts]
    parts.append(f"</ul><p>Significance level {ALPHA}; intervals are 95%. {esc(TIES)}</p>")
    for sec in sections:
        parts.append(f"<h2 id='{_anchor(sec.title)}'>{esc(sec.title)}</h2><p>{esc(sec.note)}</p>")
        for t in sec.tables:
            body = _fmt(t).to_html(index=False, border=0)
            parts.append(f"<p>Table <code>{esc(t.name)}.csv</code> ({len(t.df)} rows)</p>")
            parts.append(f"<div class='scroll'>{body}</div>" if len(t.df) > 25 else body)
        for title, stem, _ in sec.figures:
            data = base64.b64encode(figures[stem].read_bytes()).decode()
            parts.append(f"<figure><img alt='{esc(title)}' src='data:image/png;base64,{data}'>"
                         f"<figcaption>{esc(title)}</figcaption></figure>")
    parts.append("<h2 id='runs'>Runs</h2>")
    for m, (where, done) in zip(manifests, partial.items()):
        parts.append(f"<p><code>{esc(where)}</code></p><pre>"
                     f"{esc(json.dumps(_manifest_summary(m, done), indent=1, sort_keys=True, ensure_ascii=False))}</pre>")
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
