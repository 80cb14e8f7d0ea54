"""Report figures (matplotlib, Agg): each function draws one figure from an analysis table and
returns it; ``save`` writes PNG and SVG. Labels carry units; intervals are 95%."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import textwrap
import warnings  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .labels import CATEGORY_LABELS
from .verdicts import UNKNOWN

# labels are text, never maths: a strategy named '$\undefinedmacro$' (a file path, a weight-set
# name) must print as written, not go to the math-text parser (which would fail the report)
plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "svg.fonttype": "none",
                     "text.parse_math": False, "text.usetex": False})
COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3",
           "#8c8c8c", "#ccb974", "#64b5cd", "#2f4b7c", "#a05195"]
SEAT_LABEL = "seat (0 = first player)"


def tight_layout(fig):
    """``fig.tight_layout()`` without its warning: long card and space names can leave it no
    room, and the figure is still drawn in full (saved with bbox_inches="tight"), so the warning
    tells a reader of the terminal nothing. Filtered here, where it is raised, rather than in a
    process-wide filter that pytest and other callers reset."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Tight layout not applied", category=UserWarning)
        fig.tight_layout()


def _panels(counts, width=4.2, height=3.4, sharey=False):
    fig, axes = plt.subplots(1, len(counts), figsize=(width * len(counts), height), squeeze=False,
                             sharey=sharey)
    return fig, axes[0]


def seat_win_rates(adv: pd.DataFrame):
    counts = sorted(adv["n_players"].unique())
    fig, axes = _panels(counts)
    for ax, n in zip(axes, counts):
        d = adv[adv["n_players"] == n].sort_values("seat")
        x = d["seat"].to_numpy()
        y = 100 * d["win_rate"].to_numpy()
        # clipped at 0: a rate of exactly 0 or 1 has a Wilson bound equal to it up to rounding
        err = np.clip(np.vstack([y - 100 * d["ci_lo"].to_numpy(), 100 * d["ci_hi"].to_numpy() - y]), 0, None)
        ax.bar(x, y, color=COLOURS[0], alpha=0.8)
        ax.errorbar(x, y, yerr=err, fmt="none", ecolor="black", capsize=4)
        ax.axhline(100 / n, color="#c44e52", linestyle="--", label=f"fair share {100 / n:.1f}%")
        ax.set_xticks(x)
        ax.set_xlabel(SEAT_LABEL)
        ax.set_ylabel("win rate (%)")
        ax.set_ylim(0, max(100 / n * 1.6, float(np.nanmax(100 * d["ci_hi"])) * 1.1))
        ax.set_title(f"{n} players ({int(d['games'].iloc[0]):,} games per seat)")
        ax.legend(loc="upper right", fontsize=8)
    fig.suptitle("Win rate by seat, with 95% Wilson intervals")
    tight_layout(fig)
    return fig


def score_by_seat(dists: dict[int, tuple[np.ndarray, np.ndarray]]):
    """``dists[n] = (score axis, counts[seat, score])``: one line per seat."""
    counts = sorted(dists)
    fig, axes = _panels(counts)
    for ax, n in zip(axes, counts):
        axis, c = dists[n]
        width = max(1, int(np.ceil(len(axis) / 60)))        # bins of `width` VP
        edges = np.arange(axis[0], axis[-1] + width + 1, width)
        for seat in range(c.shape[0]):
            binned = np.add.reduceat(c[seat], np.arange(0, len(axis), width))
            share = 100 * binned / max(1, c[seat].sum())
            ax.step(edges[:len(share)], share, where="post", color=COLOURS[seat % len(COLOURS)],
                    label=f"seat {seat}")
        ax.set_xlabel("final score (VP)")
        ax.set_ylabel(f"share of games (% per {width} VP)")
        ax.set_title(f"{n} players")
        ax.legend(fontsize=8)
    fig.suptitle("Final score distribution by seat")
    tight_layout(fig)
    return fig


def score_breakdown(vp: pd.DataFrame):
    """Stacked mean VP per scoring category for each strategy (rows of ``vp_by_category`` with
    by == 'strategy')."""
    d = vp[(vp["by"] == "strategy") & (vp["category"] != "score")]
    counts = sorted(d["n_players"].unique())
    fig, axes = _panels(counts, width=max(3.5, 0.9 * d["group"].nunique() + 1.5), height=4.2, sharey=True)
    cats = list(CATEGORY_LABELS)
    for ax, n in zip(axes, counts):
        t = d[d["n_players"] == n].pivot(index="group", columns="category", values="mean")
        t = t.reindex(columns=cats).fillna(0)
        t = t.loc[t.sum(axis=1).sort_values(ascending=False).index]
        bottom = np.zeros(len(t))
        for i, cat in enumerate(cats):
            ax.bar(t.index, t[cat], bottom=bottom, color=COLOURS[i % len(COLOURS)],
                   label=CATEGORY_LABELS[cat])
            bottom += t[cat].to_numpy()
        ax.set_ylabel("mean VP per seat-game")
        ax.set_xlabel("strategy")
        ax.set_title(f"{n} players")
        ax.tick_params(axis="x", rotation=30)
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, title="category")
    fig.suptitle("Where the VP come from: mean VP by scoring category and strategy")
    tight_layout(fig)
    return fig


def unjudged_label(label: str, row) -> str | None:
    """The y label of a row drawn without an estimate, or None for a row that is drawn: a card
    or space too rare to judge, or an experiment's card that no game exercised. Such a row is
    never drawn at 0, which would read as "worthless"."""
    if bool(row.get("too_rare", False)):
        return f"{label} (too rare to judge: {int(row['times']):,} plays)"
    if not bool(row.get("exercised", True)):
        return f"{label} (not exercised)"
    return None


def shared_limits(*arrays) -> tuple[float, float]:
    """One x range for every panel of a forest plot (so a dot's place means the same in each),
    around 0 and every finite interval end, never narrower than +-2 pp."""
    values = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays] + [np.zeros(1)])
    values = values[np.isfinite(values)]
    lo, hi = min(float(values.min()), -2.0), max(float(values.max()), 2.0)
    pad = 0.05 * (hi - lo)
    return lo - pad, hi + pad


def forest(table: pd.DataFrame, label: str, title: str):
    """Win-rate difference (used vs. not used, percentage points) of each card or space, raw
    and adjusted for strategy and seat, with 95% intervals, one panel per player count, on one
    shared x range and under one x title. A card or space too rare to judge is named, not drawn."""
    counts = sorted(table["n_players"].unique())
    labels = list(dict.fromkeys(table[label]))
    fig, axes = _panels(counts, width=6.4, height=0.28 * len(labels) + 1.9, sharey=False)
    y = np.arange(len(labels))
    drawn = table[~table.get("too_rare", pd.Series(False, index=table.index)).astype(bool)]
    limits = shared_limits(*(100 * drawn[c].to_numpy(float) for c in ("diff_lo", "diff_hi", "adj_lo", "adj_hi")))
    for ax, n in zip(axes, counts):
        d = table[table["n_players"] == n].set_index(label).reindex(labels)
        names = [x if pd.isna(r["n_players"]) else (unjudged_label(x, r) or x) for x, r in d.iterrows()]
        skip = np.array([pd.isna(r["n_players"]) or unjudged_label(x, r) is not None for x, r in d.iterrows()])
        for off, (col, lo, hi, name, colour) in enumerate([
                ("diff", "diff_lo", "diff_hi", "raw (used vs. not)", "#8c8c8c"),
                ("adj_diff", "adj_lo", "adj_hi", "adjusted for strategy and seat", COLOURS[0])]):
            v, vlo, vhi = (np.where(skip, np.nan, 100 * d[c].to_numpy(float)) for c in (col, lo, hi))
            err = np.clip(np.nan_to_num(np.vstack([v - vlo, vhi - v])), 0, None)
            ax.errorbar(v, y + (0.18 if off == 0 else -0.18), xerr=err, fmt="o", ms=3.5,
                        color=colour, ecolor=colour, capsize=2, label=name)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(y, names, fontsize=8)
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.set_xlim(*limits)
        ax.xaxis.set_major_locator(plt.MaxNLocator(nbins=6))
        ax.set_title(f"{n} players")
        ax.grid(axis="x", alpha=0.3)
    axes[0].legend(loc="lower left", bbox_to_anchor=(0, 1.02), fontsize=8, ncol=2)
    fig.suptitle(title)
    fig.supxlabel("win rate when used minus not used (percentage points; 95%, seeds as clusters)", fontsize=9)
    tight_layout(fig)
    return fig


def matchup_heatmap(m: pd.DataFrame):
    """Row strategy's win (2 players) or finished-ahead (3-4 players) rate against the column
    strategy, in %."""
    counts = sorted(m["n_players"].unique())
    size = max(3.6, 0.75 * m["strategy"].nunique() + 2.2)
    fig, axes = _panels(counts, width=size, height=size * 0.85)
    for ax, n in zip(axes, counts):
        d = m[m["n_players"] == n]
        names = sorted(set(d["strategy"]) | set(d["opponent"]))
        t = d.pivot(index="strategy", columns="opponent", values="win_rate").reindex(index=names, columns=names)
        img = ax.imshow(100 * t.to_numpy(float), cmap="RdBu", vmin=0, vmax=100)
        for i in range(len(names)):
            for j in range(len(names)):
                v = t.iloc[i, j]
                if np.isfinite(v):
                    ax.text(j, i, f"{100 * v:.0f}", ha="center", va="center", fontsize=8,
                            color="white" if abs(v - 0.5) > 0.3 else "black")
        ax.set_xticks(range(len(names)), names, rotation=40, ha="right")
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("opponent")
        ax.set_ylabel("strategy")
        what = "won the game" if n == 2 else "finished ahead"
        ax.set_title(f"{n} players: % {what}")
        fig.colorbar(img, ax=ax, fraction=0.046, pad=0.04, label="%")
    fig.suptitle("Strategy match-ups (row against column)")
    tight_layout(fig)
    return fig


OUTCOME_COLOURS = {"outright": "#4c72b0", "tied": "#dd8452", "white or unclaimed": "#bbbbbb"}


def majority_outcomes(t: pd.DataFrame):
    counts = sorted(t["n_players"].unique())
    fig, axes = _panels(counts, width=4.2, height=3.0, sharey=True)
    for ax, n in zip(axes, counts):
        d = t[t["n_players"] == n]
        majorities = list(dict.fromkeys(d["majority"]))
        left = np.zeros(len(majorities))
        for outcome, colour in OUTCOME_COLOURS.items():
            v = 100 * d[d["outcome"] == outcome].set_index("majority").reindex(majorities)["share"].to_numpy()
            ax.barh(majorities, v, left=left, color=colour, label=outcome)
            for i, (x0, w) in enumerate(zip(left, v)):
                if w >= 8:
                    ax.text(x0 + w / 2, i, f"{w:.0f}", ha="center", va="center", fontsize=7)
            left += v
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of games (%)")
        ax.set_title(f"{n} players")
        ax.invert_yaxis()
    axes[0].set_ylabel("majority")
    axes[-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.suptitle("Height and capitals majorities: won outright, tied, or scored by no player")
    tight_layout(fig)
    return fig


def _hist_step(ax, hist, bins, colour, label, top=None):
    """A histogram (analysis.aggregate.Hist) drawn as ax.hist would draw its values: share of
    games per bin, values above ``top`` counted at ``top``."""
    axis, counts = hist.axis, hist.counts[0]
    total = max(int(counts.sum()), 1)
    x = axis if top is None else np.minimum(axis, top)
    ax.hist(x, bins=bins, weights=100 * counts / total, histtype="step", linewidth=1.5, color=colour, label=label)


def game_length(lengths: dict):
    """Histogram of rounds per game, per player count (``lengths[n]``: a Hist of rounds)."""
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for i, (n, h) in enumerate(sorted(lengths.items())):
        h = h.trimmed()
        bins = np.arange(h.axis[0], h.axis[-1] + 2) - 0.5
        _hist_step(ax, h, bins, COLOURS[i], f"{n} players ({int(h.n()[0]):,} games)")
    ax.set_xlabel("rounds per game")
    ax.set_ylabel("share of games (% per round)")
    ax.set_title("Game length")
    ax.legend()
    tight_layout(fig)
    return fig


def victory_margin(margins: dict):
    """``margins[n]``: a Hist of the margin of victory."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for i, (n, h) in enumerate(sorted(margins.items())):
        top = int(h.percentile([99])[0]) + 1
        bins = np.arange(0, top + 2) - 0.5
        _hist_step(ax, h, bins, COLOURS[i], f"{n} players", top)
    ax.set_xlabel("margin of victory (VP; winner minus runner-up)")
    ax.set_ylabel("share of games (% per VP)")
    ax.set_title("Margin of victory (0 = decided by the tie-break)")
    ax.legend()
    tight_layout(fig)
    return fig


def save(fig, folder: Path, name: str) -> Path:
    """The SVG carries no date and its clip-path ids are salted by the figure's name (matplotlib
    draws them at random otherwise), so a report made again from the same games is the same
    files byte for byte: a changed figure then shows in a plain diff (issue 52)."""
    folder.mkdir(parents=True, exist_ok=True)
    png = folder / f"{name}.png"
    fig.savefig(png, dpi=110, bbox_inches="tight")
    with matplotlib.rc_context({"svg.hashsalt": f"evora-sim:{name}"}):
        fig.savefig(folder / f"{name}.svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return png


def _note_panel(ax, text: str, title: str):
    """A panel that says why it holds no plot (a finding held back)."""
    ax.axis("off")
    ax.set_title(title)
    ax.text(0.5, 0.5, textwrap.fill(text, 42), ha="center", va="center", fontsize=8.5,
            transform=ax.transAxes, bbox={"boxstyle": "round", "fc": "#fff4e0", "ec": "#d9a441"})


def seat_deviation(adv: pd.DataFrame, held: dict[int, str], beside: pd.DataFrame | None = None,
                   labels: tuple[str, str] = ("", "")):
    """Each seat's win rate minus the fair share (pp) with its 95% interval, one panel per
    player count: the effect itself, on an axis that always shows 0 (fair) and the interval.
    ``held``: player counts whose seat finding is held back, with the reason shown instead.
    ``beside``: a second field's seats (the bots', when ``adv`` is the strongest play), drawn
    hollow just below each seat's point, so a reversal shows as points on either side of 0."""
    fields = [(adv, labels[0], "o", COLOURS[0], 0.0)]
    if beside is not None and len(beside):
        fields.append((beside, labels[1], "s", COLOURS[1], 0.22))
    counts = sorted(set().union(*(set(f[0]["n_players"].unique()) for f in fields)) | set(held))
    fig, axes = _panels(counts, width=3.9, height=2.6)
    span = 0.0
    for d, *_ in fields:
        for n in counts:
            g = d[d["n_players"] == n]
            if len(g):
                span = max(span, float(np.nanmax(np.abs(100 * (g[["ci_lo", "ci_hi"]].to_numpy() - 1 / n)))))
    lim = max(1.0, span * 1.15)
    for ax, n in zip(axes, counts):
        if n in held and not any(len(f[0][f[0]["n_players"] == n]) for f in fields):
            _note_panel(ax, held[n], f"{n} players: no seat finding")
            continue
        ax.axvspan(-1, 1, color="#eeeeee", zorder=0, label="within 1 pp")
        ax.axvline(0, color="black", linewidth=0.9)
        games = []
        for d, label, marker, colour, shift in fields:
            d = d[d["n_players"] == n].sort_values("seat")
            if d.empty:
                continue
            y = d["seat"].to_numpy() + shift
            v = 100 * d["diff"].to_numpy()
            lo, hi = 100 * (d["ci_lo"].to_numpy() - 1 / n), 100 * (d["ci_hi"].to_numpy() - 1 / n)
            ax.errorbar(v, y, xerr=np.clip(np.vstack([v - lo, hi - v]), 0, None), fmt=marker, ms=6,
                        color=colour, ecolor=colour, capsize=3, elinewidth=1.5,
                        mfc=colour if shift == 0 else "white", label=label or None)
            games.append(f"{int(d['games'].iloc[0]):,}")
        seats = np.arange(n)
        ax.set_yticks(seats, [f"seat {s}" + (" (first)" if s == 0 else "") for s in seats])
        # room below the last seat for the second field's point and the legend
        ax.set_ylim(n - 0.5 + (0.9 if len(fields) > 1 else 0.0), -0.5)
        ax.set_xlim(-lim, lim)
        ax.set_xlabel(f"win rate minus fair share {100 / n:.1f}% (percentage points)")
        ax.set_title(f"{n} players ({' / '.join(games)} games)")
        ax.grid(axis="x", alpha=0.3)
        if len(fields) > 1:
            ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("How far each seat is from a fair share (95% ranges; 0 = fair)")
    tight_layout(fig)
    return fig


def strongest(rows: pd.DataFrame):
    """The strongest card and space findings (``rows``: n_players, label, adj_diff, adj_lo,
    adj_hi): win rate when used minus not used, adjusted, with 95% ranges, one panel per
    player count."""
    counts = sorted(rows["n_players"].unique())
    per = max(int(rows.groupby("n_players").size().max()), 1)
    fig, axes = _panels(counts, width=4.6, height=0.55 * per + 1.5)
    lim = max(2.0, 1.1 * float(np.nanmax(np.abs(100 * rows[["adj_lo", "adj_hi"]].to_numpy()))))
    for ax, n in zip(axes, counts):
        d = rows[rows["n_players"] == n]
        y = np.arange(len(d))
        v = 100 * d["adj_diff"].to_numpy(float)
        lo, hi = 100 * d["adj_lo"].to_numpy(float), 100 * d["adj_hi"].to_numpy(float)
        ax.axvline(0, color="black", linewidth=0.9)
        ax.errorbar(v, y, xerr=np.clip(np.vstack([v - lo, hi - v]), 0, None), fmt="D", ms=5,
                    color=COLOURS[3], ecolor=COLOURS[3], capsize=3)
        ax.set_yticks(y, [textwrap.fill(str(x), 26) for x in d["label"]], fontsize=8)
        ax.set_ylim(len(d) - 0.5, -0.5)
        ax.set_xlim(-lim, lim)
        ax.set_xlabel("win rate when used minus not (percentage points, adjusted)")
        ax.set_title(f"{n} players")
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle("Strongest card and space findings (associations, not causes; 95% ranges)")
    tight_layout(fig)
    return fig


def tension(dists: dict):
    """Distributions of the tension figures per player count: lead changes per game, the
    winner's largest comeback, and how many rounds before the end the winner led for good
    (``dists[n]``: Hists "lead_changes", "comeback", "_led")."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    specs = [("lead_changes", "lead changes per game", axes[0]),
             ("comeback", "winner's largest deficit after a round (VP)", axes[1]),
             ("_led", "rounds before the end the winner led for good (0 = last round)", axes[2])]
    for i, (n, hists) in enumerate(sorted(dists.items())):
        for col, label, ax in specs:
            h = hists[col]
            top = int(h.percentile([99])[0]) + 1
            bins = np.arange(0, top + 2) - 0.5 if top < 40 else np.linspace(-0.5, top + 0.5, 40)
            _hist_step(ax, h, bins, COLOURS[i], f"{n} players", top)
            ax.set_xlabel(label)
            ax.set_ylabel("share of games (%)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Game shape: how often the lead changes, and how late the game is decided")
    tight_layout(fig)
    return fig


def skill_figures(table: pd.DataFrame, verdict: pd.DataFrame, rung_names: list[str]):
    """One small panel per headline figure: its value at each rung (weakest left) with 95%
    ranges, the no-effect value dashed, the verdict (and where it settles, when known) in the
    title."""

    figs = list(verdict["figure"])
    cols = 4
    rows = -(-len(figs) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.7 * rows), squeeze=False)
    x_labels = [str(i + 1) for i in range(len(rung_names))]
    for ax, v in zip(axes.flat, verdict.itertuples()):
        g = table[table["figure"] == v.figure].sort_values("rung")
        scale = 1.0 if v.kind == "mean" else 100.0
        x = g["rung"].to_numpy()
        y = scale * g["value"].to_numpy(float)
        err = np.clip(np.vstack([y - scale * g["lo"].to_numpy(float), scale * g["hi"].to_numpy(float) - y]), 0, None)
        ax.errorbar(x, y, yerr=err, fmt="o-", ms=4, color=COLOURS[0], ecolor=COLOURS[0], capsize=3)
        if np.isfinite(v.null):
            ax.axhline(scale * v.null, color=COLOURS[3], linestyle="--", linewidth=0.9)
        ax.set_xticks(range(len(rung_names)), x_labels)
        settles = f"; {v.settles}" if v.settles not in ("", UNKNOWN) else ""
        ax.set_title(textwrap.fill(f"{v.label}: {v.verdict}{settles}", 40), fontsize=8)
        ax.set_ylabel("rounds" if v.kind == "mean" else ("pp" if v.kind in ("unfairness", "rate change") else "%"),
                      fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(figs):]:
        ax.axis("off")
    fig.suptitle("Headline figures at each rung (x: rung, " + "; ".join(rung_names) + ")", fontsize=9)
    tight_layout(fig)
    return fig


def skill_ratings(ratings: pd.DataFrame, players: int):
    """Each rung's Bradley-Terry rating (Elo scale, mean 0) with its 95% range, from duels at the
    ladder's ``players``; a range open on one side (a near-perfect record:
    :func:`analysis.stats.rating_ranges`) is drawn as an arrow from its bound, without the
    estimate, which rests on a small-sample correction there."""
    fig, ax = plt.subplots(figsize=(7.5, 0.5 * len(ratings) + 1.3))
    y = ratings["rung"].to_numpy()
    v = ratings["elo"].to_numpy(float)
    lo, hi = ratings["ci_lo"].to_numpy(float), ratings["ci_hi"].to_numpy(float)
    closed = np.isfinite(lo) & np.isfinite(hi)
    err = np.clip(np.vstack([v - lo, hi - v]), 0, None)[:, closed]
    ax.errorbar(v[closed], y[closed], xerr=err, fmt="o", ms=6, color=COLOURS[2], ecolor=COLOURS[2], capsize=3)
    known = np.r_[v, lo, hi][np.isfinite(np.r_[v, lo, hi])]
    reach = 0.2 * (np.ptp(known) if len(known) > 1 and np.ptp(known) > 0 else 100.0)
    ends = list(known)
    for yy, a, b in zip(y[~closed], lo[~closed], hi[~closed]):
        if np.isfinite(a) or np.isfinite(b):
            bound, way = (a, 1) if np.isfinite(a) else (b, -1)
            ax.annotate("", xy=(bound + way * reach, yy), xytext=(bound, yy),
                        arrowprops={"arrowstyle": "->", "color": COLOURS[2]})
            ax.plot([bound], [yy], "|", ms=10, color=COLOURS[2])
            ends.append(bound + way * reach)
    if ends:
        ax.set_xlim(min(ends) - 0.05 * reach, max(ends) + 0.05 * reach)
    ax.set_yticks(y, [textwrap.fill(f"{r + 1}. {p}", 34) for r, p in zip(y, ratings["players"])], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("rating (Elo scale; +100 = ahead 64% of the time)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"Strength of each rung, from {players}-player duels (95% ranges; arrow: no limit that way)")
    tight_layout(fig)
    return fig
