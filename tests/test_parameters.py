"""Parameter lists a reader can hold (issue 52): no function of the command line, the runner, the
experiments, the statistics, the scripts or the players takes more than 12 parameters; what
travels together is one value (``runner.Execution``, ``compensation.Compensation``,
``skill_work.SkillOptions``, the dashboard's ``Slice``; in the players' compiled code the turn
planner's buffers as one ``planner.PlanWork`` of named tuples, and ``imitation.turn_rows``'s rows
and scratch as a ``TurnRows`` and a ``ReplayWork``). No compiled kernel is exempt."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOST = 12
CHECKED = ("evora_sim", "analysis", "scripts", "strategies")


def long_lists(root: Path, packages=CHECKED) -> list[str]:
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    a = node.args
                    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
                    if n > MOST:
                        found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({n})")
    return found


def test_no_function_takes_more_than_12_parameters():
    assert long_lists(ROOT) == []


def test_the_count_sees_a_long_list(tmp_path):
    (tmp_path / "evora_sim").mkdir()
    (tmp_path / "evora_sim" / "x.py").write_text("def f(a, b, c, d, e, f, g, h, i, j, k, l, *, m):\n    pass\n")
    assert long_lists(tmp_path, ("evora_sim",)) == ["evora_sim/x.py:1 f (13)"]
