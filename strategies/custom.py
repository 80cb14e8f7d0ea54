"""Custom strategies written in plain Python, played on the same compiled rules.

The protocol
------------
A custom strategy is either a **class** whose instances have a method

    choose(self, state, legal_actions, rng) -> action

or a plain **function** ``choose(state, legal_actions, rng) -> action``.

- ``state`` is an :class:`evora_sim.api.State`: a *copy* of the game made for this decision.
  Read it with the :mod:`evora_sim.api` functions (``current_player``, ``score_now``,
  ``column_leader``, ``describe_action``, ...). The strategy may change its copy, for example
  to look ahead with ``api.apply_action`` on ``state`` (or on ``state.clone()`` for several
  lines): the game itself is never affected.
- ``legal_actions`` is a list of at least two action codes (ints). A decision with a single
  legal action is applied without asking any strategy (docs/RULES.md, P5).
- ``rng`` is a :class:`numpy.random.Generator`, ``numpy.random.default_rng([seed, seat])``
  for the game's seed and the strategy's seat. Draw every random choice from it and the game
  stays reproducible from its seed.
- Return one element of ``legal_actions``. Any other value, or an exception, stops the game
  with a :class:`StrategyError` naming the strategy, the action, the decision point and the
  game seed.

A class is instantiated with no arguments once per seat and game, so an instance may remember
what happened earlier in its game, and nothing carries over from one game to the next: a game
plays the same whatever batch, chunk or process plays it.

Referencing a custom strategy
-----------------------------
Wherever a strategy is named (``--strategies``, ``evora duel``, ``play_batch``,
``runner.simulate``):

- ``path/to/file.py:Name``: ``Name`` (a class or function) defined in that file. The file is
  loaded as a module of its own (it may import ``evora_sim``, ``numpy`` and any installed
  package); the spec records its absolute path, so worker processes load the same file.
- ``NAME``: an entry point of the group ``evora_sim.strategies`` of an installed package:

      [project.entry-points."evora_sim.strategies"]
      cautious = "mypackage.bots:Cautious"

  A built-in of the same name wins.

Custom strategies may sit at the same table as built-ins. Their decisions are taken in Python,
so they are slower; the built-in seats and the rules stay compiled (``evora_sim.mixed``).
"""
from __future__ import annotations

import hashlib
import inspect
import sys
import types
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from .compiled import NF
from .errors import StrategyError

KIND_CUSTOM = -1
GROUP = "evora_sim.strategies"

# (source key, digest) -> the loaded class or function, once per process
_LOADED: dict[tuple[str, str], object] = {}


@dataclass(frozen=True)
class CustomStrategy:
    """A strategy written in Python: where it comes from, and how to load it in any process.

    ``source`` is ``"file"`` (``target`` is the absolute path of the ``.py`` file, ``attr``
    the name in it) or ``"entry_point"`` (``target`` is the entry point's name). ``digest``
    fingerprints the code: the file's SHA-256, or the entry point's value and distribution.
    """

    name: str
    source: str
    target: str
    attr: str
    digest: str
    description: str = ""
    kind: int = KIND_CUSTOM
    weights: tuple[float, ...] = field(default=(0.0,) * NF)

    def resolved(self) -> dict:
        """What this spec resolved to (stored in run manifests and compared on resume)."""
        if self.source == "file":
            return {"kind": "custom", "file": self.target, "object": self.attr, "sha256": self.digest}
        return {"kind": "custom", "entry_point": self.target, "value": self.digest}

    def obj(self):
        """The class or function, loaded once per process (and checked against ``digest``)."""
        key = (self.source + ":" + self.target + ":" + self.attr, self.digest)
        if key not in _LOADED:
            if self.source == "file":
                digest, obj = load_file_object(self.name, self.target, self.attr)
            else:
                digest, obj = load_entry_point(self.name, self.target)
            if digest != self.digest:
                raise StrategyError(
                    f"strategy {self.name!r}: its code changed since the strategy was resolved "
                    f"({self.digest[:16]} -> {digest[:16]})")
            _LOADED[key] = obj
        return _LOADED[key]

    def new_player(self):
        """The ``choose(state, legal_actions, rng)`` callable of one seat for one game."""
        obj = self.obj()
        if inspect.isclass(obj):
            try:
                return obj().choose
            except (Exception, SystemExit) as exc:
                raise StrategyError(f"strategy {self.name!r}: {obj.__name__}() failed: "
                                    f"{type(exc).__name__}: {exc}") from exc
        return getattr(obj, "choose", obj)


def is_custom(strategy) -> bool:
    return isinstance(strategy, CustomStrategy)


def _first_line(doc: str | None) -> str:
    return (inspect.cleandoc(doc).splitlines() or [""])[0] if doc else ""


def check_object(spec: str, obj, where: str):
    """``obj`` must be a class with ``choose(self, state, legal_actions, rng)``, an object with
    ``choose(state, legal_actions, rng)`` or a function ``(state, legal_actions, rng)``."""
    if inspect.isclass(obj):
        fn = getattr(obj, "choose", None)
        if not callable(fn):
            raise StrategyError(f"strategy {spec!r}: class {obj.__name__} in {where} has no "
                                "choose(self, state, legal_actions, rng) method")
        args = (None, None, None, None)
    elif callable(getattr(obj, "choose", None)):
        fn, args = obj.choose, (None, None, None)
    elif callable(obj):
        fn, args = obj, (None, None, None)
    else:
        raise StrategyError(f"strategy {spec!r}: {where} defines it as a {type(obj).__name__}, not a "
                            "class with a choose(state, legal_actions, rng) method or a function")
    try:
        inspect.signature(fn).bind(*args)
    except TypeError:
        raise StrategyError(f"strategy {spec!r}: choose in {where} must take (state, legal_actions, "
                            f"rng){' after self' if inspect.isclass(obj) else ''}") from None
    except ValueError:          # no signature (a builtin): trust it
        pass
    return obj


def load_file_object(spec: str, path: str, attr: str):
    """(sha256 of the file, the named object) from a ``.py`` file, or a StrategyError."""
    p = Path(path)
    if not p.is_file():
        raise StrategyError(f"strategy {spec!r}: file {path} not found"
                            if not p.exists() else f"strategy {spec!r}: {path} is not a file")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise StrategyError(f"strategy {spec!r}: cannot read {path}: {exc.strerror or exc}") from None
    digest = hashlib.sha256(data).hexdigest()
    modname = f"evora_custom_{hashlib.sha256(str(p).encode()).hexdigest()[:12]}_{digest[:12]}"
    module = sys.modules.get(modname)
    if module is None:
        module = types.ModuleType(modname)
        module.__file__ = str(p)
        sys.modules[modname] = module            # dataclasses, pickle and typing look it up
        try:
            exec(compile(data, str(p), "exec"), module.__dict__)
        except (Exception, SystemExit) as exc:     # sys.exit() at import must not end evora silently
            del sys.modules[modname]
            where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
            raise StrategyError(f"strategy {spec!r}: cannot load {path}: {type(exc).__name__}: "
                                f"{getattr(exc, 'msg', None) or exc}{where}") from None
    if not attr.isidentifier() or not hasattr(module, attr):
        defined = sorted(k for k, v in vars(module).items()
                         if not k.startswith("_") and (inspect.isclass(v) or inspect.isfunction(v))
                         and getattr(v, "__module__", None) == modname)
        raise StrategyError(f"strategy {spec!r}: {path} has no class or function {attr!r} "
                            f"(it defines: {', '.join(defined) or 'none'})")
    return digest, check_object(spec, getattr(module, attr), path)


def entry_points() -> dict:
    """The installed entry points of the group ``evora_sim.strategies``, by name."""
    return {ep.name: ep for ep in metadata.entry_points(group=GROUP)}


def _ep_digest(ep) -> str:
    dist = getattr(ep, "dist", None)
    where = f" ({dist.name} {dist.version})" if dist is not None else ""
    return f"{ep.value}{where}"


def load_entry_point(spec: str, name: str):
    """(the entry point's value and distribution, the loaded object), or a StrategyError."""
    ep = entry_points().get(name)
    if ep is None:
        raise StrategyError(f"strategy {spec!r}: no entry point {name!r} in the group {GROUP}")
    try:
        obj = ep.load()
    except (Exception, SystemExit) as exc:
        raise StrategyError(f"strategy {spec!r}: cannot load entry point {name} = {ep.value}: "
                            f"{type(exc).__name__}: {exc}") from None
    return _ep_digest(ep), check_object(spec, obj, f"entry point {name} = {ep.value}")


def from_file(spec: str, path: str, attr: str) -> CustomStrategy:
    """The custom strategy ``attr`` of the ``.py`` file ``path`` (loaded now, so that a missing
    file or class is reported before any game is played)."""
    full = str(Path(path).expanduser().absolute())
    digest, obj = load_file_object(spec, full, attr)
    strategy = CustomStrategy(f"{full}:{attr}", "file", full, attr, digest, _first_line(obj.__doc__))
    _LOADED[("file:" + full + ":" + attr, digest)] = obj
    return strategy


def from_entry_point(spec: str, name: str) -> CustomStrategy:
    digest, obj = load_entry_point(spec, name)
    strategy = CustomStrategy(name, "entry_point", name, "", digest, _first_line(obj.__doc__))
    _LOADED[("entry_point:" + name + ":", digest)] = obj
    return strategy


def from_resolved(name: str, info: dict) -> CustomStrategy:
    """The strategy recorded by :meth:`CustomStrategy.resolved` (loaded on first use)."""
    if "file" in info:
        return CustomStrategy(name, "file", info["file"], info["object"], info["sha256"])
    return CustomStrategy(name, "entry_point", info["entry_point"], "", info["value"])


__all__ = ["KIND_CUSTOM", "GROUP", "CustomStrategy", "StrategyError", "is_custom", "entry_points",
           "from_file", "from_entry_point", "from_resolved"]
