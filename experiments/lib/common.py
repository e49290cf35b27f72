"""What the experiments share: typed settings and their command line, nets, CSV files, figures, the error
line and a resumable runner.

A science module of experiments/ runs from typed settings: its ``Settings``
(a frozen dataclass, :class:`Settings` or :class:`MatchSettings` with the
module's own fields) and its ``run(settings)``, which plays or analyses and
writes into ``settings.outdir``. :mod:`experiments.run` builds the settings
from a claim's config and calls ``run``; the notebooks in colab/ and the
tests do the same. A module that people also run alone keeps a command line,
made from the fields (:func:`main`):

    python experiments/<module>.py --outdir=/tmp/x ...
    python -m experiments.<module> --outdir=/tmp/x ...

(the first works because ``experiments`` is an installed package, see
pyproject.toml); its ``main(argv)`` returns the exit code.

* **Settings.** :class:`Settings` has ``outdir``; :class:`MatchSettings`
  adds ``seed``, ``board_size``, ``games`` and the player fields of
  :class:`saijax.cli.player.PlayerOptions` (``visits``, ``gumbel_scale``,
  λ/μ, ...; deterministic play by default). A field's type is checked on
  construction, then the module's :meth:`Settings.check`; a bad value is a
  :class:`SettingsError` naming the field and the value. The help of a
  field that several modules have (``komi``, ``opening_moves``,
  ``restart``, ``plot_only``, GNU Go's ``level``, ...) is said once, in
  :data:`HELP`.
* **Command lines.** :func:`parser` makes a flag of every field (a tuple a
  comma list, a bool a switch, the player fields
  :func:`saijax.cli.player.add_player_flags`' flags); :func:`main` parses
  them and runs the module.
* **Nets.** Nets given as ``[NAME=]SPEC`` (:func:`parse_nets`,
  :func:`load_nets`); comma lists (:func:`parse_list`).
* **Tables.** One CSV writer and reader (:func:`write_csv`, :func:`read_csv`).
* **Figures.** One backend (Agg, set by :func:`perform`), one dpi, PNG
  (:func:`save_figure`).
* **Errors.** On the command line a failure is one line
  ``experiments.<module>: error: ...`` on stderr and exit code 2
  (:func:`run_main`, :func:`error`).
* **Resuming.** :func:`play_cells` plays the cells of an experiment into a
  games table, skipping the cells a previous run finished.
* **SGFs.** A module writes one SGF per game under ``<outdir>/sgf/`` (not
  in git); after a run :func:`perform` packs them into
  ``<outdir>/sgf.tar.xz`` (:func:`pack_sgfs`), which ships, and
  :func:`sgf_bytes` reads a game's SGF from its file or, where that is
  missing (a fresh checkout), from the archive.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import io
import json
import lzma
import math
import os
import pathlib
import re
import sys
import tarfile
import time
import types
import typing
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from saijax import cli, zoo
from saijax.analysis import results
from saijax.cli import player as player_cli
from saijax.core import checkpoints
from saijax.play import players

__all__ = [
    "DPI",
    "PNG_COLOURS",
    "palette_png",
    "ERRORS",
    "prog",
    "HELP",
    "setting",
    "SettingsError",
    "Settings",
    "MatchSettings",
    "PLAYER_FIELDS",
    "parser",
    "parse",
    "perform",
    "main",
    "parse_list",
    "parse_nets",
    "load_nets",
    "write_csv",
    "read_csv",
    "pyplot",
    "save_figure",
    "error",
    "run_main",
    "markdown_table",
    "games_path",
    "reset_games",
    "play_cells",
    "kept_generations",
    "run_nets",
    "read_metrics",
    "learning_curve",
    "check_nets",
    "net_list",
    "log_lines",
    "SGF_ARCHIVE",
    "pack_sgfs",
    "sgf_bytes",
]

DPI = 120  # every PNG of experiments/
# Every PNG of experiments/ is a palette PNG of this many colours (palette_png).
PNG_COLOURS = 256
# What a script reports as one error line: bad flags or files, a corrupt
# checkpoint (checkpoints.CheckpointError is a ValueError), a failed training
# subprocess, a GTP engine that misbehaves (gtp_client.GtpError is a RuntimeError).
ERRORS = (ValueError, OSError, RuntimeError)

Cell = TypeVar("Cell")


def prog(file: str) -> str:
    """A script's name in messages, ``experiments.<claim>.<script>``, from its ``__file__`` (a file outside
    experiments/: ``experiments.<script>``)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rel = os.path.relpath(os.path.splitext(os.path.abspath(file))[0], root)
    parts = rel.split(os.sep) if not rel.startswith("..") else [os.path.splitext(os.path.basename(file))[0]]
    return ".".join(["experiments", *parts])


# --------------------------------------------------------------------------
# Settings.

# The help of the settings several experiments have, each said here once; a
# module's field says more with its own help (setting(..., help=...)).
HELP = {
    "outdir": "where the tables and PNGs go (created)",
    "seed": "the run's seed",
    "games": "games per cell",
    "board_size": "the board's size",
    # The games.
    "komi": "the games' komi",
    "black_komi": "komi when the net is Black",
    "white_komi": "komi when the net is White",
    "opening_moves": "random opening moves per game pair",
    "resign_threshold": "resign below this value (default: never, played out)",
    # The nets.
    "nets": "[NAME=]SPEC of each net: checkpoints or zoo:<name>",
    "strong": "strong nets: [NAME=]SPEC each",
    "opponent": "[NAME=]SPEC of the weak opponent",
    "opponents": "[NAME=]SPEC of each opponent",
    "lambdas": "the strong nets' λ values",
    "zoo_dir": "a private zoo directory where zoo:<name> is looked up",
    "scorer": "the fixed scorer net (λ = μ = 0)",
    "score_visits": "the score estimate's search visits",
    "score_visits_list": "the scorer's search visits, one estimate each",
    # A training run's generations.
    "neighbours": "each net plays the next k nets",
    "random_pairings": "the random net plays the first k nets",
    # GNU Go and GTP engines.
    "level": "GNU Go's level",
    "timeout": "seconds per GTP command",
    # What a run does.
    "figures": "which figures to play",
    "max_batch": "most games per lockstep match",
    "verbose": "a line per game",
}


def setting(default: Any = dataclasses.MISSING, help: str | None = None) -> Any:  # noqa: A002
    """A field of a :class:`Settings` with its default (none: required) and the help its flag shows."""
    return dataclasses.field(default=default, metadata={"help": help} if help else {})


class SettingsError(ValueError):
    """A bad setting: the message names the settings class, the field and its value (the command line, the flag)."""

    def __init__(self, owner: str, field: str, value: Any, why: str):
        self.owner, self.field, self.value, self.why = owner, field, value, why
        super().__init__(f"{owner}.{field}={value!r}: {why}")

    def flag(self) -> str:
        """The message as the command line says it: ``--field=value: why`` (``--field: why`` for a flag not given)."""
        if self.value is None:
            return f"--{self.field}: {self.why}"
        value = ",".join(map(str, self.value)) if isinstance(self.value, tuple) else self.value
        return f"--{self.field}={value}: {self.why}"


def _owner(cls: type) -> str:
    """A settings class's name in messages, ``<module>.<class>`` (the script's name when run as one)."""
    module = sys.modules.get(cls.__module__)
    name = cls.__module__.split(".")[-1]
    if name == "__main__" and getattr(module, "__file__", None):
        name = os.path.splitext(os.path.basename(module.__file__))[0]
    return f"{name}.{cls.__qualname__}"


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("None" if a is type(None) else _describe(a) for a in args)
    if origin is typing.Literal:
        return "one of " + ", ".join(map(repr, args))
    if origin is tuple:
        return f"a tuple (or list) of {_describe(args[0]).removeprefix('a ').removeprefix('an ')}s"
    names = {int: "an int", float: "a number", str: "a string", bool: "True or False"}
    return names.get(hint, f"a {getattr(hint, '__name__', hint)}")


def _typed(value: Any, hint: Any) -> Any:
    """``value`` as a field of type ``hint`` holds it (an int where a float goes, a list as a tuple, a mapping
    as the dataclass it describes); raises TypeError where it is not of that type."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for a in args:
            if a is not type(None):
                try:
                    return _typed(value, a)
                except TypeError:
                    pass
    elif origin is typing.Literal:
        if value in args:
            return value
    elif origin is tuple:
        if isinstance(value, (list, tuple)):
            try:
                return tuple(_typed(v, args[0]) for v in value)
            except TypeError:
                pass
    elif hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif hint in (str, bool):
        if isinstance(value, hint):
            return value
    elif dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        value = value.to_dict() if hasattr(value, "to_dict") else value  # a config's ConfigDict
        if isinstance(value, Mapping):
            return hint(**value)
    else:
        return value
    raise TypeError(f"needs {_describe(hint)}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings:
    """What an experiment runs from: its settings, typed, each default stated once, checked once.

    A science module's ``Settings`` subclasses this one (or
    :class:`MatchSettings`, for one that plays nets) with its own fields, and
    its ``run(settings)`` plays or analyses from them. A field is an int,
    float, str, bool, ``tuple[X, ...]`` (a list becomes a tuple), ``X | None``
    or a ``Literal`` of choices; on construction every value is checked
    against its type, then :meth:`check` checks the values themselves. A
    bad value is a :class:`SettingsError` naming the field and the value.

    A module that people run alone makes its command line from the fields
    (:func:`main`): ``--<field>=<value>``, a tuple as a comma list, a bool
    a switch (``--no-<field>`` where it defaults to True).
    """

    outdir: str = setting()

    def __post_init__(self):
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            try:
                object.__setattr__(self, f.name, _typed(getattr(self, f.name), hints[f.name]))
            except (TypeError, ValueError) as e:  # ValueError: a nested dataclass's own check
                raise self.error(f.name, str(e)) from None
        self.check()

    def check(self) -> None:
        """Checks the values beyond their types (raise :meth:`error`); a subclass extends it."""

    def error(self, field: str, why: str) -> SettingsError:
        """The error of a bad ``field``: its name, its value and why."""
        return SettingsError(_owner(type(self)), field, getattr(self, field), why)

    def replace(self, **changes) -> Settings:
        """These settings with ``changes``, checked again."""
        return dataclasses.replace(self, **changes)

    def redraws(self) -> bool:
        """Whether the run only redraws from tables in ``outdir`` (``plot_only``, ``summarize_only``)."""
        return bool(getattr(self, "plot_only", False) or getattr(self, "summarize_only", False))


_PLAYER = player_cli.PlayerOptions()
PLAYER_FIELDS = tuple(f.name for f in dataclasses.fields(player_cli.PlayerOptions))


@dataclasses.dataclass(frozen=True, kw_only=True)
class MatchSettings(Settings):
    """The settings of an experiment that plays nets: its seed, board, games, and how every net plays.

    The player fields are :class:`saijax.cli.player.PlayerOptions`' (the
    visits, the λ/μ agent, Gumbel noise, position control, style, a random
    net's shape), with its defaults; on the command line they are its
    player flags (:func:`saijax.cli.player.add_player_flags`: ``--visits``,
    ``--gumbel_scale``, ``--control_option`` ...).
    """

    seed: int = 0
    board_size: int | None = 7
    games: int = 100
    visits: int = _PLAYER.visits
    algorithm: str = _PLAYER.algorithm
    lambda_: float = _PLAYER.lambda_
    mu: float = _PLAYER.mu
    threshold: float = _PLAYER.threshold
    gumbel_scale: float = _PLAYER.gumbel_scale
    control: str = _PLAYER.control
    control_options: tuple[str, ...] = _PLAYER.control_options
    style: str = _PLAYER.style
    blocks: int = _PLAYER.blocks
    filters: int = _PLAYER.filters
    value_head: str = _PLAYER.value_head

    def check(self) -> None:
        super().check()
        try:
            self.player_options()
        except ValueError as e:  # PlayerOptions names its field: PlayerOptions.<field>=<value>: <why>
            found = re.match(r"PlayerOptions\.(\w+)=.*?: (.*)$", str(e), re.S)
            if found and found[1] in PLAYER_FIELDS:
                raise self.error(found[1], found[2]) from None
            raise self.error("control", str(e)) from None
        if self.games < 0:
            raise self.error("games", "needs an int >= 0")

    def player_options(self, **changes) -> player_cli.PlayerOptions:
        """How every net plays: the player fields as :class:`saijax.cli.player.PlayerOptions`, with ``changes``
        (e.g. ``lambda_=0.0, mu=0.0`` for nets whose agents the experiment sets itself)."""
        return player_cli.PlayerOptions(**{**{k: getattr(self, k) for k in PLAYER_FIELDS}, **changes})


def _player_options_field(hint: Any) -> bool:
    return player_cli.PlayerOptions in (hint, *typing.get_args(hint))


def parser(cls: type[Settings], file: str, doc: str | None) -> argparse.ArgumentParser:
    """The command line of a settings class: a flag per field (its help: the field's, else :data:`HELP`).

    A tuple is a comma list; a bool a switch (``--<field>`` / ``--no-<field>`` where it defaults to True);
    a field with no default a required flag; :class:`MatchSettings`' player fields the player flags of
    :func:`saijax.cli.player.add_player_flags`, and a field holding ``PlayerOptions`` (position control's
    opponent) those flags with its ``prefix`` (metadata).
    """
    p = argparse.ArgumentParser(prog=prog(file), description=(doc or "").split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)  # fmt: skip
    hints = typing.get_type_hints(cls)
    players = issubclass(cls, MatchSettings)
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if players and f.name in PLAYER_FIELDS:
            continue
        if _player_options_field(hint):
            player_cli.add_player_flags(p, prefix=f.metadata["prefix"])
            continue
        kind, optional = hint, type(None) in typing.get_args(hint)
        if optional:
            (kind,) = [a for a in typing.get_args(hint) if a is not type(None)]
        text = f.metadata.get("help") or HELP.get(f.name)
        required = f.default is dataclasses.MISSING
        default = None if required else f.default
        if kind is bool:
            kw = dict(action=argparse.BooleanOptionalAction if default else "store_true", default=bool(default))
        elif typing.get_origin(kind) is tuple:
            shown = None if default is None else ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in default)
            kw = dict(default=shown, required=required, metavar="A,B,...")
        elif typing.get_origin(kind) is typing.Literal:
            kw = dict(choices=typing.get_args(kind), default=default, required=required)
        else:
            kw = dict(type=kind, default=default, required=required)
        p.add_argument(f"--{f.name}", help=text, **kw)
    if players:
        player_cli.add_player_flags(p, title="players (every net of the experiment)")
        fields = {f.name: f.default for f in dataclasses.fields(cls)}
        p.set_defaults(**{k: fields[k] for k in PLAYER_FIELDS if k != "control_options"})
    return p


def _from_args(cls: type[Settings], args: argparse.Namespace) -> Settings:
    """The settings of parsed flags (:func:`parser`); raises SettingsError or ValueError."""
    hints = typing.get_type_hints(cls)
    values = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if f.name == "control_options" and issubclass(cls, MatchSettings):
            values[f.name] = tuple(args.control_option or ())
        elif _player_options_field(hint):
            prefix = f.metadata["prefix"]
            if any(getattr(args, prefix + k, None) is not None for k in (*PLAYER_FIELDS, "control_option")):
                fallback = player_cli.options_from_args(args)
                values[f.name] = player_cli.options_from_args(args, prefix, fallback=fallback)
        else:
            value = getattr(args, f.name)
            kind = [a for a in (hint, *typing.get_args(hint)) if typing.get_origin(a) is tuple]
            if kind and isinstance(value, str):
                (element,) = typing.get_args(kind[0])[:1]
                try:
                    value = tuple(parse_list(value, element))
                except ValueError:
                    why = "needs a comma list of " + _describe(kind[0]).split(" of ", 1)[1]
                    raise SettingsError(_owner(cls), f.name, value, why) from None
            values[f.name] = value
    return cls(**values)


def parse(module: str | types.ModuleType, argv: Sequence[str] | None = None) -> Settings:
    """A module's ``Settings`` from its command line ``argv`` (:func:`parser`); a bad flag or value is a usage
    error (SystemExit 2) naming the flag."""
    module = sys.modules[module] if isinstance(module, str) else module
    p = parser(module.Settings, module.__file__, module.__doc__)
    args = p.parse_args(argv)
    try:
        return _from_args(module.Settings, args)
    except SettingsError as e:
        p.error(e.flag())
    except ValueError as e:  # the opponent's player flags (position control)
        p.error(str(e))


def perform(run: Callable[[Settings], Any], settings: Settings) -> Any:
    """Runs an experiment, ``run(settings)``, with the Agg backend; then, unless it only redrew, packs the SGFs
    it wrote under ``<outdir>/sgf/`` into ``<outdir>/sgf.tar.xz`` (:func:`pack_sgfs`). Returns what ``run``
    returns; its errors propagate."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    out = run(settings)
    if not settings.redraws():
        pack_sgfs(settings.outdir)
    return out


def main(module: str | types.ModuleType, argv: Sequence[str] | None = None, *, exit_on_error: bool = False) -> int:
    """A module's command line: its ``Settings`` from ``argv`` (:func:`parse`), then its ``run`` under
    :func:`perform`; returns 0, or 2 after one error line (:func:`error`)."""
    module = sys.modules[module] if isinstance(module, str) else module
    settings = parse(module, argv)
    return run_main(module.__file__, lambda: perform(module.run, settings), exit_on_error=exit_on_error)


# --------------------------------------------------------------------------
# Lists and nets.


def parse_list(text: str, kind: Callable = float) -> list:
    """A comma list (``"0,1,2"``) as values; "" is the empty list."""
    return [kind(x.strip()) for x in str(text).split(",") if x.strip()]


def parse_nets(nets: str | Sequence[str]) -> list[tuple[str | None, str]]:
    """``"[NAME=]SPEC,..."`` (or a sequence of ``[NAME=]SPEC``) as (name or None, spec) pairs."""
    out = []
    for item in parse_list(nets, str) if isinstance(nets, str) else [str(n).strip() for n in nets]:
        name, sep, spec = item.partition("=")
        out.append((name.strip(), spec.strip()) if sep else (None, item))
    return out


def _default_name(spec: str) -> str | None:
    if spec.startswith("zoo:"):
        return spec[4:]
    return spec if spec in ("random", "uniform") else None


def load_nets(
    nets: str | Sequence[str] | Sequence[tuple[str | None, str]],
    *,
    board_size: int | None,
    options: player_cli.PlayerOptions | None = None,
    seed: int = 0,
    zoo_dir: str | None = None,
) -> list[players.Player]:
    """The players of ``nets`` (``[NAME=]SPEC`` each, as a comma list or a sequence, or :func:`parse_nets` pairs).

    With ``zoo_dir`` (a private zoo directory, e.g. an ablation's ``nets/``),
    ``zoo:<name>`` is an entry of that directory instead of the shipped zoo.

    A net without a name is named after its zoo entry (``zoo:go7-S1`` →
    ``go7-S1``), ``random`` for a random net, else as
    :func:`saijax.cli.player.load_player` names it (``gen<generation>``).

    Args:
      nets: the nets.
      board_size: their board size (None: a checkpoint's or zoo net's own).
      options: how they play (:meth:`MatchSettings.player_options`); default
        :class:`saijax.cli.player.PlayerOptions`.
      seed: a random net's seed.
    """

    if isinstance(nets, str):
        pairs = parse_nets(nets)
    else:
        pairs = [n if isinstance(n, tuple) else parse_nets([n])[0] for n in nets]
    options = options if options is not None else player_cli.PlayerOptions()

    def load(name, spec):
        name = name or _default_name(spec)
        if zoo_dir and spec.startswith("zoo:"):
            return player_cli.with_options(zoo.load(spec[4:], directory=zoo_dir), options, name=name)
        return player_cli.load_player(spec, board_size=board_size, options=options, name=name, seed=seed)

    return [load(name, spec) for name, spec in pairs]


# --------------------------------------------------------------------------
# Tables.


def _cell(value: Any, digits: int | None) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        if not math.isfinite(value):
            return ""
        return round(value, digits) if digits is not None else value
    return value


def write_csv(
    path: str | os.PathLike, rows: Iterable[Mapping | Sequence], columns: Sequence[str] | None = None, *, digits=None
):
    """Writes ``rows`` as a CSV table with a header; returns the path.

    The file is written whole and then renamed over ``path``, so a killed
    run never leaves half a table.

    Args:
      path: the file (its directory is created).
      rows: dicts (keys outside ``columns`` are left out), or sequences of
        the ``columns``' values.
      columns: the header; default every key of the rows in first-seen
        order, except those starting with ``_`` (a row's private values).
      digits: round floats to this many decimals (default: as they are).
        NaN, infinities and None are written as empty cells.
    """
    rows = [r if isinstance(r, Mapping) else dict(zip(columns, r)) for r in rows]
    if columns is None:
        columns = [k for k in dict.fromkeys(k for r in rows for k in r) if not str(k).startswith("_")]
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: _cell(r.get(k, ""), digits) for k in columns} for r in rows)
    os.replace(tmp, path)
    return path


def read_csv(path: str | os.PathLike, *, text: Collection[str] | None = None) -> list[dict]:
    """A CSV table as dicts of strings; with ``text``, every other non-empty cell as a float.

    Raises:
      FileNotFoundError: no such file.
      ValueError: a cell that should be a number is not.
    """
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if text is None:
        return rows
    out = []
    for i, r in enumerate(rows, start=2):
        try:
            out.append({k: (v if k in text or v == "" else float(v)) for k, v in r.items()})
        except ValueError as e:
            raise ValueError(f"{path}:{i}: {e}") from None
    return out


# --------------------------------------------------------------------------
# Figures.


def pyplot():
    """matplotlib.pyplot, imported on first use (the backend is the caller's; scripts run with Agg)."""
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def save_figure(fig, path: str | os.PathLike) -> str:
    """Saves ``fig`` as a palette PNG (:func:`palette_png`) at :data:`DPI` and closes it; returns the path."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=DPI, format="png")
    pyplot().close(fig)
    with open(path, "wb") as f:
        f.write(palette_png(buffer.getvalue()))
    return path


def palette_png(png: bytes) -> bytes:
    """``png`` re-encoded with a palette of :data:`PNG_COLOURS` colours: the same picture in about a third of the bytes.

    matplotlib writes 32-bit RGBA; a plot's pixels take a few dozen colours
    and their anti-aliased blends, which 256 palette entries chosen by median
    cut reproduce to the eye (the repository ships about 140 figures under its
    50 MB limit). An opaque figure drops its alpha channel first; one with
    transparent pixels keeps it (octree quantization, the one Pillow offers
    for RGBA).
    """
    from PIL import Image  # noqa: PLC0415  (matplotlib's own dependency; imported only where figures are written)

    image = Image.open(io.BytesIO(png))
    image.load()
    if image.mode == "P":
        return png
    if image.mode != "RGBA" or image.getextrema()[3][0] == 255:
        palette = image.convert("RGB").quantize(PNG_COLOURS, method=Image.Quantize.MEDIANCUT)
    else:
        palette = image.quantize(PNG_COLOURS, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    palette.save(out, format="PNG", optimize=True)
    return out.getvalue()


# --------------------------------------------------------------------------
# Errors and the entry point.


def error(file: str, message: Any, *, exit_on_error: bool = False) -> int:
    """Writes ``experiments.<script>: error: <message>`` as one line on stderr; returns 2.

    With ``exit_on_error`` (the command line) the process ends there, the
    line last on stderr (:func:`saijax.cli.exit_with_error`).
    """
    return cli.report_error(f"{prog(file)}: error: {message}", 2, exit_now=exit_on_error)


def run_main(
    file: str, body: Callable[[], Any], *, exit_on_error: bool = False, errors=ERRORS, outdir: str | None = None
) -> int:
    """Runs a script's ``body`` with the Agg backend; returns 0, or 2 after :func:`error` on ``errors``.

    With ``outdir``, a body that succeeded has its SGFs (``<outdir>/sgf/``)
    packed into ``<outdir>/sgf.tar.xz`` (:func:`pack_sgfs`).
    """
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    try:
        body()
        if outdir is not None:
            pack_sgfs(outdir)
    except errors as e:
        return error(file, e, exit_on_error=exit_on_error)
    return 0


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table: the header, its rule, and a line per row (cells as ``str``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# The resumable runner: cells -> games table.


def games_path(outdir: str | os.PathLike, name: str = "games.csv") -> str:
    """``<outdir>/<name>``, creating ``outdir``."""
    os.makedirs(outdir, exist_ok=True)
    return os.path.join(os.fspath(outdir), name)


def reset_games(path: str) -> None:
    """Removes a games table, so that a new run starts it afresh."""
    if os.path.exists(path):
        os.remove(path)


def _keep_complete(path: str, games: int, key_of: Callable[[results.GameResult], Hashable]) -> set:
    """Rewrites ``path`` keeping only the cells with at least ``games`` games; returns their keys."""

    if not os.path.exists(path):
        return set()
    rows = results.read_results(path)
    keys = [key_of(g) for g in rows]
    counts: dict[Hashable, int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    done = {k for k, n in counts.items() if n >= games}
    rewrite_games(path, [g for g, k in zip(rows, keys) if k in done])
    return done


def rewrite_games(path: str, kept: Sequence[results.GameResult]) -> None:
    """Replaces the games table ``path`` by the rows ``kept`` (written aside, then renamed; none: removed)."""
    tmp = path + ".keep" + os.path.splitext(path)[1]
    reset_games(tmp)
    results.append_results(tmp, kept)
    if kept:
        os.replace(tmp, path)
    else:
        reset_games(tmp)
        reset_games(path)


def play_cells(
    cells: Sequence[Cell],
    play: Callable[[Cell, str], Sequence[results.GameResult]],
    *,
    path: str,
    games: int,
    key: Callable[[Cell], Hashable],
    game_key: Callable[[results.GameResult], Hashable],
    resume: bool = True,
    report: Callable[[Cell, Sequence[results.GameResult]], str] | None = None,
    out: Callable[[str], None] = lambda line: print(line, flush=True),
) -> list[results.GameResult]:
    """Plays the cells of an experiment into the games table ``path``, skipping finished ones.

    With ``resume``, the cells that already have ``games`` games in ``path``
    are kept and not replayed; the rows of a cell cut short (a killed run)
    are dropped and the cell is played again whole. Without it the table
    is started afresh.

    Args:
      cells: the cells, in playing order.
      play: ``play(cell, path)`` plays one cell, appending its games to
        ``path`` (e.g. ``MatchSettings(results_path=path)``), and returns them.
      path: the games table (.csv or .jsonl, :mod:`saijax.analysis.results`).
      games: the games of a complete cell.
      key: a cell's key.
      game_key: the key of the cell a game of the table belongs to.
      resume: keep the complete cells of an existing table.
      report: one line about a played cell (printed after ``[k/n]`` with its time).
      out: where progress lines go.

    Returns:
      Every game of the table afterwards.
    """

    if resume:
        done = _keep_complete(path, games, game_key)
    else:
        reset_games(path)
        done = set()
    todo = [c for c in cells if key(c) not in done]
    out(f"{len(cells)} cells of {games} games ({len(cells) - len(todo)} already played)")
    for k, cell in enumerate(todo):
        t0 = time.time()
        new = play(cell, path)
        if report is not None:
            out(f"[{k + 1}/{len(todo)}] {report(cell, new)}, {time.time() - t0:.0f}s")
    return results.read_results(path) if os.path.exists(path) else []


# --------------------------------------------------------------------------
# Training runs.


def kept_generations(workdir: str) -> list[int]:
    """A run's kept generations: :func:`saijax.core.checkpoints.kept_generations`."""
    return checkpoints.kept_generations(workdir)


def run_nets(workdir: str, archive: str = "") -> dict[int, str]:
    """generation -> net spec of a run's nets, for :func:`load_nets` with ``zoo_dir=archive``.

    A generation in ``archive`` (a zoo directory of the run's generations,
    ``python -m saijax.zoo archive``) is ``zoo:gen<g>``: its stored bytes never
    change from one session to the next, so games already played against it
    stay valid; any other kept checkpoint of ``workdir`` is its step directory.

    Raises:
      FileNotFoundError: neither holds a net.
    """
    out: dict[int, str] = {}
    if workdir and os.path.isdir(os.path.join(workdir, "checkpoints")):
        out = {g: os.path.join(workdir, "checkpoints", str(g)) for g in kept_generations(workdir)}
    if archive:
        if not os.path.isdir(archive):
            raise FileNotFoundError(f"archive {archive}: no such directory")
        out |= {g: f"{zoo.PREFIX}{e.name}" for g, e in zoo.archived_generations(archive).items()}
    if not out:
        raise FileNotFoundError(f"{workdir or archive}: no kept checkpoints and no archived generations")
    return dict(sorted(out.items()))


def read_metrics(workdir: str) -> dict[int, dict]:
    """generation -> metrics line of ``metrics.jsonl`` (the last line of each generation wins)."""
    path = os.path.join(workdir, "metrics.jsonl")
    out: dict[int, dict] = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    out[int(row["generation"])] = row
                except (ValueError, KeyError, TypeError) as e:
                    raise ValueError(
                        f"{path} line {number} is not a metrics line ({type(e).__name__}: {e}); a run killed "
                        "while writing leaves a torn line: resuming the run repairs it"
                    ) from None
    return out


def learning_curve(metrics: Mapping[int, Mapping], keys: Sequence[str], upto: int | None = None) -> list[dict]:
    """One row per generation of a run's metrics (up to ``upto``): its
    cumulative self-play evaluations in millions (``evaluations_m``, the
    ``selfplay_evaluations`` metric) and wall minutes, and the ``keys``
    (missing ones as "")."""
    rows, evaluations, minutes = [], 0.0, 0.0
    for g in sorted(metrics):
        if upto is not None and g > upto:
            break
        m = metrics[g]
        evaluations += float(m.get("selfplay_evaluations", 0.0))
        minutes += float(m.get("seconds", 0.0)) / 60.0
        row = {"generation": g, "evaluations_m": evaluations / 1e6, "minutes": minutes}
        rows.append(row | {k: m.get(k, "") for k in keys})
    return rows


def check_nets(settings: Settings) -> None:
    """Exactly one of ``nets`` and ``workdir``: the nets of an experiment that asks each net in turn
    (:func:`net_list`)."""
    if bool(settings.nets) == bool(settings.workdir):
        raise settings.error("nets", f"give exactly one of nets and workdir (workdir={settings.workdir!r})")


def net_list(settings: Settings) -> list[tuple[str, str, int | str]]:
    """(label, player spec, generation or "") of the nets of ``settings.nets`` (``[NAME=]SPEC`` each) or of
    ``settings.workdir`` (every ``settings.every``-th kept generation): a net of ``nets`` is labelled by
    its NAME, its zoo entry or its path's last part; a kept generation g is ``gen<g>``."""
    if settings.nets:
        out = []
        for name, spec in parse_nets(settings.nets):
            label = name or (spec[4:] if spec.startswith("zoo:") else spec.rstrip("/").split("/")[-1])
            out.append((label, spec, ""))
        return out
    directory = os.path.join(settings.workdir, "checkpoints")
    generations = kept_generations(settings.workdir)[:: settings.every]
    return [(f"gen{g}", os.path.join(directory, str(g)), g) for g in generations]


def log_lines(verbose: bool) -> Callable[[str], None] | None:
    """A match's per-game log: print with ``--verbose``, else nothing."""
    return (lambda line: print(line, flush=True)) if verbose else None


# --------------------------------------------------------------------------
# SGFs: written under <outdir>/sgf/, shipped as <outdir>/sgf.tar.xz.

SGF_ARCHIVE = "sgf.tar.xz"


def pack_sgfs(outdir: str | os.PathLike) -> str | None:
    """Packs the SGFs under ``<outdir>/sgf/`` into ``<outdir>/sgf.tar.xz``; returns its path, None without SGFs.

    The archive holds ``sgf/``'s files by their path below it, and keeps
    the members of an earlier archive that are not on disk (a run resumed on
    a fresh checkout). It is the same bytes for the same SGFs (sorted
    members, no dates or owners), written aside and then renamed.
    """
    folder = os.path.join(os.fspath(outdir), "sgf")
    path = os.path.join(os.fspath(outdir), SGF_ARCHIVE)
    files = {
        pathlib.Path(os.path.relpath(os.path.join(d, f), folder)).as_posix(): os.path.join(d, f)
        for d, _, names in os.walk(folder)
        for f in names
        if f.endswith(".sgf")
    }
    if not files:
        return None
    members = dict(_archive_members(path)) if os.path.exists(path) else {}
    for name, file in files.items():
        with open(file, "rb") as f:
            members[name] = f.read()
    tmp = path + ".tmp"
    with tarfile.open(tmp, "w:xz", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(members[name]), 0o644
            tar.addfile(info, io.BytesIO(members[name]))
    os.replace(tmp, path)
    return path


def sgf_bytes(path: str | os.PathLike) -> bytes | None:
    """The SGF at ``path``: the file, or where it is missing, its member of the run's archive; None if neither.

    A path ``<outdir>/sgf/<rest>`` (a games table's ``sgf`` column) is
    member ``<rest>`` of ``<outdir>/sgf.tar.xz`` (:func:`pack_sgfs`).
    """
    path = os.fspath(path)
    if os.path.exists(path):
        with open(path, "rb") as f:
            return f.read()
    parts = pathlib.PurePath(path).parts
    below = [i for i, part in enumerate(parts[:-1]) if part == "sgf"]
    if not below:
        return None
    archive = os.path.join(*parts[: below[-1]], SGF_ARCHIVE)
    if not os.path.exists(archive):
        return None
    return _archive_members(archive).get("/".join(parts[below[-1] + 1 :]))


def _archive_members(path: str) -> dict[str, bytes]:
    """An SGF archive's members, name -> bytes (read once while the file is unchanged)."""
    stat = os.stat(path)
    return _read_archive(os.path.abspath(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _read_archive(path: str, mtime_ns: int, size: int) -> dict[str, bytes]:
    del mtime_ns, size  # the cache's key: a rewritten archive is read again
    try:
        with tarfile.open(path, "r:xz") as tar:
            return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    except (tarfile.TarError, lzma.LZMAError, EOFError, OSError) as e:
        raise ValueError(f"{path}: not a readable SGF archive: {e}") from None
