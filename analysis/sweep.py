"""The summary of a sweep: every headline metric against the swept values, with 95% intervals
(table ``sweep.csv``), a figure with interval bands (``sweep.png``) and a report section
(``sweep.md`` and ``sweep.html``).

Each combination's metric comes with its own interval (analysis/variants.py); its difference
from the first combination (the baseline) with a paired interval, since every combination plays
the same seeds.
"""
from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import numpy as np
import pandas as pd

from evora_sim.fsutil import atomic_folder
from evora_sim.runner import open_run

from .tables import AnalysisError
from .variants import compare, game_data, run_metrics

GROUPS = [
    ("Seat win rates", lambda m: m.str.match(r"^seat \d+ win rate$"), True),
    ("Seat advantage spread", lambda m: m == "seat advantage spread", True),
    ("Strategy win rates", lambda m: m.str.endswith(" win rate") & ~m.str.match(r"^seat \d+ win rate$"), True),
    ("Majority share of the score", lambda m: m == "majority share of score", True),
    ("Game length", lambda m: m == "game length (rounds)", False),
    ("Mean score", lambda m: m == "mean score", False),
]

SUMMARY_KIND = "sweep summary"     # the marker kind of --out/summary (evora_sim.fsutil)


def load_sweep(out: Path) -> dict:
    path = Path(out) / "sweep.json"
    if not path.is_file():
        raise AnalysisError(f"{out} is not a sweep folder (no sweep.json)")
    return json.loads(path.read_text(encoding="utf-8"))


def summary(out: str | Path) -> pd.DataFrame:
    """One row per combination and metric: the swept values, value, lo, hi, games, and the
    paired difference from the first combination (diff, diff_lo, diff_hi)."""
    out = Path(out)
    doc = load_sweep(out)
    keys = [k for k, _ in doc["params"]]
    rows = []
    base_run = None
    for i, c in enumerate(doc["combos"]):
        run = open_run(out / c["name"])
        data = game_data(run)
        table = run_metrics(data)
        if i == 0:
            base_run = run
            diff = table[["metric"]].assign(diff=0.0, diff_lo=0.0, diff_hi=0.0)
        else:
            cmp, _ = compare(base_run, run)
            diff = cmp[["metric", "diff", "lo", "hi"]].rename(columns={"lo": "diff_lo", "hi": "diff_hi"})
        table = table.merge(diff, on="metric", how="left")
        for k in keys:
            table.insert(0, k, c["values"][k])
        table.insert(0, "combination", c["name"])
        table.insert(1, "index", i)
        table["sequential"] = bool(run.manifest.get("sequential"))
        rows.append(table)
    return pd.concat(rows, ignore_index=True)


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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots import COLOURS

    xmap, labels, xlabel = _x(df, keys)
    groups = [(t, f, pct) for t, f, pct in GROUPS if f(df["metric"]).any()]
    cols = 3
    rows = -(-len(groups) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.4 * rows), squeeze=False)
    for ax, (title, f, pct) in zip(axes.flat, groups):
        sub = df[f(df["metric"])]
        for j, (metric, g) in enumerate(sub.groupby("metric", sort=False)):
            g = g.sort_values("index")
            x = np.array([xmap[i] for i in g["index"]])
            s = 100.0 if pct else 1.0
            colour = COLOURS[j % len(COLOURS)]
            ax.plot(x, s * g["value"], marker="o", color=colour, label=metric)
            ax.fill_between(x, s * g["lo"], s * g["hi"], color=colour, alpha=0.2)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("%" if pct else ("rounds" if "length" in title else "VP"))
        if labels is not None:
            ax.set_xticks(range(len(labels)))
            ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
        if sub["metric"].nunique() > 1:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(groups):]:
        ax.axis("off")
    fig.suptitle("Headline metrics against the swept values (bands: 95% intervals)")
    fig.tight_layout()
    return fig


def _fmt(df: pd.DataFrame) -> pd.DataFrame:
    show = df.copy()
    pct = show["kind"].isin(["rate", "share"])
    for col in ("value", "lo", "hi", "diff", "diff_lo", "diff_hi"):
        show[col] = [("" if not np.isfinite(v) else (f"{100 * v:.2f}%" if p else f"{v:.2f}"))
                     if col in ("value", "lo", "hi") else
                     ("" if not np.isfinite(v) else (f"{100 * v:+.2f} pp" if p else f"{v:+.2f}"))
                     for v, p in zip(show[col].astype(float), pct)]
    return show.drop(columns=["kind", "index", "sequential"])


METHOD_NOTE = ("Every combination plays the same game seeds (common random numbers). Intervals "
               "are 95%: cluster-robust (seed = cluster) t intervals for rates and means, a "
               "percentile bootstrap over seeds for the seat advantage spread. 'diff' is the "
               "change from the first combination, paired by seed.")


def write_summary(out: str | Path) -> Path:
    """Write ``out/summary`` (sweep.csv, sweep.png/.svg, sweep.md, sweep.html); return it."""
    from .plots import save

    out = Path(out)
    doc = load_sweep(out)
    keys = [k for k, _ in doc["params"]]
    df = summary(out)
    seq = [open_run(out / c["name"]).manifest.get("sequential") for c in doc["combos"]]
    seq_note = ""
    if seq and seq[0]:
        from evora_sim.sequential import describe

        seq_note = (describe(seq[0]) + ". " + seq[0]["method"] + " The intervals in the tables "
                    "and the figure are the plain 95% ones of the games played; the adjusted "
                    "half-widths are in each run's manifest ('sequential').")
    final = out / "summary"
    with atomic_folder(final, SUMMARY_KIND) as tmp:
        df.to_csv(tmp / "sweep.csv", index=False)
        png = save(plot(df, keys), tmp, "sweep")
        shown = _fmt(df)
        title = "Évora sweep: " + ", ".join(f"{k} = {', '.join(v)}" for k, v in doc["params"])
        md = [f"# {title}", "", METHOD_NOTE, ""]
        if seq_note:
            md += [f"Run until sure: {seq_note}", ""]
        md += [f"![sweep]({png.name})", ""]
        for t, f, _ in GROUPS:
            part = shown[f(df["metric"]).to_numpy()]
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
                 f"<h1>{esc(title)}</h1><p>{esc(METHOD_NOTE)}</p>"]
        if seq_note:
            parts.append(f"<p>Run until sure: {esc(seq_note)}</p>")
        parts.append(f"<img alt='sweep' src='data:image/png;base64,{img}'>")
        for t, f, _ in GROUPS:
            part = shown[f(df["metric"]).to_numpy()]
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
    lines.append(" " * width + "  " + "  ".join(h.rjust(22) for h in heads))
    for metric, g in df.groupby("metric", sort=False):
        g = g.sort_values("index")
        cells = []
        for r in g.itertuples():
            s, u = (100.0, "%") if r.kind in ("rate", "share") else (1.0, "")
            cells.append((f"{s * r.value:.1f}{u} [{s * r.lo:.1f}, {s * r.hi:.1f}]"
                          if np.isfinite(r.lo) else f"{s * r.value:.1f}{u}").rjust(22))
        lines.append(metric.ljust(width) + "  " + "  ".join(cells))
    return lines
