"""A page checked in a real browser: headless Chromium (Debian's package, /usr/bin/chromium),
driven with its own command-line flags, no extra Python package.

``check_page`` loads a copy of the page with a small script placed first in its head. The script
records console errors and failed loads, and at the load event measures the page at the window's
width (every folded block opened first, so folded tables are measured too): the document's
scroll width, every element whose right edge passes the window, every box that would scroll
sideways, and every image's load state. Chromium's ``--dump-dom`` prints the document after the
load, the script's result in it. ``screenshot`` saves a PNG of the top of the page.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("EVORA_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--mute-audio"]

PROBE = r"""<script>
(function(){
  var errors = [];
  var log = console.error;
  console.error = function(){ errors.push(Array.prototype.join.call(arguments, ' ')); log.apply(console, arguments); };
  window.addEventListener('error', function(ev){
    errors.push('error: ' + (ev.message || (ev.target && (ev.target.src || ev.target.href)) || 'a resource failed'));
  }, true);
  window.addEventListener('load', function(){
    document.querySelectorAll('details').forEach(function(d){ d.open = true; });
    var W = window.innerWidth, over = [];
    document.querySelectorAll('body *').forEach(function(el){
      var r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > W + 1) over.push(el.tagName + ' right edge ' + Math.round(r.right));
      var ox = getComputedStyle(el).overflowX;
      if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1) over.push(el.tagName + ' scrolls sideways');
    });
    var images = Array.prototype.map.call(document.images, function(i){
      return {loaded: i.complete && i.naturalWidth > 0, alt: i.alt}; });
    var out = document.createElement('pre');
    out.id = 'evora-check';
    out.textContent = JSON.stringify({width: W, scroll_width: document.documentElement.scrollWidth,
                                      overflow: over.slice(0, 20), images: images, errors: errors});
    document.body.appendChild(out);
  });
})();
</script>"""


# set by .ci/run when apt installs Chromium while pip installs and the engine compiles: a folder
# where apt's output goes (apt.log) and, once it is done, its exit status (status)
INSTALLING = "EVORA_CHROMIUM_INSTALL"
INSTALL_WAIT = 20 * 60          # seconds: CI's whole time


def available() -> bool:
    return Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)


def need_chromium() -> None:
    """Return once Chromium is there; skip the test on a machine without it, but fail it under CI,
    which installs it (after waiting for that install, if it is still going, and with apt's
    output if it failed)."""
    folder = os.environ.get(INSTALLING)
    if folder:
        status = Path(folder) / "status"
        deadline = time.monotonic() + INSTALL_WAIT
        while not status.exists() and time.monotonic() < deadline:
            time.sleep(1)
        code = status.read_text().strip() if status.exists() else "still running"
        if code != "0":
            log = Path(folder) / "apt.log"
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            pytest.fail(f"installing chromium (.ci/run) ended with: {code}\n{tail}")
    if not available():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")


def _run(args: list[str], profile: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    profile.mkdir(parents=True, exist_ok=True)
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def check_page(page: Path, work: Path, width: int = 1280, height: int = 900) -> dict:
    """Load ``page`` (with its neighbours: copied into ``work``) at ``width`` pixels; return the
    probe's result (width, scroll_width, overflow, images, errors)."""
    work.mkdir(parents=True, exist_ok=True)
    folder = work / "page"
    shutil.copytree(page.parent, folder, dirs_exist_ok=True)
    text = page.read_text(encoding="utf-8")
    probed = folder / page.name
    probed.write_text(re.sub(r"<head>", "<head>" + PROBE, text, count=1), encoding="utf-8")
    res = _run([f"--window-size={width},{height}", "--virtual-time-budget=15000", "--dump-dom",
                probed.as_uri()], work / "profile-check")
    m = re.search(r"<pre id=\"evora-check\">(.*?)</pre>", res.stdout, re.S)
    if not m:
        raise AssertionError(f"the page did not finish loading in Chromium (exit {res.returncode}): "
                             f"{res.stderr[-2000:]}")
    import html

    return json.loads(html.unescape(m.group(1)))


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 2600) -> Path:
    """A PNG of the top ``height`` pixels of ``page`` in a ``width``-pixel window."""
    res = _run([f"--window-size={width},{height}", "--virtual-time-budget=15000", f"--screenshot={png}",
                page.resolve().as_uri()], png.parent / "profile-shot")
    if not png.is_file():
        raise AssertionError(f"Chromium wrote no screenshot (exit {res.returncode}): {res.stderr[-2000:]}")
    return png
