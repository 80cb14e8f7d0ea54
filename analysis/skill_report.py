"""The report's Skill section: each headline figure at every rung of a skill ladder, the verdict
per finding in words, and the rungs' ratings (the statistics: :mod:`analysis.skill_stats`)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import plots
from .confirm_stats import fix_quote
from .explain_stats import confirmed_fixes
from .numbers import PP, p_cell, pp, ranged
from .sections import Section, Table
from .skill_stats import Ladder, figure_table, rung_ratings, seat_correlations, verdicts
from .stats import ALPHA, FEW_SEEDS
from .verdicts import HOLDS, MOVING, ONE_RUNG, QUIET, UNEVEN, UNKNOWN, VARIES, VERDICTS


@dataclass
class SkillPart:
    section: Section
    findings: list                   # sentences for the Findings section, said first
    header: tuple                    # (label, text) for the report's header


def _cell(kind: str, v, lo, hi) -> str:
    if kind == "mean":
        return ranged(v, lo, hi, scale=1.0, unit=" rounds")
    if kind == "unfairness":
        return ranged(v, lo, hi, unit=PP)
    if kind == "rate change":
        return ranged(v, lo, hi, unit=PP, signed=True)
    return ranged(v, lo, hi)


def _slope(kind: str, slope: float) -> str:
    if not np.isfinite(slope):
        return ""
    return f"{slope:+.2f} rounds" if kind == "mean" else f"{100 * slope:+.2f}{PP}"


def rung_names(labels) -> list[str]:
    return [f"{i + 1}. {x}" for i, x in enumerate(labels)]


def settle_words(v, labels, seeds: int) -> str:
    """Where a figure settles, and what would tell when it is not known."""
    if v.settles == MOVING:
        return f"{MOVING}: a rung above {labels[-1]} would tell where it settles"
    if v.settles == UNKNOWN:
        if not np.isfinite(v.more_seeds):
            return f"{UNKNOWN}: --min-effect 0 leaves no room to show agreement"
        return (f"{UNKNOWN}: about {need_seeds(v.more_seeds, seeds):,} seeds a rung at the top two rungs would "
                "show it, if they agree")
    return v.settles


def need_seeds(factor: float, seeds: int) -> int:
    """The seeds a rung ``factor`` times ``seeds`` makes, to two significant figures (upward)."""
    n = factor * seeds
    step = 10 ** max(int(np.floor(np.log10(n))) - 1, 0)
    return int(np.ceil(n / step) * step)


def _pooled(v) -> str:
    return _cell(v.kind, v.pooled, v.pooled_lo, v.pooled_hi) if np.isfinite(v.pooled) else ""


def shown_verdicts(table: pd.DataFrame, verdict: pd.DataFrame, labels, seeds: int) -> pd.DataFrame:
    names = rung_names(labels)
    rows = []
    for v in verdict.itertuples():
        g = table[table["figure"] == v.figure].sort_values("rung")
        row = {"Finding": v.label}
        for r in g.itertuples():
            row[names[r.rung]] = _cell(v.kind, r.value, r.lo, r.hi)
        row["All rungs pooled"] = _pooled(v)
        row["Trend per rung"] = _slope(v.kind, v.slope)
        row["p (Holm)"] = p_cell(v.p_trend_holm)
        row["Significant at rungs (Holm)"] = (", ".join(str(r + 1) for r in v.significant_rungs) or "none"
                                              if np.isfinite(v.null) else "")
        row["Rungs differ, p (Holm)"] = p_cell(v.p_same_holm)
        row["Verdict"] = v.verdict
        row["Where it settles"] = settle_words(v, labels, seeds) if v.settles else ""
        rows.append(row)
    return pd.DataFrame(rows)


def shown_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame([{
        "Rung": int(r.rung) + 1, "Players": r.players,
        "Rating, Elo (95% range)": ranged(r.elo, r.ci_lo, r.ci_hi, scale=1.0, unit="", signed=True),
        "Duel games": f"{int(r.games):,}", "Won": f"{int(r.wins):,}",
    } for r in ratings.itertuples()])


def shown_steps(steps: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame([{
        "Step": f"{s.lower} -> {s.upper}",
        "Elo gain (95% range)": ranged(s.elo_gain, s.ci_lo, s.ci_hi, scale=1.0, unit="", signed=True),
        "p (Holm)": p_cell(s.p_holm), "Verdict": "stronger" if s.significant else "not shown stronger",
    } for s in steps.itertuples()])


def _finding_line(v, g, labels, seeds) -> str:
    lo, hi = g.iloc[0], g.iloc[-1]
    text = (f"{v.label}: {v.verdict} ({_cell(v.kind, lo.value, lo.lo, lo.hi)} with {labels[0]}, "
            f"{_cell(v.kind, hi.value, hi.lo, hi.hi)} with {labels[-1]}")
    if v.verdict == VARIES:
        low, high = g.loc[g["value"].idxmin()], g.loc[g["value"].idxmax()]
        text += (f"; from {_cell(v.kind, low.value, low.lo, low.hi)} with {low.rung_label} to "
                 f"{_cell(v.kind, high.value, high.lo, high.hi)} with {high.rung_label}, the rungs differ: "
                 f"Holm p {p_cell(v.p_same_holm) or 'n/a'}")
    elif np.isfinite(v.slope):
        text += f"; trend {_slope(v.kind, v.slope)} per rung, Holm p {p_cell(v.p_trend_holm) or 'n/a'}"
    if v.verdict == ONE_RUNG and v.carried_by >= 0:
        text += (f"; without rung {v.carried_by + 1} ({labels[v.carried_by]}) the trend is not significant, "
                 f"p {p_cell(v.p_without)}")
    text += ")"
    return text + (f"; {settle_words(v, labels, seeds)}." if v.settles else ".")


def _held(v, g) -> str:
    """A finding that holds, with its pooled value (the seat unfairness, pooled by p-values only:
    its rungs' range)."""
    if np.isfinite(v.pooled):
        return f"{v.label}, {_pooled(v)} over the rungs"
    low, high = g.loc[g["value"].idxmin()], g.loc[g["value"].idxmax()]
    return (f"{v.label}, from {_cell(v.kind, low.value, low.lo, low.hi)} to "
            f"{_cell(v.kind, high.value, high.lo, high.hi)} at the rungs")


def settle_line(verdict, labels, seeds, min_effect) -> str | None:
    """Where the findings in win rate settle, in one sentence; None when no figure is judged."""
    judged = verdict[verdict["settles"] != ""]
    if judged.empty:
        return None
    parts = []
    for v in judged.itertuples():
        if v.settles not in (MOVING, UNKNOWN):
            parts.append(f"{v.label}: {v.settles}")
    moving = [v.label for v in judged.itertuples() if v.settles == MOVING]
    if moving:
        parts.append(f"{MOVING}: {'; '.join(moving)} (a rung above {labels[-1]} would tell where "
                     f"{'it settles' if len(moving) == 1 else 'they settle'})")
    unknown = judged[judged["settles"] == UNKNOWN]
    if len(unknown):
        need = unknown["more_seeds"].to_numpy(dtype=float)
        if np.isfinite(need).all():
            lo, hi = need_seeds(need.min(), seeds), need_seeds(need.max(), seeds)
            tell = (f"about {lo:,} seeds a rung at the top two rungs would show it" if lo == hi else
                    f"about {lo:,} to {hi:,} seeds a rung at the top two rungs would show whether they settle")
        else:
            tell = "--min-effect 0 leaves no room to show agreement"
        parts.append(f"{UNKNOWN}: {len(unknown)} of {len(judged)} ({tell}, if they do)")
    return (f"Where the findings in win rate settle (each rung shown within ±{pp(min_effect)} of the top rung, "
            "the smallest effect that matters, --min-effect; two one-sided tests, Holm over the findings): "
            + "; ".join(parts) + ".")


def findings(table, verdict, steps, labels, seeds, min_effect) -> list[str]:
    """The Findings section's skill sentences: a count per verdict, then every finding that is
    not the same at every rung, where the findings settle, then the ladder's own check (its
    steps)."""
    counts = verdict["verdict"].value_counts()
    parts = [f"{k} ({counts[k]})" for k in VERDICTS if k in counts]
    out = [f"Against skill ({len(labels)} rungs, weakest first: {'; '.join(labels)}; {seeds:,} seeds each, "
           f"the same deals at every rung), the verdicts of {len(verdict)} headline findings: {', '.join(parts)}. "
           "A finding that rises or falls has a significant trend over the rungs that no single rung carries; "
           "one that holds at every rung differs from no effect over the rungs pooled, with the rungs consistent "
           "with one value; every test behind a verdict (each finding's trend, its heterogeneity, its pooled "
           "test, its top step, its test at each rung) is Holm-corrected over the whole ladder."]
    robust = [_held(v, table[table["figure"] == v.figure]) for v in verdict.itertuples() if v.verdict == HOLDS]
    if robust:
        out.append("Robust to skill (holds at every rung): " + "; ".join(robust) + ".")
    for v in verdict.itertuples():
        if v.verdict not in (HOLDS, UNEVEN, *QUIET):
            out.append(_finding_line(v, table[table["figure"] == v.figure].sort_values("rung"), labels, seeds))
    partly = [v.label for v in verdict.itertuples() if v.verdict == UNEVEN]
    if partly:
        out.append(f"{UNEVEN[0].upper()}{UNEVEN[1:]} (an effect over the rungs pooled or at some rungs, the rungs not "
                   "shown consistent with one value): " + "; ".join(partly) + ".")
    for quiet in QUIET:
        labels_quiet = [v.label for v in verdict.itertuples() if v.verdict == quiet]
        if labels_quiet:
            out.append(f"{quiet[0].upper()}{quiet[1:]}: " + "; ".join(labels_quiet) + ".")
    settled = settle_line(verdict, labels, seeds, min_effect)
    if settled:
        out.append(settled)
    if len(steps):
        weak = steps[~steps["significant"]]
        if weak.empty:
            out.append("The ladder's steps are measured: every rung beats the one below it in the duels "
                       f"(each step significant, Holm-corrected over {len(steps)} steps).")
        else:
            out.append("CAUTION: the ladder's order is not established at "
                       + "; ".join(f"{s.lower} -> {s.upper} (Holm p {p_cell(s.p_holm)})" for s in weak.itertuples())
                       + ": a trend over these rungs is a trend over players, not clearly over skill.")
    return out


def fixes_by_rung(ladder: Ladder) -> pd.DataFrame | None:
    """Every rung's fixes (``evora skill --explain-seeds``) as one table: rung, its players, and
    the fix's rank, seat unfairness left and whether its change was significant; None unless
    every rung was explained."""
    if not ladder.fixes or any(f is None for f in ladder.fixes):
        return None
    return pd.concat([f.assign(rung=i, players=label) for i, (f, label) in enumerate(zip(ladder.fixes, ladder.labels))],
                     ignore_index=True)


def shown_fixes(fixes: pd.DataFrame, labels) -> pd.DataFrame:
    """A row per fix, a column per rung: the seat unfairness it leaves (* = a significant change
    after Holm within the rung's own explain)."""
    names = rung_names(labels)
    rows = []
    for arm, g in fixes.groupby("arm", sort=False):
        row = {"Fix": arm}
        for r in g.itertuples():
            mark = " *" if bool(r.significant) else ""
            # a seat compensation is each rung's own: say which
            own = f" ({r.change_made.split('=', 1)[1]} VP)" if r.arm.startswith("seat compensation") else ""
            row[names[r.rung]] = ranged(r.unfairness, r.lo, r.hi, unit=PP) + mark + own
        rows.append(row)
    return pd.DataFrame(rows)


def fixes_line(fixes: pd.DataFrame, labels, confirmations=None, players: int | None = None) -> str:
    """The designer's question in one sentence: the best fix at the weakest and the strongest
    rung, and what the rules leave at each. A fix is named only when its rung's explain confirmed
    it on fresh seeds, and quoted with that confirmation (``confirmations``: each rung's table)."""
    def at(rung: int) -> str:
        f = fixes[fixes["rung"] == rung].sort_values("rank")
        rules = f[f["arm"] == "the run's rules"].iloc[0]
        now = (f"at rung {rung + 1} ({labels[rung]}) the rules' seat unfairness is "
               f"{ranged(rules['unfairness'], rules['lo'], rules['hi'], unit=PP)}")
        fixed = confirmed_fixes(f)
        conf = confirmations[rung] if confirmations is not None else None
        if len(fixed) and conf is not None:
            best = fixed.iloc[0]
            return f"{now} and the best fix, {best['arm']}, is confirmed: " + fix_quote(conf, best["arm"],
                                                                                      "the run's rules", players)
        return f"{now} and no rule change is confirmed to lower it (significantly, and again on fresh seeds)"

    top = len(labels) - 1
    return (f"Fixes at every rung (evora explain on each rung's seeds): {at(0)}; {at(top)}. "
            "Table skill_fixes has every fix at every rung.")


def rated_by(players: int) -> str:
    """What a rating difference means: a duel is played at the ladder's player count
    (``evora_sim.ladder.duel_fields``), so at 3 and 4 players it compares sides of seats, not
    one player against one."""
    if players == 2:
        return ("The ratings come from 2-player duels between the rungs: +100 Elo means winning 64% of "
                "the games against the other rung")
    seats = ("two seats of one rung and two of the other" if players == 4 else
             "two seats of one rung and one of the other, then one and two, on the same seeds")
    return (f"The ratings come from {players}-player duels between the rungs ({seats}, seats rotated; a game "
            "is won by the rung whose player wins it), so they describe the rungs as they play at "
            f"{players} players: +100 Elo means one rung's seats win 64% of such games against the "
            "other's, not that one of its players beats one of the other's")


def skill_part(ladder: Ladder, min_effect: float, backend: str = "local", scheduler: str | None = None,
               n_boot: int = 2000) -> SkillPart:
    table = figure_table(ladder, min_effect, backend=backend, scheduler=scheduler)
    verdict = verdicts(table, min_effect, seat_correlations(ladder))
    ratings, steps = rung_ratings(ladder, n_boot=n_boot)
    seeds = int(ladder.runs[0].manifest["config"]["games"])
    names = rung_names(ladder.labels)
    seat_rows = table[table["figure"].str.startswith("seat ")]
    half = 100 * float(np.median((seat_rows["hi"] - seat_rows["lo"]) / 2))
    precision = (f"At {seeds:,} seeds a rung, a seat's win rate is known to about ±{half:.1f}{PP} (the "
                 "median half-width of the seats' 95% ranges); more --games or a larger --budget narrow it.")
    note = ("Every headline figure measured at each rung of a skill ladder: the same seeds (the same deals) "
            "played with every seat filled by the rung's players, weakest first. 'Trend per rung' is the "
            "weighted least-squares slope of the figure on the rung's place; 'All rungs pooled' the figure's one "
            "value over the rungs. Verdicts: 'holds at every rung' (the pooled figure differs from no effect, and "
            "the rungs are consistent with one value: no difference between them and no trend even at the plain "
            "5%, every rung on the same side); 'rises/falls with skill' (a significant trend that stays "
            "significant with any one rung left out; 'away from' or 'toward' the fair share, fair seats or no "
            "effect); 'changes with skill, one rung carries it' (a significant trend that one rung carries "
            "alone); 'reverses' (significant in opposite directions at two rungs); 'varies with skill, no trend' "
            "(the rungs differ, by Cochran's test, without a trend); 'found, not shown at every rung' (an effect "
            "pooled or at some rung, the rungs not shown consistent); 'no effect at any rung' and, for a figure "
            "without a no-effect value (game length, shares), 'no difference found between rungs' (no test found "
            "one, which is not a finding that there is none). Every test behind a verdict (each finding's trend, "
            "its heterogeneity, its pooled test, its top step, its test at each rung as the rung's report gives "
            "it) is Holm-corrected in one family over the whole ladder, so a ladder where nothing has an effect "
            "states a finding in at most 5% of ladders. 'Where it settles' (figures in win rate): each rung below "
            "the top is tested for agreement with the top rung within the smallest effect that matters "
            f"({pp(min_effect)}, --min-effect) by two one-sided tests, downward from the rung below the top, a "
            "family of its own corrected by Holm's procedure over the findings: 'stops moving above rung k' "
            "(rungs k to the top agree), 'steady at every rung', 'still moving at the top' (the top step is a "
            "significant change) or 'not shown to settle' with the seeds a rung that would show it. The rungs "
            "share their deals, which correlates their estimates: for the seats it is measured from the seeds "
            "and taken into every test; for the other figures the pooled range allows for any correlation and "
            "the contrasts treat the rungs as independent, which a positive shared correlation makes "
            "conservative. The strongest cards and spaces are those of largest mean effect over the rungs; their "
            "effects are associations, not causes (see Card value). "
            f"{precision} {rated_by(ladder.players)} "
            "(Bradley-Terry on the Elo scale, ranges from a bootstrap over seeds; where a rung lost, or won, "
            f"in {FEW_SEEDS} seeds or fewer the bootstrap would only resample that record, so its range is open on "
            "that side ('> +X': at least X, no upper limit) and every other rung's on the other; the closed side, "
            "and the range of a step whose own duel was that one-sided, come from the duel record by an exact "
            "binomial bound); a step is significant "
            "when the bootstrap p-value of 'the upper rung is no stronger' is below "
            f"{ALPHA} after Holm's correction over the steps.")
    tables = [Table("skill_verdicts", verdict, shown_verdicts(table, verdict, ladder.labels, seeds), folded=False),
              Table("skill_figures", table, table.assign(rung=[names[i] for i in table["rung"]]), folded=True)]
    figures = [("Headline figures against skill", "skill_figures",
                lambda: plots.skill_figures(table, verdict, names))]
    if len(ratings):
        tables += [Table("skill_ratings", ratings, shown_ratings(ratings), folded=False),
                   Table("skill_steps", steps, shown_steps(steps), folded=False)]
        figures.append(("Strength of each rung", "skill_ratings",
                        lambda: plots.skill_ratings(ratings, ladder.players)))
    else:
        note += " No duels were given (runs named as rungs with --ladder), so the rungs have no ratings here."
    fixes = fixes_by_rung(ladder)
    if fixes is not None:
        tables.append(Table("skill_fixes", fixes, shown_fixes(fixes, ladder.labels), folded=False,
                            caption="The seat unfairness each rule change leaves at each rung (evora skill "
                                    "--explain-seeds: each rung's first seeds replayed under each change, paired "
                                    "with the rung's games; the seat compensation is each rung's own; * = a "
                                    "significant change after Holm within the rung)."))
    section = Section("Skill", note, tables, figures)
    header = ("Skill ladder", f"{len(ladder.labels)} rungs, weakest first: " + "; ".join(names)
              + f". {precision} The sections after Skill describe the top rung, {ladder.labels[-1]}.")
    said = findings(table, verdict, steps, ladder.labels, seeds, min_effect)
    if fixes is not None:
        said.append(fixes_line(fixes, ladder.labels, [s["confirmation"] for s in ladder.explained], ladder.players))
    return SkillPart(section, said, header)
