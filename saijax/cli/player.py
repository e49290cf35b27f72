"""The front door to players: one grammar of player specs and one set of player flags (docs/design.md §8).

Every command line that builds a :class:`saijax.play.players.Player` (the arena,
the GTP engine, the experiments) goes through here, so a player means the
same thing, with the same defaults, wherever it is named.

A **player spec** is one of:

* ``random``: a randomly initialised net (``--blocks`` × ``--filters``), the
  "random net" that anchors Elo at 0;
* ``uniform``: uniformly random legal moves, no network;
* ``zoo:NAME``: a net of the model zoo (:mod:`saijax.zoo`), e.g. ``zoo:go7-S1``;
* a checkpoint: a run's workdir, its ``checkpoints`` directory, or one
  generation's step directory (``<workdir>/checkpoints/12``);
* for an opponent that is a GTP engine (:func:`is_engine`,
  :func:`engine_argv`): ``gnugo:LEVEL`` (GNU Go at that level, under
  Tromp–Taylor-compatible settings, never resigning by default) or
  ``gtp:<command line>``.

The **player flags** (:func:`add_player_flags`, read back by
:func:`options_from_args` into a :class:`PlayerOptions`) set how a net
plays: visits, algorithm, the λ/μ agent, Gumbel noise, position control,
online style, and the shape of a random net. Their defaults are decided
once, here; each flag's help says why. With a prefix (``--opponent_visits``)
a flag left out means "the same as the unprefixed player", except for
position control and style, which each side asks for on its own.

    parser = argparse.ArgumentParser()
    parser.add_argument("--player")
    player_cli.add_player_flags(parser)
    args = parser.parse_args()
    player = player_cli.load_player(args.player, board_size=7, options=player_cli.options_from_args(args))
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import types

from saijax import zoo
from saijax.play import gtp_match, players
from saijax.play.options import DEFAULTS as _DEFAULTS
from saijax.play.options import PlayerOptions, _flag, _validate, with_options

__all__ = [
    "PlayerOptions",
    "add_player_flags",
    "engine_argv",
    "is_engine",
    "load_player",
    "with_options",
    "options_from_args",
]

_ENGINE_PREFIXES = ("gnugo:", "gtp:")


def add_player_flags(
    parser: argparse.ArgumentParser, *, prefix: str = "", title: str | None = None
) -> argparse._ArgumentGroup:
    """Adds the player flags ``--{prefix}visits`` ... ``--{prefix}value_head`` to ``parser``.

    One flag for each :class:`PlayerOptions` field, as the field declares it
    (help, type, choices). Without a prefix each flag defaults to :class:`PlayerOptions`'s value;
    with one (e.g. ``"opponent_"``) to None, meaning the unprefixed player's
    value (position control and style: off). Read them back with
    :func:`options_from_args`.

    Returns:
      The argument group holding the flags (titled ``title``).
    """
    group = parser.add_argument_group(title or (f"{prefix.rstrip('_')} player" if prefix else "player"))
    defaults = {field.name: field.default for field in dataclasses.fields(PlayerOptions)}
    for field in dataclasses.fields(PlayerOptions):
        kwargs = field.metadata["argparse"]
        if prefix:
            text = "default: " + ("off" if field.metadata["own"] else f"the same as --{_flag(field)}")
        else:
            text = field.metadata["help"].format(**defaults)
        # An appending flag starts from None (argparse appends to its default).
        default = None if prefix or kwargs.get("action") == "append" else field.default
        group.add_argument(f"--{prefix}{_flag(field)}", default=default, help=text, **kwargs)
    return group


def options_from_args(
    args: argparse.Namespace, prefix: str = "", fallback: PlayerOptions | None = None
) -> PlayerOptions:
    """The :class:`PlayerOptions` of parsed player flags.

    Args:
      args: parsed arguments holding the flags of :func:`add_player_flags`
        with this prefix.
      prefix: the flags' prefix.
      fallback: the values of flags left out (None: with a prefix, the
        unprefixed player's options read from ``args`` if it has them, else
        the defaults). Position control and style never fall back: off.

    Raises:
      ValueError: a bad value; the message names the flag and the value.
    """
    if fallback is None:
        fallback = options_from_args(args) if prefix and hasattr(args, "visits") else _DEFAULTS
    values, flags = {}, {}
    for field in dataclasses.fields(PlayerOptions):
        flags[field.name] = f"--{prefix}{_flag(field)}"
        value = getattr(args, prefix + _flag(field), None)
        if value is None:
            value = getattr(_DEFAULTS if field.metadata["own"] else fallback, field.name)
        values[field.name] = tuple(value) if field.metadata["argparse"].get("action") == "append" else value
    _validate(types.SimpleNamespace(**values), flags.__getitem__)
    return PlayerOptions(**values)


def is_engine(spec: str) -> bool:
    """Whether ``spec`` names a GTP engine (``gnugo:LEVEL`` or ``gtp:<command line>``), not a player."""
    return str(spec).startswith(_ENGINE_PREFIXES)


def engine_argv(spec: str, *, never_resign: bool = True) -> list[str]:
    """The command line of an engine spec.

    ``gnugo:LEVEL`` is GNU Go at ``--level LEVEL`` (0..10) under
    Tromp–Taylor-compatible settings (:func:`saijax.play.gtp_match.gnugo_arena_argv`);
    with ``never_resign`` (the default) it never resigns, so every game is
    played out and counted. ``gtp:<command line>`` is split like a shell would.

    Raises:
      ValueError: not an engine spec, or a bad level or empty command (the
        message names the spec).
      FileNotFoundError: GNU Go is not installed.
    """
    spec = str(spec)
    kind, _, rest = spec.partition(":")
    if kind == "gnugo":
        if not rest.strip().isdigit() or not 0 <= int(rest) <= 10:
            raise ValueError(f"engine spec {spec!r}: gnugo:LEVEL needs an integer level 0..10, got {rest!r}")
        return gtp_match.gnugo_arena_argv(int(rest), never_resign=never_resign)
    if kind == "gtp":
        try:
            argv = shlex.split(rest)
        except ValueError as e:
            raise ValueError(f"engine spec {spec!r}: {e}") from None
        if not argv:
            raise ValueError(f"engine spec {spec!r}: gtp:<command line> needs a command")
        return argv
    raise ValueError(f"{spec!r} is not an engine spec: use gnugo:LEVEL or gtp:<command line>")


def load_player(
    spec: str,
    *,
    board_size: int | None,
    options: PlayerOptions = _DEFAULTS,
    name: str | None = None,
    seed: int = 0,
) -> players.Player:
    """The player of a spec (``random``, ``uniform``, ``zoo:NAME`` or a checkpoint), playing as ``options`` say.

    Naming (when ``name`` is None): ``zoo:go7-S1`` → "go7-S1", ``random`` →
    "random" (the name :mod:`saijax.elo` anchors at 0), ``uniform`` →
    "uniform", a checkpoint → "gen<generation>"; a non-trivial agent adds its
    label (``gen12[l=0.5,m=0]``), position control its method (``gen12[C]``)
    and a style its name (``gen12[centre]``). A given ``name`` is used as is.

    A net searches with ``options``' visits, algorithm and Gumbel noise (and
    its head's value mode), plays with its λ/μ agent, and with position
    control searches as the method asks
    (:meth:`saijax.play.control.ControlConfig.search_config`).

    Args:
      spec: the player spec (see the module docstring).
      board_size: N. Required for ``random`` and ``uniform``; for a zoo net or
        a checkpoint it may be None, else it must match the net's.
      options: how the net plays.
      name: the player's name (default: as above).
      seed: the random net's initialisation seed.

    Raises:
      ValueError: an engine spec (use :func:`engine_argv`), an empty spec, a
        net for another board size, or options a uniform player cannot take.
      FileNotFoundError: no such checkpoint or zoo entry.
      saijax.core.checkpoints.CheckpointError: a corrupt checkpoint.
    """
    spec = str(spec).strip()
    if not spec:
        raise ValueError("an empty player spec: use random, uniform, zoo:NAME or a checkpoint path")
    if is_engine(spec):
        raise ValueError(f"{spec!r} is a GTP engine, not a player: use player_cli.engine_argv and gtp_match")
    if spec in ("random", "uniform") and board_size is None:
        raise ValueError(f"player {spec!r} needs a board size")
    if spec == "uniform":
        if options.control_config() is not None or options.root_prior() is not None:
            raise ValueError("'uniform' plays uniformly random moves: it takes no position control or style")
        return players.uniform_player(int(board_size), name or "uniform")
    if spec == "random":
        loaded = players.random_player(
            int(board_size),
            blocks=options.blocks,
            filters=options.filters,
            value_head=options.value_head,
            seed=seed,
            name="random",
        )
    elif spec.startswith(zoo.PREFIX):
        try:
            loaded = zoo.load(spec)
        except KeyError as e:
            raise FileNotFoundError(e.args[0]) from None
        if board_size is not None and int(board_size) != loaded.board_size:
            raise ValueError(
                f"{spec} is for {loaded.board_size}x{loaded.board_size}, not the requested {board_size}x{board_size}"
            )
    else:
        loaded = players.load_player(spec, board_size=board_size)
    return with_options(loaded, options, name=name)
