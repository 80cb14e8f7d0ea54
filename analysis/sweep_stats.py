"""The summary of a sweep: every headline metric against the swept values, with intervals
(table ``sweep.csv``), a figure with interval bands (``sweep.png``) and a report section
(``sweep.md`` and ``sweep.html``).

Each combination's metric comes with its own interval (analysis/variants.py); its difference
from the first combination (the baseline) with a paired interval, since every combination plays
the same seeds, a p-value Holm-adjusted over the metrics of that comparison, and the words
'moved', 'moved, negligible' (a rate that moved by less than --min-effect) or 'no clear change'.
A sweep run with --until-ci shows the intervals at the adjusted level (1 - 0.05/K, K planned
looks), the ones that stay valid under its stopping.
"""
from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from evora_sim.fsutil import atomic_folder
from evora_sim.rules import flatten, load_rules
from evora_sim.storage import open_run

from . import numbers
from .plots import COLOURS, save, tight_layout
from .stats import ALPHA, MIN_EFFECT
from .tables import AnalysisError
from .untilsure import describe
from .variants import compare, game_datas, metric_group, run_metrics, verdicts

GROUPS = [                 # (title, metric group, shown in points)
    ("Seat win rates", "seats", True),
    ("Seat unfairness (root mean square seat deviation)", "fairness", True),
    ("Strategy win rates", "strategies", True),
    ("Majority share of the score", "majority", True),
    ("Game length", "length", False),
    ("Mean score", "score", False),
]

SUMMARY_KIND = "sweep summary"     # the marker kind of --out/summary (evora_sim.fsutil)


def load_sweep(out: Path) -> dict:
    path = Path(out) / "sweep.json"
    if not path.is_file():
        raise AnalysisError(f"{out} is not a sweep folder (no sweep.json)")
    return json.loads(path.read_text(encoding="utf-8"))


def sequential_alpha(runs) -> float:
    """The level the intervals are shown at: 0.05, or the per-look level of runs played with
    --until-ci (the adjusted intervals, valid under its stopping)."""
    levels = [r.manifest["sequential"]["alpha_per_look"] for r in runs if r.manifest.get("sequential")]
    return min(levels) if levels else ALPHA


def baseline(doc: dict, runs) -> int:
    """The combination that holds the current rules' values of the swept keys (the shipped
    rules, or the sweep's --rules file and --set): differences are taken from it, as a designer
    asks "what if I changed it". Without one, the first combination (-1 is returned as 0 and
    the summary says so through ``current``)."""

    keys = [k for k, _ in doc["params"]]
    base = doc.get("base", {})
    try:
        current = dict(flatten(load_rules(base.get("rules_file"), base.get("set") or ()).data))
    except Exception:                        # the rules file gone: fall back to the first
        return -1
    for i, run in enumerate(runs):
        mine = dict(flatten(run.manifest["rules"]))
        if all(mine.get(k) == current.get(k) for k in keys):
            return i
    return -1


def summary(out: str | Path, min_effect: float = MIN_EFFECT, backend: str = "local",
            scheduler: str | None = None) -> pd.DataFrame:
    """One row per combination and metric: the swept values, value, lo, hi, games, and the
    paired difference from the baseline, the combination holding the current rules' values
    (diff, diff_lo, diff_hi, p_holm, change; column ``baseline`` marks it; the first
    combination when none holds them, ``current_in_sweep`` False). Every combination's runs are
    read once, in one pass (``backend="dask"``: on the cluster at ``scheduler``)."""
    out = Path(out)
    doc = load_sweep(out)
    keys = [k for k, _ in doc["params"]]
    runs = [open_run(out / c["name"]) for c in doc["combos"]]
    alpha = sequential_alpha(runs)
    found = baseline(doc, runs)
    base = max(found, 0)
    datas = game_datas(runs, backend, scheduler)
    rows = []
    for i, (c, run) in enumerate(zip(doc["combos"], runs)):
        table = run_metrics(datas[i], alpha=alpha)
        if i == base:
            diff = table[["metric"]].assign(diff=0.0, diff_lo=0.0, diff_hi=0.0, p_holm=np.nan,
                                            change="baseline")
        else:
            cmp, _ = compare(datas[base], datas[i], alpha=alpha, min_effect=min_effect)
            diff = cmp[["metric", "diff", "lo", "hi", "p_holm"]].rename(columns={"lo": "diff_lo", "hi": "diff_hi"})
            diff["change"] = verdicts(cmp)
        table = table.merge(diff, on="metric", how="left")
        for k in keys:
            table.insert(0, k, c["values"][k])
        table.insert(0, "combination", c["name"])
        table.insert(1, "index", i)
        table["level"] = 1 - alpha
        table["sequential"] = bool(run.manifest.get("sequential"))
        table["baseline"] = i == base
        table["current_in_sweep"] = found >= 0
        rows.append(table)
    return pd.concat(rows, ignore_index=True)


def _in_group(df: pd.DataFrame, group: str) -> np.ndarray:
    return (df["metric"].map(metric_group) == group).to_numpy()


def _x(df: pd.DataFrame, keys: list[str]):
    """x positions and labels: the numeric value of a single swept number, else the index."""
    combos = df.drop_duplicates("index").sort_values("index")
    if len(keys) == 1:
        try:
            xs = combos[keys[0]].astype(float).to_numpy()
            return dict(zip(combos["index"], xs)), None, keys[0]
        except (TypeError, ValueError):
            pass
    labels = [", ".join(f"{k}={r[k]}" for k in keys) for _, r in combos.iterrows()]
    return dict(zip(combos["index"], range(len(combos)))), labels, "combination"


def plot(df: pd.DataFrame, keys: list[str]):
    xmap, labels, xlabel = _x(df, keys)
    groups = [(t, g, pct) for t, g, pct in GROUPS if _in_group(df, g).any()]
    cols = 3
    rows = -(-len(groups) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    for ax, (title, group, pct) in zip(axes.flat, groups):
        sub = df[_in_group(df, group)]
        for j, (metric, g) in enumerate(sub.groupby("metric", sort=False)):
            g = g.sort_values("index")
            x = np.array([xmap[i] for i in g["index"]])
            s = 100.0 if pct else 1.0
            colour = COLOURS[j % len(COLOURS)]
            ax.plot(x, s * g["value"], marker="o", color=colour, label=metric)
            ax.fill_between(x, s * g["lo"], s * g["hi"], color=colour, alpha=0.2)
            base = g[g["baseline"]] if "baseline" in g else g.iloc[:0]
            if len(base):
                ax.plot([xmap[i] for i in base["index"]], s * base["value"], marker="*", ms=11, color=colour,
                        linestyle="none")
        _keep_span(ax, sub, group, pct)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(("pp" if group == "fairness" else "%") if pct else
                      ("rounds" if group == "length" else "VP"))
        if labels is not None:
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
        if sub["metric"].nunique() > 1:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    level = 100 * float(df["level"].iloc[0]) if len(df) else 95.0
    fig.suptitle(f"Headline metrics against the swept values (bands: {level:.4g}% intervals)")
    tight_layout(fig)
    return fig


MIN_SPAN = {"seats": 4.0, "fairness": 2.0, "strategies": 4.0, "majority": 4.0, "length": 1.0, "score": 4.0}


def _keep_span(ax, sub: pd.DataFrame, group: str, pct: bool) -> None:
    """An axis that shows the intervals and never zooms in on a wobble smaller than they are:
    at least MIN_SPAN (points, rounds or VP) tall, centred on the data."""
    s = 100.0 if pct else 1.0
    lo, hi = float(s * sub["lo"].min()), float(s * sub["hi"].max())
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return
    span = max(hi - lo, MIN_SPAN.get(group, 1.0)) * 1.15
    mid = (lo + hi) / 2
    bottom = mid - span / 2
    if group == "fairness":
        bottom = max(bottom, 0.0) if lo >= 0 else bottom
    ax.set_ylim(bottom, bottom + span)


def _fmt(df: pd.DataFrame) -> pd.DataFrame:
    """Each value with its interval and each change with its own, in the digits they need."""
    show = df.drop(columns=["kind", "index", "sequential", "level", "value", "lo", "hi", "diff",
                            "diff_lo", "diff_hi", "baseline", "current_in_sweep"], errors="ignore")
    value, change = [], []
    is_base = df["baseline"] if "baseline" in df else df["index"] == 0
    base_value = dict(zip(df.loc[is_base, "metric"], df.loc[is_base, "value"]))
    for r, base in zip(df.itertuples(), is_base):
        scale, unit = numbers.units(r.kind)
        value.append(numbers.bracket(r.value, r.lo, r.hi, scale, unit))
        scale, unit = numbers.units(r.kind, change=True)
        if base:
            change.append("baseline")
        elif r.kind == "unfairness":          # its test is on the mean square; shown as the unfairness's own change
            change.append(f"{scale * (r.value - base_value.get(r.metric, np.nan)):+.2f}{unit} (tested on the mean square)")
        else:
            change.append(numbers.bracket(r.diff, r.diff_lo, r.diff_hi, scale, unit, signed=True))
    show.insert(show.columns.get_loc("metric") + 1, "value [interval]", value)
    show.insert(show.columns.get_loc("value [interval]") + 1, "change from the current rule [interval]", change)
    show["p_holm"] = [("" if not np.isfinite(p) else ("<0.001" if p < 0.001 else f"{p:.3f}")) for p in df["p_holm"]]
    return show


def method_note(df: pd.DataFrame, min_effect: float) -> str:
    level = 100 * float(df["level"].iloc[0])
    return (f"Every combination plays the same game seeds (common random numbers). Intervals are "
            f"{level:.4g}%: cluster-robust (seed = cluster) t intervals for rates and means; for the "
            "seat unfairness (root mean square of the seats' deviations from the fair share, pp) "
            "the Feldman-Cousins interval of analysis/fairness.py, valid at and near a fair game. "
            "'change' is the difference from the combination holding the current rule's value (the "
            "shipped rules, or the sweep's --rules and --set; the first combination when none "
            "does, as the table says), paired by seed (the seat "
            "unfairness: its change in pp, tested on its mean square); p_holm is Holm-adjusted over "
            "the metrics of that comparison; 'moved' means p_holm < 0.05, 'negligible' a rate that "
            f"moved by less than {numbers.pp(min_effect)} (--min-effect).")


def write_summary(out: str | Path, df: pd.DataFrame | None = None, min_effect: float = MIN_EFFECT) -> Path:
    """Write ``out/summary`` (sweep.csv, sweep.png/.svg, sweep.md, sweep.html) from the
    :func:`summary` table ``df`` (computed when not given); return it."""
    out = Path(out)
    doc = load_sweep(out)
    keys = [k for k, _ in doc["params"]]
    df = summary(out, min_effect) if df is None else df
    seq = [open_run(out / c["name"]).manifest.get("sequential") for c in doc["combos"]]
    note = method_note(df, min_effect)
    if "current_in_sweep" in df and not df["current_in_sweep"].all():
        note += (" None of the combinations holds the current rules' values of the swept keys, so the "
                 "changes are taken from the first combination.")
    seq_note = ""
    if seq and seq[0]:
        seq_note = (describe(seq[0]) + ". " + seq[0]["method"] + " The intervals in the tables "
                    f"and the figure are these adjusted ones (level {float(df['level'].iloc[0]):.4g}), "
                    "valid under the stopping; their half-widths are also in each run's manifest.")
    final = out / "summary"
    with atomic_folder(final, SUMMARY_KIND) as tmp:
        df.to_csv(tmp / "sweep.csv", index=False)
        png = save(plot(df, keys), tmp, "sweep")
        shown = _fmt(df)
        title = "Évora sweep: " + ", ".join(f"{k} = {', '.join(v)}" for k, v in doc["params"])
        md = [f"# {title}", "", note, ""]
        if seq_note:
            md += [f"Run until sure: {seq_note}", ""]
        md += [f"![sweep]({png.name})", ""]
        for t, group, _ in GROUPS:
            part = shown[_in_group(df, group)]
            if len(part):
                md += [f"## {t}", "", part.to_markdown(index=False), ""]
        md += ["## Base configuration", "", "```json", json.dumps(doc["base"], indent=1), "```"]
        (tmp / "sweep.md").write_text("\n".join(md) + "\n", encoding="utf-8")
        esc = html.escape
        img = base64.b64encode(png.read_bytes()).decode()
        parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>",
                 "<style>body{font-family:system-ui,sans-serif;max-width:80em;margin:2em auto;padding:0 1em}"
                 "table{border-collapse:collapse;font-size:85%}td,th{border:1px solid #ccc;padding:2px 6px;"
                 "text-align:right}img{max-width:100%}</style></head><body>",
                 f"<h1>{esc(title)}</h1><p>{esc(note)}</p>"]
        if seq_note:
            parts.append(f"<p>Run until sure: {esc(seq_note)}</p>")
        parts.append(f"<img alt='sweep' src='data:image/png;base64,{img}'>")
        for t, group, _ in GROUPS:
            part = shown[_in_group(df, group)]
            if len(part):
                parts += [f"<h2>{esc(t)}</h2>", part.to_html(index=False, border=0)]
        parts += ["<h2>Base configuration</h2><pre>", esc(json.dumps(doc["base"], indent=1)), "</pre></body></html>"]
        (tmp / "sweep.html").write_text("\n".join(parts), encoding="utf-8")
    return final


def summary_lines(df: pd.DataFrame, keys: list[str]) -> list[str]:
    """The printed table: each metric across the combinations, value [lo, hi]."""
    lines = []
    combos = df.drop_duplicates("index").sort_values("index")
    heads = [", ".join(f"{k}={r[k]}" for k in keys) for _, r in combos.iterrows()]
    width = max(len(m) for m in df["metric"])
    lines.append(" " * width + "  " + "  ".join(h.rjust(26) for h in heads))
    for metric, g in df.groupby("metric", sort=False):
        cells = [numbers.bracket(r.value, r.lo, r.hi, *numbers.units(r.kind)).rjust(26)
                 for r in g.sort_values("index").itertuples()]
        lines.append(metric.ljust(width) + "  " + "  ".join(cells))
    level = 100 * float(df["level"].iloc[0]) if len(df) else 95.0
    lines.append(f"(intervals: {level:.4g}%)")
    return lines
