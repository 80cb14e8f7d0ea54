"""The layers of the code go one way (issue 52): the contracts in ``.importlinter`` hold, every
module is in a layer, and a wrong-way import planted in a copy of the code breaks them.

import-linter reads the import statements of the source files, those inside functions too, so a
lazy import cannot hide a wrong-way dependency. docs/code.md describes the layers.
"""
from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".importlinter"
PACKAGES = ("evora_sim", "strategies", "analysis")
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True, no_logo=True))")


def lint(tree: Path) -> subprocess.CompletedProcess:
    """The contracts checked against the packages in ``tree`` (import-linter looks there first)."""
    return subprocess.run([sys.executable, "-c", LINT, str(CONFIG)], cwd=tree, capture_output=True, text=True,
                          timeout=120)


def layer_modules() -> list[str]:
    cfg = configparser.ConfigParser()
    cfg.read(CONFIG, encoding="utf-8")
    lines = cfg["importlinter:contract:layers"]["layers"].split("\n")
    return [m.strip() for line in lines for m in line.split(":") if m.strip()]


def test_the_layers_hold():
    res = lint(ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


def test_every_module_is_in_a_layer():
    """A new module must be placed in a layer, or the contract would say nothing of it."""
    layers = layer_modules()
    outside = []
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            if name != "evora_sim" and not any(name == m or name.startswith(m + ".") for m in layers):
                outside.append(name)
    assert not outside, f"modules in no layer of .importlinter: {outside}"


def test_a_wrong_way_import_breaks_the_layers(tmp_path):
    """The statistics importing the runner (they would play games) is refused, as is play
    importing the statistics."""
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.toml", "*.pyc"))
    numbers = tmp_path / "analysis" / "numbers.py"
    numbers.write_text(numbers.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from evora_sim import runner\n",
                       encoding="utf-8")
    batch = tmp_path / "evora_sim" / "batch.py"
    batch.write_text(batch.read_text(encoding="utf-8") + "\nimport analysis.stats\n", encoding="utf-8")
    res = lint(tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "analysis.numbers -> evora_sim.runner" in res.stdout
    assert "evora_sim.batch -> analysis.stats" in res.stdout
    assert "2 broken" in res.stdout
