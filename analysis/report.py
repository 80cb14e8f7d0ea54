"""The report: findings in plain words, tables (also as CSV), figures, and the runs' manifests.

``build_report`` writes ``report.md`` (PNG figures beside it) and ``report.html`` (one file,
figures embedded, opens offline). It is written into a temporary folder and renamed into
place, so a failed build never leaves a half report behind.
"""
from __future__ import annotations

import base64
import html
import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from . import plots
from .stats import ALPHA, p_text
from .tables import game_shape, load_seats, seat_advantage, strategy_win_rates


def findings(adv: pd.DataFrame, tests: pd.DataFrame) -> list[str]:
    """One sentence per player count on the first player's advantage, and the seat test."""
    out = []
    for n, grp in adv.groupby("n_players"):
        first = grp[grp["seat"] == 0].iloc[0]
        half = 100 * (first["ci_hi"] - first["ci_lo"]) / 2
        verdict = "significant" if first["significant"] else "not significant"
        out.append(
            f"Seat 0 (first player) wins {100 * first['win_rate']:.1f}% ± {half:.1f}% of "
            f"{n}-player games ({int(first['games']):,} games), fair share {100 / n:.1f}%: "
            f"{verdict}, {p_text(first['p_holm'])} (exact binomial, Holm-corrected over {n} seats).")
        t = tests[tests["n_players"] == n].iloc[0]
        verdict = "differ significantly" if t["significant"] else "do not differ significantly"
        out.append(f"Across the {n} seats, win counts {verdict} from equal shares "
                   f"(chi-square {t['chi_square']:.1f}, df {int(t['df'])}, {p_text(t['p'])}).")
    return out


def seating_note(runs) -> str:
    """How seat effects were kept apart from strategy effects, in plain words."""
    mirror = all(len(set(r.manifest["config"]["strategies"])) == 1 for r in runs)
    rotated = all(r.manifest["config"]["seat_rotation"] for r in runs)
    if mirror:
        return "Every seat played the same strategy, so seat differences are seat effects alone."
    if rotated:
        return ("Seat rotation was used: every seed was played under each rotation of the "
                "strategies, so each strategy sat in each seat equally often and seat effects "
                "are not strategy effects.")
    return ("Seats played different strategies without seat rotation: seat differences mix seat "
            "and strategy effects.")


def _fmt(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for col in out.columns:
        if out[col].dtype.kind == "f":
            if col.startswith(("win_rate", "ci_", "fair", "diff", "end_")):
                out[col] = (100 * out[col]).map(lambda v: f"{v:.2f}%")
            elif col.startswith("p"):
                out[col] = out[col].map(lambda v: f"{v:.2g}")
            else:
                out[col] = out[col].map(lambda v: f"{v:.2f}")
    return out


def build_report(runs, out: str | Path) -> Path:
    out = Path(out)
    seats = load_seats(runs)
    adv, tests = seat_advantage(seats)
    strat = strategy_win_rates(seats)
    shape = game_shape(runs)
    sections = [
        ("Seat advantage", adv, "Win rate per seat with 95% Wilson intervals; each seat tested "
         "against the fair share 1/n (exact binomial, Holm-corrected within a player count). "
         "Margin: own score minus the best other score in the game. "
         + seating_note(runs)),
        ("Seat test", tests, "Chi-square test of the win counts per seat against equal shares."),
        ("Strategy win rates", strat, "Win rate of each strategy per player count (seat-games), "
         "with 95% Wilson intervals."),
        ("Game shape", shape, "Rounds and turns per game and how games ended."),
    ]
    rounds = {r.manifest["config"]["players"]: r.table("games", columns=["rounds"])["rounds"].values
              for r in runs}
    figures = [
        ("Win rate by seat", lambda d: plots.save(plots.seat_win_rates(adv), d, "seat_win_rates")),
        ("Final score by seat", lambda d: plots.save(plots.score_by_seat(seats), d, "score_by_seat")),
        ("Game length", lambda d: plots.save(plots.game_length(rounds), d, "game_length")),
    ]
    facts = findings(adv, tests)
    manifests = [r.manifest for r in runs]

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        pngs = [(title, draw(tmp)) for title, draw in figures]
        for title, df, _ in sections:
            df.to_csv(tmp / f"{title.lower().replace(' ', '_')}.csv", index=False)
        _write_markdown(tmp / "report.md", facts, sections, pngs, manifests)
        _write_html(tmp / "report.html", facts, sections, pngs, manifests)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out


def _manifest_summary(m: dict) -> dict:
    keep = ("command", "created", "package_version", "rules_hash", "python", "numpy", "pandas")
    return {"config": m["config"], **{k: m.get(k) for k in keep}}


def _write_markdown(path, facts, sections, pngs, manifests):
    lines = ["# Évora balance report", "", "## Findings", ""]
    lines += [f"- {f}" for f in facts]
    lines += ["", f"Significance level {ALPHA}; every game has one winner (ties broken by the rules, D18)."]
    for title, df, note in sections:
        lines += ["", f"## {title}", "", note, "", _fmt(df).to_markdown(index=False)]
    lines += ["", "## Figures", ""]
    lines += [f"![{title}]({png.name})" for title, png in pngs]
    lines += ["", "## Runs", ""]
    for m in manifests:
        lines += ["```json", json.dumps(_manifest_summary(m), indent=1, sort_keys=True), "```"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_html(path, facts, sections, pngs, manifests):
    esc = html.escape
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>Évora balance report</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:3px 6px;"
             "text-align:right}th{background:#f3f3f3}img{max-width:100%}pre{background:#f6f6f6;"
             "padding:1em;overflow:auto}</style></head><body>",
             "<h1>Évora balance report</h1><h2>Findings</h2><ul>"]
    parts += [f"<li>{esc(f)}</li>" for f in facts]
    parts.append(f"</ul><p>Significance level {ALPHA}; every game has one winner (ties broken by the rules, D18).</p>")
    for title, df, note in sections:
        parts.append(f"<h2>{esc(title)}</h2><p>{esc(note)}</p>")
        parts.append(_fmt(df).to_html(index=False, border=0))
    parts.append("<h2>Figures</h2>")
    for title, png in pngs:
        data = base64.b64encode(png.read_bytes()).decode()
        parts.append(f"<h3>{esc(title)}</h3><img alt='{esc(title)}' src='data:image/png;base64,{data}'>")
    parts.append("<h2>Runs</h2>")
    for m in manifests:
        parts.append(f"<pre>{esc(json.dumps(_manifest_summary(m), indent=1, sort_keys=True))}</pre>")
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
