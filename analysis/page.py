"""Writing a :class:`analysis.report.Report` as ``report.html`` and ``report.md``.

The page is laid out for a 1280-pixel window: text at reading width, tables that wrap their
cells instead of scrolling sideways, long tables and the raw manifests folded into
``<details>`` blocks. Every piece of text from the runs (strategy names, rules values, paths)
is escaped, in both pages: a name holding HTML shows as text. In ``report.md`` that means HTML's
``& < >``, a line break, ``](`` (a link or an image) and, in tables, ``|``; code spans and blocks
are fenced by more backticks than they hold.
"""
from __future__ import annotations

import base64
import html
import json
import textwrap

from .brief import WHY_TITLE
from .markdown import md, md_code, md_fenced
from .stats import ALPHA

CSS = """
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1f2328;max-width:1160px;
 margin:0 auto;padding:18px 28px 60px}
h1{font-size:1.55em;margin:.1em 0 .4em;line-height:1.25;overflow-wrap:anywhere}
h2{font-size:1.25em;margin:1.6em 0 .4em;padding-top:.4em;border-top:2px solid #d0d7de}
h3{font-size:1.05em;margin:1em 0 .3em}
dl.run{display:grid;grid-template-columns:9em minmax(0,1fr);gap:.25em 1em;margin:.3em 0 1em;font-size:14px}
dl.run dt{font-weight:600;color:#57606a}dl.run dd{margin:0;overflow-wrap:anywhere}
nav{font-size:14px;margin:.4em 0 1em}nav a{margin-right:1em;color:#0969da;text-decoration:none}
.answers{display:grid;grid-template-columns:repeat(auto-fit,minmax(330px,1fr));gap:12px}
.answer{border:1px solid #d0d7de;border-radius:8px;padding:.7em 1em;background:#f6f8fa}
.answer h3{margin:0 0 .3em}.lead{font-size:1.12em;font-weight:600;margin:.2em 0 .5em}
.answer p{margin:.35em 0}.held{background:#fff8e6;border-color:#d4a72c}
.notice{background:#fff8e6;border-left:4px solid #d4a72c;padding:.5em .9em;margin:.6em 0}
table{border-collapse:collapse;width:100%;font-size:13px;margin:.3em 0 1.1em;table-layout:auto}
th,td{border-bottom:1px solid #d8dee4;padding:4px 7px;text-align:left;vertical-align:top;
 overflow-wrap:anywhere}
th{background:#eef1f4;font-weight:600;overflow-wrap:break-word}
tr:hover td{background:#f6f8fa}
figure{margin:.6em 0 1.2em}figure img{max-width:100%;height:auto;display:block}
figcaption{font-size:13px;color:#57606a}
details{margin:.4em 0 1em}summary{cursor:pointer;color:#0969da;font-size:14px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;background:#f6f8fa;padding:.8em;
 border-radius:6px}
code{font-size:90%;overflow-wrap:anywhere}
.caption{font-size:13px;color:#57606a;margin:.2em 0}
ul.findings li{margin:.3em 0}
"""


def _anchor(title: str) -> str:
    return title.lower().replace(" ", "-")


def _img(figures, stem, title) -> str:
    data = base64.b64encode(figures[stem].read_bytes()).decode()
    esc = html.escape
    return (f"<figure><img alt='{esc(title)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{esc(title)}</figcaption></figure>")


def _table_html(t) -> str:
    esc = html.escape
    body = t.shown.to_html(index=False, border=0, escape=True)
    caption = f"<p class='caption'>Table <code>{esc(t.name)}.csv</code>: every column and code in the CSV"
    caption += f" ({len(t.df):,} rows).</p>"
    if t.caption:                  # what the table shows, when its section's note does not say it
        caption = f"<p>{esc(t.caption)}</p>" + caption
    if t.is_folded:
        return f"<details><summary>Show the table ({len(t.shown):,} rows)</summary>{caption}{body}</details>"
    return caption + body


def _manifest_summary(m: dict, done: tuple[int, int]) -> dict:
    keep = ("command", "created", "package_version", "rules_hash", "rules_source", "python", "numpy", "pandas")
    extra = {}
    if m.get("sequential"):
        seq = m["sequential"]
        extra["sequential"] = {k: seq.get(k) for k in ("method", "width", "metrics", "looks_planned",
                                                         "alpha_per_look", "stopped_at_seeds", "reason")}
    return {"config": m["config"], **{k: m.get(k) for k in keep}, **extra,
            "chunks_analysed": f"{done[0]} of {done[1]}"}


def _manifest_json(m, done) -> str:
    return json.dumps(_manifest_summary(m, done), indent=1, sort_keys=True, ensure_ascii=False)


SAMPLE_TITLE = "A sample game"
NAV = ["The answer", "Findings"]


def write_html(path, rep, figures, manifests) -> None:
    esc = html.escape
    titles = NAV + [s.title for s in rep.sections] + ([SAMPLE_TITLE] if rep.sample else []) + ["Runs"]
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
             f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{esc(rep.title)}</title>"
             f"<style>{CSS}</style></head><body>", f"<h1>{esc(rep.title)}</h1>", "<dl class='run'>"]
    parts += [f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rep.header]
    parts.append("</dl><nav>" + "".join(f"<a href='#{_anchor(t)}'>{esc(t)}</a>" for t in titles) + "</nav>")
    parts += [f"<div class='notice'>{esc(x)}</div>" for x in rep.notices]

    parts.append("<h2 id='the-answer'>The answer</h2><div class='answers'>")
    for a in rep.answers:
        why = f"<p>{esc(a.why)}</p>" if a.why else ""
        fix = f"<p><a href='#{_anchor(WHY_TITLE)}'>{esc(a.fix)}</a></p>" if a.fix else ""
        parts.append(f"<div class='answer{' held' if a.held else ''}'><h3>{a.players} players</h3>"
                     f"<p class='lead'>{esc(a.lead)}</p>{why}{fix}" + "".join(f"<p>{esc(x)}</p>" for x in a.details)
                     + "</div>")
    parts.append("</div>")
    title, stem, _ = rep.answer_figure
    parts.append(_img(figures, stem, title))
    parts.append("<h3>Strongest card and space findings</h3><ul class='findings'>"
                 + "".join(f"<li>{esc(x)}</li>" for x in rep.strongest) + "</ul>")
    if rep.strongest_figure:
        parts.append(_img(figures, rep.strongest_figure[1], rep.strongest_figure[0]))
    parts.append("<p class='caption'>Associations, not causes: see Card value.</p>")

    parts.append("<h2 id='findings'>Findings</h2><ul class='findings'>"
                 + "".join(f"<li>{esc(x)}</li>" for x in rep.findings) + "</ul>"
                 f"<p class='caption'>Significance level {ALPHA}; ranges are 95%.</p>")
    for sec in rep.sections:
        parts.append(f"<h2 id='{_anchor(sec.title)}'>{esc(sec.title)}</h2>")
        if sec.notice:
            parts.append(f"<div class='notice'>{esc(sec.notice)}</div>")
        parts.append(f"<p>{esc(sec.note)}</p>")
        parts += [_table_html(t) for t in sec.tables]
        parts += [_img(figures, stem, title) for title, stem, _ in sec.figures]
    if rep.sample is not None:
        g = rep.sample
        parts.append(f"<h2 id='{_anchor(SAMPLE_TITLE)}'>{SAMPLE_TITLE}</h2>"
                     f"<p>The run's first game (seed {g.seed}), replayed. Its full turn-by-turn log: "
                     f"<a href='sample_game.txt'>sample_game.txt</a>, beside this report; the same game is "
                     f"printed by <code>{esc(g.command)}</code>.</p>")
        parts.append(_img(figures, "sample_game", f"A sample game: seed {g.seed}"))
    elif rep.sample_note:
        parts.append(f"<p>{esc(rep.sample_note)}</p>")
    parts.append("<h2 id='runs'>Runs</h2><p>The runs' manifests (configuration, versions, rules hash): "
                 "the full manifest is each run folder's manifest.json.</p>")
    for where, m, done in manifests:
        parts.append(f"<details><summary>{esc(where)}</summary><pre>{esc(_manifest_json(m, done))}</pre></details>")
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")


def _md_table(shown) -> str:
    cell = lambda v: md(v).replace("|", "\\|") if isinstance(v, str) else v        # noqa: E731
    return shown.rename(columns=cell).map(cell).to_markdown(index=False)


def _md_figure(title, figure) -> str:
    return f"![{md(title)}]({figure.name})"


ANSWER_FILE = "answer.txt"
ANSWER_WIDTH = 100


def answer_text(rep) -> str:
    """The answer's headline, one paragraph a player count, as plain text (``ANSWER_FILE``).

    Why a file of its own: a command that writes a report prints it on the terminal
    (``evora_sim.cli.analyse_work.announce``), so a designer reads the answer where the run
    ended without opening the page, and a script can read it without parsing the page."""
    return "".join(textwrap.fill(f"{a.players} players: {a.lead}", ANSWER_WIDTH, subsequent_indent="  ",
                                 break_on_hyphens=False) + "\n" for a in rep.answers)


def write_markdown(path, rep, figures, manifests) -> None:
    lines = [f"# {md(rep.title)}", ""]
    lines += [f"- **{md(k)}:** {md(v)}" for k, v in rep.header]
    lines += [""] + [f"> {md(x)}" for x in rep.notices]
    lines += ["", "## The answer", ""]
    for a in rep.answers:
        lines += [f"### {a.players} players", "", f"**{md(a.lead)}**", ""]
        lines += [md(a.why), ""] if a.why else []
        lines += [f"[{md(a.fix)}](#{_anchor(WHY_TITLE)})", ""] if a.fix else []
        lines += [md(x) for x in a.details] + [""]
    lines += [_md_figure(rep.answer_figure[0], figures[rep.answer_figure[1]]), "",
              "### Strongest card and space findings", ""] + [f"- {md(x)}" for x in rep.strongest]
    if rep.strongest_figure:
        lines += ["", _md_figure(rep.strongest_figure[0], figures[rep.strongest_figure[1]])]
    lines += ["", "## Findings", ""] + [f"- {md(x)}" for x in rep.findings]
    lines += ["", f"Significance level {ALPHA}; ranges are 95%."]
    for sec in rep.sections:
        lines += ["", f"## {md(sec.title)}", ""]
        if sec.notice:
            lines += [f"> {md(sec.notice)}", ""]
        lines.append(md(sec.note))
        for t in sec.tables:
            lines += ["", md(t.caption)] if t.caption else []
            lines += ["", f"Table {md_code(t.name + '.csv')} ({len(t.df):,} rows):", "", _md_table(t.shown)]
        for title, stem, _ in sec.figures:
            lines += ["", _md_figure(title, figures[stem])]
    if rep.sample is not None:
        g = rep.sample
        lines += ["", f"## {SAMPLE_TITLE}", "", f"The run's first game (seed {g.seed}); its full log is "
                  f"[sample_game.txt](sample_game.txt), printed by {md_code(g.command)}.", "",
                  _md_figure("A sample game", figures["sample_game"])]
    elif rep.sample_note:
        lines += ["", md(rep.sample_note)]
    lines += ["", "## Runs", ""]
    for where, m, done in manifests:
        lines += [md_code(where), "", *md_fenced(_manifest_json(m, done), "json"), ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
