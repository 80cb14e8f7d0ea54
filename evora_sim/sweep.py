"""Parameter sweeps: ``evora sweep --param KEY=V1,V2,... [--param ...]`` plays every combination
of the values, each as its own run folder under ``--out``, all on the same run seed and so on the
same game seeds (common random numbers: differences between combinations are paired by seed).

``--out`` holds ``sweep.json`` (the sweep's plan) and one run folder per combination; running the
same command again resumes every unfinished run. The summary (analysis/sweep_stats.py) goes to
``--out/summary``.
"""
from __future__ import annotations

import itertools
import re
from pathlib import Path

from .rules import RulesError, load_rules, rule_keys
from .manifest import MANIFEST, RunError, read_plan, write_json_atomic

SWEEP = "sweep.json"
FORMAT = "evora-sim sweep"


def parse_param(text: str, keys=None) -> tuple[str, list[str]]:
    """``KEY=V1,V2,...`` -> (KEY, [V1, V2, ...]). Values of a list-valued key (two numbers such
    as emperor_tile.values, or card types) are separated by ``;``: ``emperor_tile.values=3,5;4,6``.
    ``;`` may separate plain values too."""
    if "=" not in text:
        raise RulesError(f"--param {text!r}: expected KEY=V1,V2,... e.g. height_majority.h3=10,15,20")
    key, values = (x.strip() for x in text.split("=", 1))
    keys = rule_keys() if keys is None else keys
    if key not in keys:
        # the same message --set gives (nearest keys)
        load_rules(overrides=[f"{key}=0"])
    current = _current(key)
    if ";" in values or isinstance(current, list) or key.endswith((".stacks", ".types")):
        items = [v.strip() for v in values.split(";")]
    else:
        items = [v.strip() for v in values.split(",")]
    if not items or any(v == "" for v in items):
        raise RulesError(f"--param {text}: give one or more values, e.g. {key}=1,2,3")
    if len(set(items)) != len(items):
        raise RulesError(f"--param {text}: a value is repeated")
    return key, items


def _current(key: str):
    node = load_rules().data
    for part in key.split("."):
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
    return node


def combo_name(assignments: list[tuple[str, str]]) -> str:
    text = "__".join(f"{k}={v}" for k, v in assignments)
    return re.sub(r"[^A-Za-z0-9._=+-]", "-", text.replace(",", "-"))


def plan(params: list[str], rules_path=None, overrides=()) -> dict:
    """Every combination, its folder name and its validated rules: one clear error for a bad
    key or value, before anything runs."""
    if not params:
        raise RulesError("--param is required: at least one KEY=V1,V2,... to sweep")
    keys = rule_keys()
    try:
        parsed = [parse_param(p, keys) for p in params]
    except RulesError as exc:
        msg = str(exc)
        raise RulesError("--param " + msg[len("--set "):] if msg.startswith("--set ") else msg) from None
    names = [k for k, _ in parsed]
    dup = sorted({k for k in names if names.count(k) > 1})
    if dup:
        raise RulesError(f"--param {dup[0]} is given twice; give all its values in one --param")
    clash = [k for k in names if any(o.split("=", 1)[0].strip() == k for o in overrides)]
    if clash:
        raise RulesError(f"--param {clash[0]} is also fixed by --set; drop one of them")
    combos = []
    for values in itertools.product(*[v for _, v in parsed]):
        assignment = list(zip(names, values))
        sets = list(overrides) + [f"{k}={v}" for k, v in assignment]
        try:
            rules = load_rules(rules_path, sets)
        except RulesError as exc:
            where = ", ".join(f"{k}={v}" for k, v in assignment)
            msg = str(exc)
            if msg.startswith("--set ") and any(msg.startswith(f"--set {k}") for k in names):
                msg = "--param " + msg[len("--set "):]
            raise RulesError(msg if msg.startswith("--") else
                             f"--param {where}: the resulting rules are not playable: {msg}") from None
        combos.append({"name": combo_name(assignment), "values": dict(assignment), "set": sets,
                       "rules": rules, "rules_hash": rules.hash})
    if len({c["name"] for c in combos}) != len(combos):
        raise RulesError("two combinations map to the same folder name; use distinct values")
    return {"params": [[k, v] for k, v in parsed], "combos": combos}


def prepare_sweep(out: Path, the_plan: dict, base: dict) -> dict:
    """Create ``out/sweep.json`` or check that it holds this same sweep (resume)."""
    out = Path(out)
    doc = {"format": FORMAT, "version": 1, "params": the_plan["params"], "base": base,
           "combos": [{"name": c["name"], "values": c["values"], "set": c["set"],
                       "rules_hash": c["rules_hash"]} for c in the_plan["combos"]]}
    path = out / SWEEP
    old = read_plan(out, SWEEP, "sweep")
    if old is not None:
        mine = {k: doc[k] for k in ("params", "base", "combos")}
        theirs = {k: old.get(k) for k in ("params", "base", "combos")}
        if mine != theirs:
            raise RunError(f"--out {out} holds a different sweep; choose another --out")
        return old
    if (out / MANIFEST).exists() or (out.is_dir() and any(out.iterdir())):
        raise RunError(f"--out {out} is not empty and is not a sweep folder; choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, doc)
    except OSError as exc:
        raise RunError(f"--out {out}: cannot write: {exc.strerror or exc}") from None
    return doc
