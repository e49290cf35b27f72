"""What the experiment scripts share: flags, nets, CSV files, figures, the error line and a resumable runner.

Every script of experiments/ is runnable both ways,

    python experiments/<script>.py --outdir=/tmp/x ...
    python -m experiments.<script> --outdir=/tmp/x ...

(the first works because ``experiments`` is an installed package, see
pyproject.toml), and importable (``from experiments import handicap``) by the
notebooks in colab/ and by tests, whose ``main(argv)`` returns the exit code.

* **Flags.** :func:`make_parser` gives every script the same
  ``--outdir --seed --games --board_size`` and the player flags of
  :mod:`saijax.player_cli` (``--visits``, ``--gumbel_scale``, λ/μ, ...;
  deterministic play by default). A flag that several scripts share
  (``--komi``, ``--opening_moves``, ``--restart``, ``--plot_only``, GNU Go's
  ``--level``, ``--timeout``, ...) is declared once, with its type and help,
  in :data:`SHARED_FLAGS`; a script names those it has, with its own default
  (``make_parser(..., komi=9.5, restart="pairing")``, :func:`add_flags`).
* **Nets.** Comma lists (:func:`parse_list`) and nets given as
  ``[NAME=]SPEC`` (:func:`parse_nets`, :func:`load_nets`).
* **Tables.** One CSV writer and reader (:func:`write_csv`, :func:`read_csv`).
* **Figures.** One backend (Agg, set by :func:`run_main`), one dpi, PNG
  (:func:`save_figure`).
* **Errors.** A failure is one line ``experiments.<script>: error: ...`` on
  stderr and exit code 2 (:func:`run_main`, :func:`error`).
* **Resuming.** :func:`play_cells` plays the cells of an experiment into a
  games table, skipping the cells a previous run finished.
* **SGFs.** A script writes one SGF per game under ``<outdir>/sgf/`` (not
  in git); after a run :func:`run_main` packs them into
  ``<outdir>/sgf.tar.xz`` (:func:`pack_sgfs`), which ships, and
  :func:`sgf_bytes` reads a game's SGF from its file or, where that is
  missing (a fresh checkout), from the archive.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import enum
import functools
import io
import json
import lzma
import math
import os
import pathlib
import tarfile
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from saijax import cli, player_cli, players, results, zoo

__all__ = [
    "DPI",
    "ERRORS",
    "prog",
    "Default",
    "Flag",
    "SHARED_FLAGS",
    "add_flags",
    "make_parser",
    "player_options",
    "parse_list",
    "parse_nets",
    "load_nets",
    "write_csv",
    "read_csv",
    "pyplot",
    "save_figure",
    "error",
    "run_main",
    "run_script",
    "markdown_table",
    "games_path",
    "reset_games",
    "play_cells",
    "kept_generations",
    "read_metrics",
    "learning_curve",
    "add_nets_flags",
    "check_nets_flags",
    "nets_from_flags",
    "log_lines",
    "SGF_ARCHIVE",
    "pack_sgfs",
    "sgf_bytes",
]

DPI = 120  # every PNG of experiments/
# What a script reports as one error line: bad flags or files, a corrupt
# checkpoint (checkpoints.CheckpointError is a ValueError), a failed training
# subprocess, a GTP engine that misbehaves (gtp_client.GtpError is a RuntimeError).
ERRORS = (ValueError, OSError, RuntimeError)

Cell = TypeVar("Cell")


def prog(file: str) -> str:
    """A script's name in messages, ``experiments.<script>``, from its ``__file__``."""
    return "experiments." + os.path.splitext(os.path.basename(file))[0]


# --------------------------------------------------------------------------
# Flags.


class Default(enum.Enum):
    """The defaults of a shared flag (:func:`add_flags`) that are not a value."""

    NONE = enum.auto()  # None: "never", or the script works it out after parsing (e.g. for 7×7 only)
    REQUIRED = enum.auto()  # none: the flag must be given


@dataclasses.dataclass(frozen=True)
class Flag:
    """A flag that several scripts share: what its value is and what it means."""

    type: Callable[[str], Any] | None  # None: a switch, False unless given
    help: str  # a switch's has {} where the script's words go


# The flags several scripts share, each declared here once; a script names
# those it has, with its own default (add_flags, make_parser).
SHARED_FLAGS = {
    # The games.
    "komi": Flag(float, "the games' komi"),
    "black_komi": Flag(float, "komi when the net is Black"),
    "white_komi": Flag(float, "komi when the net is White"),
    "opening_moves": Flag(int, "random opening moves per game pair"),
    "resign_threshold": Flag(float, "resign below this value"),
    # The nets.
    "net": Flag(str, "the net: a checkpoint or zoo:<name>"),
    "strong": Flag(str, "[NAME=]SPEC of the strong net"),
    "weak": Flag(str, "weak nets, strongest first: comma list of [NAME=]SPEC"),
    "opponent": Flag(str, "[NAME=]SPEC of the weak opponent"),
    "opponents": Flag(str, "comma list of [NAME=]SPEC"),
    "lambdas": Flag(str, "comma list: the strong nets' λ values"),
    "zoo_dir": Flag(str, "a private zoo directory where zoo:<name> is looked up"),
    "scorer": Flag(str, "the fixed scorer net (λ = μ = 0)"),
    "score_visits": Flag(int, "the scorer's search visits"),
    "score_visits_list": Flag(str, "comma list: the scorer's search visits, one estimate each"),
    # A training run's generations.
    "workdir": Flag(str, "a run's workdir (its kept checkpoints)"),
    "every": Flag(int, "every k-th kept generation"),
    "neighbours": Flag(int, "each net plays the next k nets"),
    "random_pairings": Flag(int, "the random net plays the first k nets"),
    # GNU Go and GTP engines.
    "level": Flag(int, "GNU Go's level"),
    "timeout": Flag(float, "seconds per GTP command"),
    # What a run does.
    "figures": Flag(str, "which figures to play"),
    "restart": Flag(None, "replay every {} (default: resume games.csv)"),
    "plot_only": Flag(None, "{}"),
}


def add_flags(parser: argparse.ArgumentParser, *, helps: Mapping[str, str] | None = None, **flags) -> None:
    """Adds the shared flags (:data:`SHARED_FLAGS`) that ``flags`` name.

    Args:
      parser: the script's parser.
      helps: a flag's help where the script says more than the shared one.
      **flags: name=default: a value, :attr:`Default.NONE` or
        :attr:`Default.REQUIRED`; for a switch, the words of its help (what
        ``--restart`` replays, what ``--plot_only`` redraws).

    Raises:
      TypeError: a name that is not a shared flag.
    """
    helps = dict(helps or {})
    for name, default in flags.items():
        if name not in SHARED_FLAGS:
            raise TypeError(f"{name!r} is not a shared flag (of {', '.join(SHARED_FLAGS)})")
        flag = SHARED_FLAGS[name]
        text = helps.pop(name, None)
        if flag.type is None:
            parser.add_argument(f"--{name}", action="store_true", help=text or flag.help.format(default))
        elif default is Default.REQUIRED:
            parser.add_argument(f"--{name}", type=flag.type, required=True, help=text or flag.help)
        else:
            default = None if default is Default.NONE else default
            parser.add_argument(f"--{name}", type=flag.type, default=default, help=text or flag.help)
    if helps:
        raise TypeError(f"helps for flags not added: {', '.join(helps)}")


def make_parser(
    file: str,
    doc: str | None,
    *,
    outdir: str | None = None,
    games: int | None = None,
    games_help: str = "games per cell",
    board_size: int | Default | None = 7,
    seed: bool = True,
    visits: int | None = None,
    player: bool = True,
    helps: Mapping[str, str] | None = None,
    **flags,
) -> argparse.ArgumentParser:
    """The parser of a script with the common flags.

    Args:
      file: the script's ``__file__`` (its name in messages, :func:`prog`).
      doc: the script's docstring; its first paragraph describes the script.
      outdir: the default ``--outdir``; None makes it required.
      games: the default ``--games``; None: no such flag.
      games_help: what ``--games`` counts.
      board_size: the default ``--board_size`` (:attr:`Default.NONE`: None,
        the script's help says what it means); None: no such flag.
      seed: whether there is a ``--seed`` (default 0).
      visits: the default ``--visits`` of the player flags (else theirs).
      player: whether the script plays nets: adds the player flags of
        :func:`saijax.player_cli.add_player_flags` (``--visits``,
        ``--gumbel_scale``, ...), read back by :func:`player_options`.
      helps: a flag's help (``board_size`` or one of ``flags``) where the
        script says more than the shared one.
      **flags: the shared flags the script has, with its defaults
        (:func:`add_flags`): ``komi=9.5``, ``restart="pairing"``, ...

    Returns:
      The parser; the script adds its own flags.
    """
    helps = dict(helps or {})
    p = argparse.ArgumentParser(
        prog=prog(file),
        description=(doc or "").split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    where = "where the tables and PNGs go (created)"
    p.add_argument("--outdir", required=outdir is None, default=outdir, help=where)
    if seed:
        p.add_argument("--seed", type=int, default=0, help="the run's seed")
    if games is not None:
        p.add_argument("--games", type=int, default=games, help=games_help)
    if board_size is not None:
        default = None if board_size is Default.NONE else board_size
        p.add_argument("--board_size", type=int, default=default, help=helps.pop("board_size", "the board's size"))
    add_flags(p, helps=helps, **flags)
    if player:
        player_cli.add_player_flags(p, title="players (every net of the experiment)")
        if visits is not None:
            p.set_defaults(visits=visits)
    return p


def player_options(args: argparse.Namespace, **changes) -> player_cli.PlayerOptions:
    """The player flags of ``args`` as :class:`saijax.player_cli.PlayerOptions`, with ``changes``.

    The changes (PlayerOptions fields) replace the flags' values before they
    are checked, so ``player_options(args, lambda_=0.0, mu=0.0)`` is valid
    whatever ``--mu`` says (a script that sets the agents itself).

    Raises:
      ValueError: a bad value (the message names the flag).
    """

    flags = {("control_option" if k == "control_options" else k): v for k, v in changes.items()}
    return player_cli.options_from_args(argparse.Namespace(**{**vars(args), **flags}))


# --------------------------------------------------------------------------
# Lists and nets.


def parse_list(text: str, kind: Callable = float) -> list:
    """A comma list (``"0,1,2"``) as values; "" is the empty list."""
    return [kind(x.strip()) for x in str(text).split(",") if x.strip()]


def parse_nets(text: str) -> list[tuple[str | None, str]]:
    """``"[NAME=]SPEC,..."`` as (name or None, spec) pairs."""
    nets = []
    for item in parse_list(text, str):
        name, sep, spec = item.partition("=")
        nets.append((name.strip(), spec.strip()) if sep else (None, item))
    return nets


def _default_name(spec: str) -> str | None:
    if spec.startswith("zoo:"):
        return spec[4:]
    return spec if spec in ("random", "uniform") else None


def load_nets(
    nets: str | Sequence[tuple[str | None, str]],
    *,
    board_size: int | None,
    options: player_cli.PlayerOptions | None = None,
    seed: int = 0,
    zoo_dir: str | None = None,
) -> list[players.Player]:
    """The players of ``nets`` (a ``[NAME=]SPEC`` comma list or :func:`parse_nets` pairs).

    With ``zoo_dir`` (a private zoo directory, e.g. an ablation's ``nets/``),
    ``zoo:<name>`` is an entry of that directory instead of the shipped zoo.

    A net without a name is named after its zoo entry (``zoo:go7-S1`` →
    ``go7-S1``), ``random`` for a random net, else as
    :func:`saijax.player_cli.load_player` names it (``gen<generation>``).

    Args:
      nets: the nets.
      board_size: their board size (None: a checkpoint's or zoo net's own).
      options: the player flags (:func:`player_options`); default
        :class:`saijax.player_cli.PlayerOptions`.
      seed: a random net's seed.
    """

    pairs = parse_nets(nets) if isinstance(nets, str) else list(nets)
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
    """Saves ``fig`` as a PNG at :data:`DPI` and closes it; returns the path."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=DPI, format="png")
    pyplot().close(fig)
    return path


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


def run_script(
    file: str,
    parse_args: Callable[[Sequence[str] | None], argparse.Namespace],
    run: Callable[[argparse.Namespace], Any],
    argv: Sequence[str] | None = None,
    *,
    exit_on_error: bool = False,
) -> int:
    """A script's ``main``: parses ``argv`` and runs it under :func:`run_main` (its SGFs packed in ``args.outdir``);
    returns the exit code."""
    args = parse_args(argv)
    return run_main(file, lambda: run(args), exit_on_error=exit_on_error, outdir=args.outdir)


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
      path: the games table (.csv or .jsonl, :mod:`saijax.results`).
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
    """The generations with a finished checkpoint in a run's workdir."""
    directory = os.path.join(workdir, "checkpoints")
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{workdir} has no checkpoints directory")
    return sorted(int(d) for d in os.listdir(directory) if d.isdecimal() and os.path.isdir(os.path.join(directory, d)))


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


def add_nets_flags(parser: argparse.ArgumentParser) -> None:
    """``--nets`` (a ``[NAME=]SPEC`` comma list) or ``--workdir`` with ``--every``
    (a run's kept generations): the nets of a script that asks each net in turn."""
    parser.add_argument("--nets", default="", help="comma-separated [NAME=]SPEC: checkpoints or zoo:<name>")
    add_flags(parser, workdir="", every=1,
              helps={"workdir": "or: a run's workdir (its kept checkpoints)",
                     "every": "with --workdir: every k-th kept generation"})  # fmt: skip


def check_nets_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exactly one of ``--nets`` and ``--workdir`` (:func:`add_nets_flags`)."""
    if bool(args.nets) == bool(args.workdir):
        parser.error("give exactly one of --nets and --workdir")


def nets_from_flags(args: argparse.Namespace) -> list[tuple[str, str, int | str]]:
    """(label, player spec, generation or "") of :func:`add_nets_flags`' nets: a
    net of ``--nets`` is labelled by its NAME, its zoo entry or its path's last
    part; a kept generation g of ``--workdir`` is ``gen<g>``."""
    if args.nets:
        out = []
        for name, spec in parse_nets(args.nets):
            label = name or (spec[4:] if spec.startswith("zoo:") else spec.rstrip("/").split("/")[-1])
            out.append((label, spec, ""))
        return out
    directory = os.path.join(args.workdir, "checkpoints")
    return [(f"gen{g}", os.path.join(directory, str(g)), g) for g in kept_generations(args.workdir)[:: args.every]]


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
