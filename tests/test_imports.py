"""The project's modules import one another without circles.

A circle makes the import order matter and hides which module owns what (batch and mixed, the
built-ins and their registry once formed one). Every import counts, the ones inside functions
too: a lazy import only hides a circle from the interpreter, not from the reader.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("evora_sim", "strategies", "analysis")


def dotted(f: Path, root: Path = ROOT) -> str:
    """A package file's module name as imported (a package's ``__init__`` by the package's)."""
    parts = f.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {dotted(f): f for pkg in PACKAGES for f in sorted((ROOT / pkg).rglob("*.py"))}


def imported(name: str, path: Path, known: dict) -> set[str]:
    """The project modules that module ``name`` imports anywhere in its text."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[:len(package) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            targets += [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    out = set()
    for t in targets:
        while t and t not in known:
            t = t.rpartition(".")[0]
        if t and t != name:
            out.add(t)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_a_lazy_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_through_others():
    known = modules()
    assert "evora_sim.batch" in known and "evora_sim.mixed" in known
    graph = {name: imported(name, path, known) for name, path in known.items()}
    assert "evora_sim.mixed" in graph["evora_sim.batch"]       # the finder sees real imports
    assert circles(graph) == []


# ---- the compile cache's key (evora_sim.compiled_sources) ----------------------------------
def test_the_compile_key_covers_every_module_compiled_code_imports():
    """The key's own quick import scan finds the same files as the parser above, from every
    module that mentions njit; ranking.py (compiled into the engine, no njit of its own) is in,
    the command line is out."""
    from evora_sim import compiled_sources

    known = modules()
    graph = {name: imported(name, path, known) for name, path in known.items()}
    todo = [name for name, path in known.items() if b"njit" in path.read_bytes()]
    reached = set()
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            parts = name.split(".")
            todo += [".".join(parts[:i]) for i in range(1, len(parts))] + sorted(graph[name])
    covered = set(compiled_sources(ROOT))
    assert covered == {known[name] for name in reached}
    assert ROOT / "evora_sim" / "ranking.py" in covered
    assert ROOT / "evora_sim" / "cli" / "play.py" not in covered


def test_every_compiled_function_lives_in_a_keyed_file():
    """Every numba function any module holds (``order_key`` is ranking.py's, compiled by
    engine.py) is defined in a file of the key."""
    import importlib
    import inspect

    from numba.core.dispatcher import Dispatcher

    from evora_sim import compiled_sources

    import evora_sim

    # the packages as imported: under CI's non-editable install they live in site-packages
    installed = Path(evora_sim.__file__).resolve().parent.parent
    covered = set(compiled_sources(installed))
    homes = set()
    for name in modules():
        if name.split(".")[0] in ("evora_sim", "strategies") and not name.endswith("__main__"):
            for value in vars(importlib.import_module(name)).values():
                if isinstance(value, Dispatcher):
                    homes.add(Path(inspect.getfile(value.py_func)).resolve())
    assert installed / "evora_sim" / "ranking.py" in homes
    assert homes <= covered


def test_an_edit_to_ranking_changes_the_compile_key(tmp_path):
    """In a copy of the packages: a change to ``order_key`` (no njit in its file) makes a new
    cache folder; a change to the command line or the replay does not."""
    import shutil

    from evora_sim import source_key

    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__", "data"))
    before = source_key(tmp_path)
    for quiet in ("evora_sim/cli/play.py", "evora_sim/replay.py"):
        with open(tmp_path / quiet, "a") as f:
            f.write("\n# an edit compiled code never sees\n")
    assert source_key(tmp_path) == before
    ranking = tmp_path / "evora_sim" / "ranking.py"
    ranking.write_text(ranking.read_text().replace("+ seat", "- seat"))
    assert source_key(tmp_path) != before


# ---- imports at the top (issue 52) ---------------------------------------------------------
MAX_LAZY = 40          # imports inside functions, each kept for a measured start-up cost


def lazy_imports() -> list[tuple[str, int, str]]:
    """Every import inside a function of the packages: (file, line, the lines around it)."""
    out = []
    for name, path in modules().items():
        lines = path.read_text(encoding="utf-8").split("\n")
        tree = ast.parse("\n".join(lines))
        seen = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno not in seen:
                        seen.add(node.lineno)
                        out.append((name, node.lineno, " ".join(lines[max(0, node.lineno - 4):node.end_lineno])))
    return out


def test_imports_sit_at_the_top_unless_a_measured_cost_says_why():
    """An import inside a function hides the module graph from its reader; one is kept only for a
    start-up cost, measured and said beside it (``# lazy: ... 0.8 s (measured)``)."""
    found = lazy_imports()
    assert found and len(found) < MAX_LAZY, [f"{m}:{n}" for m, n, _ in found]
    unsaid = [f"{m}:{n}" for m, n, text in found if "lazy" not in text or "measured" not in text]
    assert not unsaid, f"imports inside functions without their measured cost beside them: {unsaid}"


def shared_names(root: Path = ROOT) -> dict[str, list[str]]:
    """Module file names (``__init__`` aside) held by more than one module of ours, and where:
    ``explain.py`` three times once meant a reader had to ask which one a traceback named."""
    where: dict[str, list[str]] = {}
    for pkg in PACKAGES + ("scripts",):
        for f in sorted((root / pkg).rglob("*.py")):
            if f.name != "__init__.py":
                where.setdefault(f.name, []).append(f.relative_to(root).as_posix())
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_no_two_modules_share_a_name():
    assert shared_names() == {}


def test_the_name_check_sees_a_clash(tmp_path):
    for pkg in ("evora_sim", "analysis"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "tables.py").write_text("")
    assert shared_names(tmp_path) == {"tables.py": ["evora_sim/tables.py", "analysis/tables.py"]}


# ---- no private names across modules (issue 52) --------------------------------------------
CHECKED = PACKAGES + ("scripts", "tests")
PROBES = {"setattr", "getattr", "delattr", "hasattr"}


def private(name: str) -> bool:
    """``_name``, not ``__name__``: a dunder is the language's, open to every module."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def our_modules(root: Path) -> dict[Path, str]:
    """Every checked file and its module name as imported: packages by their dotted path, the
    flat tests/ and scripts/ by their file name (that is how the tests and scripts import them)."""
    out = {}
    for top in CHECKED:
        for f in sorted((root / top).rglob("*.py")):
            out[f] = dotted(f, root) if top in PACKAGES else f.stem
    return out


def private_reaches(root: Path = ROOT) -> list[str]:
    """``file:line module._name`` for every private name of one of our modules that another
    module reaches: by ``from m import _name`` (relative too), by ``alias._name`` where an import
    (or ``load_script``) bound ``alias`` to the module, or by ``setattr(alias, "_name", ...)``
    and the like, ``monkeypatch.setattr("m._name", ...)`` included. A private name is the
    module's own to change; another module leaning on it breaks silently when it does."""
    files = our_modules(root)
    known = set(files.values())
    found = []
    for path, me in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
        bound: dict[str, str] = {}          # a name in this file -> the module of ours it holds
        makers: dict[str, str] = {}         # a function here that returns load_script("m") -> m
        where = path.relative_to(root).as_posix()

        def report(node, module, name):
            if module in known and module != me and private(name):
                found.append(f"{where}:{node.lineno} {module}.{name}")

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        bound[a.asname] = a.name
                    else:
                        bound[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package[:len(package) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                for a in node.names:
                    report(node, base, a.name)
                    if f"{base}.{a.name}" in known:
                        bound[a.asname or a.name] = f"{base}.{a.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for ret in ast.walk(node):
                    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call):
                        script = loaded_script(ret.value)
                        if script:
                            makers[node.name] = script

        def module_of(expr) -> str | None:
            if isinstance(expr, ast.Name):
                return bound.get(expr.id)
            if isinstance(expr, ast.Attribute):
                outer = module_of(expr.value)
                return f"{outer}.{expr.attr}" if outer and f"{outer}.{expr.attr}" in known else None
            if isinstance(expr, ast.Call):
                if isinstance(expr.func, ast.Name) and expr.func.id in makers:
                    return makers[expr.func.id]
                return loaded_script(expr)
            return None

        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                module = module_of(node.value) if isinstance(node.value, ast.Call) else None
                if module:
                    bound[node.targets[0].id] = module
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                report(node, module_of(node.value), node.attr)
            elif isinstance(node, ast.Call) and node.args:
                func = node.func
                probe = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if probe not in PROBES:
                    continue
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    module, _, name = first.value.rpartition(".")
                    report(node, module, name)
                elif len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                    report(node, module_of(first), str(node.args[1].value))
    return sorted(set(found))


def loaded_script(call: ast.Call) -> str | None:
    """``m`` for a call ``load_script("m")`` (tests/script_modules.py), else None."""
    func = call.func
    if (isinstance(func, ast.Name) and func.id == "load_script" and call.args
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
        return call.args[0].value
    return None


def test_no_module_reaches_another_modules_private_names():
    found = private_reaches()
    assert not found, ("private names of one module reached from another: reach the behaviour through "
                       "the public API, or make the name public with a docstring that says why: "
                       + "; ".join(found))


def test_the_private_name_check_sees_each_way_in(tmp_path):
    """Planted: every way another module can reach a private name is named, file and line; the
    module's own use, a public name and a private name of a module not ours are not."""
    for top in CHECKED:
        (tmp_path / top).mkdir()
    (tmp_path / "evora_sim" / "__init__.py").write_text("")
    (tmp_path / "evora_sim" / "a.py").write_text("def _x():\n    pass\n\n\ny = _x\n")
    (tmp_path / "evora_sim" / "c.py").write_text("from .a import _x\nfrom . import a\n\na._x()\n")
    (tmp_path / "analysis" / "b.py").write_text(
        "import evora_sim.a\nimport evora_sim.a as A\nimport numpy as np\nfrom evora_sim.a import y\n\n"
        "evora_sim.a._x()\nA._x()\nnp._NoValue\n")
    (tmp_path / "scripts" / "tool.py").write_text("def _main():\n    pass\n")
    (tmp_path / "tests" / "test_t.py").write_text(
        "from evora_sim import a\nfrom script_modules import load_script\n\n\ndef _tool():\n"
        "    return load_script('tool')\n\n\ndef test_x(monkeypatch):\n"
        "    monkeypatch.setattr(a, '_x', None)\n    monkeypatch.setattr('evora_sim.a._x', None)\n"
        "    getattr(a, 'y')\n    _tool()._main()\n    t = load_script('tool')\n    t._main()\n")
    assert private_reaches(tmp_path) == [
        "analysis/b.py:6 evora_sim.a._x", "analysis/b.py:7 evora_sim.a._x",
        "evora_sim/c.py:1 evora_sim.a._x", "evora_sim/c.py:4 evora_sim.a._x",
        "tests/test_t.py:10 evora_sim.a._x", "tests/test_t.py:11 evora_sim.a._x",
        "tests/test_t.py:13 tool._main", "tests/test_t.py:15 tool._main"]
