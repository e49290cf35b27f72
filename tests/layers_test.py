"""The layer rule of saijax/ (README, "How the pieces fit"; docs/design.md §1).

saijax/ is in layers, each a subpackage: core, analysis, play, zoo, learn,
gtp, cli. A module imports only its own layer and the layers before it, so
nothing outside ``cli/`` imports ``cli/``, and ``learn/`` (the main job)
imports no GTP module. The commands users type (``python -m saijax.train``,
``saijax.arena``, ``saijax.elo``, ``saijax.compact_leg``, ``saijax.gtp``,
``saijax.zoo``) are thin entry points that call ``cli/``. Every import
counts, the ones inside functions too.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "saijax")
LAYERS = ("core", "analysis", "play", "zoo", "learn", "gtp", "cli")
# The commands' entry points: they may import cli/ and hold nothing else.
ENTRY_POINTS = {
    "saijax.train",
    "saijax.arena",
    "saijax.elo",
    "saijax.compact_leg",
    "saijax.analysis_engine",
    "saijax.gtp.__main__",
    "saijax.zoo.__main__",
}
# What may sit at the top of saijax/ besides the layers.
TOP = {"saijax"} | {m for m in ENTRY_POINTS if m.count(".") == 1}


def _modules() -> dict[str, str]:
    found = {}
    for directory, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(directory, f)
                name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[name.removesuffix(".__init__")] = path
    return found


MODULES = _modules()


def _imports(name: str, *, top_level_only: bool = False) -> set[str]:
    """The saijax modules that ``name`` imports (a package when a name is not a module)."""
    with open(MODULES[name]) as f:
        tree = ast.parse(f.read())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "saijax":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "saijax"}
    return {m for m in found if m in MODULES and m != name}


def _layer(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_module_is_in_a_layer_or_an_entry_point():
    stray = sorted(m for m in MODULES if _layer(m) is None and m not in TOP)
    assert not stray, f"modules outside the layers {LAYERS}: {stray}"


def test_each_layer_imports_only_itself_and_the_layers_before_it():
    bad = []
    for name in MODULES:
        layer = _layer(name)
        if layer is None or name in ENTRY_POINTS:
            continue
        allowed = set(LAYERS[: LAYERS.index(layer) + 1])
        for dep in _imports(name):
            dep_layer = _layer(dep)
            if dep_layer is not None and dep_layer not in allowed:
                bad.append(f"{name} imports {dep} ({layer} may import {', '.join(sorted(allowed))})")
    assert not bad, "\n".join(bad)


def test_nothing_outside_cli_imports_cli_but_the_entry_points():
    bad = [
        f"{name} imports {dep}"
        for name in MODULES
        if _layer(name) != "cli" and name not in ENTRY_POINTS
        for dep in _imports(name)
        if _layer(dep) == "cli"
    ]
    assert not bad, "\n".join(bad)


def test_entry_points_are_thin():
    for name in ENTRY_POINTS:
        with open(MODULES[name]) as f:
            tree = ast.parse(f.read())
        defs = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        assigned = [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
        assert not defs + assigned, f"{name} is an entry point and should only call cli/, but defines {defs + assigned}"
        assert any(_layer(d) == "cli" for d in _imports(name)), f"{name} does not call cli/"


def _reach(name: str) -> set[str]:
    """Every saijax module ``name`` imports, directly or through others."""
    seen, todo = set(), [name]
    while todo:
        for dep in _imports(todo.pop()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen - {name}


def test_learn_imports_no_gtp_module():
    for name in MODULES:
        if _layer(name) == "learn":
            gtp = sorted(m for m in _reach(name) if "gtp" in m)
            assert not gtp, f"{name} reaches GTP modules {gtp}"


def test_the_main_job_loads_no_gtp_module():
    code = "import sys, saijax.train; print(sorted(m for m in sys.modules if 'gtp' in m and 'saijax' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph`` (module -> the modules it imports): its
    strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def test_no_import_cycle_among_saijax_modules():
    """Every import counts, the ones inside functions and under TYPE_CHECKING
    too: a module that needs a name of another never lends it back."""
    cycles = _cycles({name: _imports(name) for name in MODULES})
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_each_cycle_and_only_those():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["d", "e"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_import_saijax_installs_no_import_hook():
    """``import saijax`` leaves the import system as it was: no finder on
    ``sys.meta_path``, no path hook; a command's module adds none of saijax's
    (absl adds its own); and a module has only its own name (the flat
    ``saijax.go`` of before the layers is not ``saijax.core.go``)."""
    code = (
        "import sys\n"
        "before = (list(sys.meta_path), list(sys.path_hooks))\n"
        "import saijax\n"
        "assert (list(sys.meta_path), list(sys.path_hooks)) == before, (sys.meta_path, sys.path_hooks)\n"
        "import saijax.cli.train, saijax.train\n"
        "ours = [f for f in sys.meta_path + sys.path_hooks if getattr(f, '__module__', '').startswith('saijax')]\n"
        "assert not ours, ours\n"
        "try:\n"
        "    import saijax.go\n"
        "except ModuleNotFoundError:\n"
        "    print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr
