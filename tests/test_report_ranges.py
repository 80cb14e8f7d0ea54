"""Issue 50, item 4: no committed report prints a range of zero width as a measurement, an
estimate outside its range or on a limit it differs from (more digits tell them apart), or a share
outside 0-100%. The scan reads every report's text as a designer would, whatever wrote it.

Reports made before the number formatting was fixed, and not made again yet, are listed in
STALE with the reason; the test fails if a listed report becomes clean (take it off the list) or
an unlisted one has a bad range, so the list can only shrink."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPORTS = Path(__file__).resolve().parent.parent / "reports"
NUM = r"[+-]?\d+(?:\.\d+)?"
UNIT = r"(?: ?pp| ?%| VP| turns| Elo)?"
# "12.3% (11.9–12.7)", "+1.2 pp (0.4 to 2.0)", "0.55 [0.50, 0.60]"
PAREN = re.compile(rf"(?<![\w.])({NUM}){UNIT} \((?:95% (?:range |CI )?)?({NUM}){UNIT}(?:–| to )({NUM}){UNIT}\)")
SQUARE = re.compile(rf"(?<![\w.])({NUM}){UNIT} \[({NUM}){UNIT}, ({NUM}){UNIT}\]")
SHARE = re.compile(rf"(?<![\w.])({NUM})% \(({NUM})(?:–| to )({NUM})\)")

STALE = {
}


def bad_ranges(text: str) -> list[str]:
    """Every printed range in ``text`` that misleads, with what is wrong with it."""
    out = []
    for pattern in (PAREN, SQUARE):
        for m in pattern.finditer(text):
            raw = m.group(1)
            if re.fullmatch(r"9[059]%?", raw) or raw in ("95", "90", "99"):    # a level, "95% [..]"
                continue
            est, lo, hi = (float(g) for g in m.groups())
            if lo == hi:
                out.append(f"zero width: {m.group(0)}")
            elif not lo <= est <= hi:
                out.append(f"estimate outside its range: {m.group(0)}")
            elif (est == lo and lo != 0.0) or (est == hi and hi not in (0.0, 100.0)):
                out.append(f"estimate printed on a limit: {m.group(0)}")
    for m in SHARE.finditer(text):
        lo, hi = float(m.group(2)), float(m.group(3))
        if lo < 0 or hi > 100:
            out.append(f"a share outside 0-100%: {m.group(0)}")
    return out


def test_the_scan_finds_each_kind_of_bad_range():
    assert bad_ranges("0.0 (0.0–0.0)") and bad_ranges("2.8 pp (2.5–2.8)") and bad_ranges("+0.00 [+0.00, +0.00]")
    assert bad_ranges("3.1 (3.2 to 4.0)") and bad_ranges("12.0% (-0.4–20.1)")
    assert not bad_ranges("2.78 pp (2.50–2.81)") and not bad_ranges("0.0 pp (0.0–0.6)")
    assert not bad_ranges("Feldman-Cousins 95% [0.00, 0.53]") and not bad_ranges("100.0% (98.8–100.0)")


REPORT_FILES = sorted(p for p in REPORTS.rglob("*") if p.suffix in (".md", ".txt"))


@pytest.mark.parametrize("path", REPORT_FILES, ids=lambda p: str(p.relative_to(REPORTS)))
def test_no_committed_report_prints_a_misleading_range(path):
    name = path.relative_to(REPORTS).as_posix()
    bad = bad_ranges(path.read_text(encoding="utf-8"))
    if name in STALE:
        assert bad, f"{name} is clean now: take it off STALE"
    else:
        assert not bad, f"{name}: " + "; ".join(bad[:5])


def test_every_stale_report_exists():
    assert all((REPORTS / name).is_file() for name in STALE)
