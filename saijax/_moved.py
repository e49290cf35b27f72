"""Old import paths of modules that moved into the layers (issue 45), kept working.

Until saijax was split into layers every module sat at the top of
``saijax/`` (``saijax.go``, ``saijax.pipeline``, ...). Notebooks and
scripts that import those names still work: an import of an old name is
the new module itself (the same object, so patching it patches the one the
code uses), with a DeprecationWarning that names the new path. The map is
:data:`MOVED`; the layers are in README.md, "How the pieces fit".
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings

# Old module -> new module. A command that moved to cli/ keeps its old name
# as an entry point (saijax/train.py, saijax/arena.py, ...), not here.
MOVED: dict[str, str] = {
    "saijax.agents": "saijax.core.agents",
    "saijax.arena_cli": "saijax.cli.arena",
    "saijax.checkpoints": "saijax.core.checkpoints",
    "saijax.checks": "saijax.core.checks",
    "saijax.config": "saijax.learn.config",
    "saijax.control": "saijax.play.control",
    "saijax.distributed": "saijax.learn.distributed",
    "saijax.features": "saijax.core.features",
    "saijax.gating": "saijax.learn.gating",
    "saijax.go": "saijax.core.go",
    "saijax.gtp_client": "saijax.play.gtp_client",
    "saijax.gtp_match": "saijax.play.gtp_match",
    "saijax.gtp_opponent": "saijax.play.gtp_opponent",
    "saijax.legs": "saijax.learn.legs",
    "saijax.losses": "saijax.learn.losses",
    "saijax.match": "saijax.play.match",
    "saijax.match_loop": "saijax.play.match_loop",
    "saijax.mcts": "saijax.core.mcts",
    "saijax.networks": "saijax.core.networks",
    "saijax.opponents": "saijax.play.opponents",
    "saijax.options": "saijax.play.options",
    "saijax.pipeline": "saijax.learn.pipeline",
    "saijax.player_cli": "saijax.cli.player",
    "saijax.players": "saijax.play.players",
    "saijax.replay": "saijax.learn.replay",
    "saijax.results": "saijax.analysis.results",
    "saijax.run_metrics": "saijax.learn.run_metrics",
    "saijax.run_selfplay": "saijax.learn.run_selfplay",
    "saijax.run_setup": "saijax.learn.run_setup",
    "saijax.search": "saijax.core.search",
    "saijax.selfplay": "saijax.learn.selfplay",
    "saijax.selfplay_stats": "saijax.learn.selfplay_stats",
    "saijax.sgf": "saijax.core.sgf",
    "saijax.sigmoid": "saijax.core.sigmoid",
    "saijax.stats": "saijax.analysis.stats",
    "saijax.styles": "saijax.play.styles",
    "saijax.theory": "saijax.analysis.theory",
    "saijax.training": "saijax.learn.training",
}


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module it moved to."""

    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):
        module = importlib.import_module(self.new)
        self._spec = module.__spec__  # the import system sets the alias's spec on it: put the real one back
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        warnings.warn(f"{fullname} moved to {new}; import {new} instead", DeprecationWarning, stacklevel=3)
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Puts the finder of old names first on ``sys.meta_path`` (once): an old
    name is always the moved module, whatever else could find a file by it."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def forward(module_name: str, moved: dict[str, str]):
    """A module ``__getattr__`` for an entry point that kept an old name:
    ``moved`` maps an attribute to the module that now holds it."""

    def __getattr__(name: str):
        if name not in moved:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        warnings.warn(
            f"{module_name}.{name} moved to {moved[name]}.{name}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(moved[name]), name)

    return __getattr__


def forward_module(module_name: str, new: str):
    """A module ``__getattr__`` for an entry point whose library moved to
    ``new`` as a whole: any other attribute is ``new``'s."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        module = importlib.import_module(new)
        if not hasattr(module, name):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r} (its library is {new})")
        warnings.warn(
            f"{module_name}.{name} moved to {new}.{name}; import it from there", DeprecationWarning, stacklevel=2
        )
        return getattr(module, name)

    return __getattr__
