"""The front door to players: one grammar of player specs and one set of player flags (docs/design.md §8).

Every command line that builds a :class:`saijax.players.Player` (the arena,
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
from typing import Any

from saijax import checks, control, gtp_match, networks, players, search, styles, zoo

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


def _option(default: Any, help: str, *, flag: str | None = None, own: bool = False, **argparse_kwargs) -> Any:
    """A :class:`PlayerOptions` field and its flag, declared together.

    Args:
      default: the field's default (the unprefixed flag's too).
      help: the flag's help, a template of the fields' defaults
        (``"(default {visits})"``; :func:`add_player_flags` fills them in).
      flag: the flag's name, if not the field's (``--control_option``
        appends to ``control_options``).
      own: each side asks for it on its own: a prefixed flag left out means
        the default (off), not the unprefixed player's value.
      **argparse_kwargs: the flag's ``type``, ``choices``, ``action``,
        ``metavar``.
    """
    metadata = {"help": help, "flag": flag, "own": own, "argparse": argparse_kwargs}
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class PlayerOptions:
    """How a net plays: the values of the player flags.

    Each field is declared once, here, with its default and its flag's help
    (which says why that default), type and choices; :func:`add_player_flags`
    makes the flags from these fields.

    Attributes:
      visits: simulations per move.
      algorithm: "gumbel" or "puct" (``search.ALGORITHMS``).
      lambda_, mu, threshold: the λ/μ agent (:class:`saijax.search.Agent`).
      gumbel_scale: Gumbel noise on the root (0: the search's best move).
      control: position control: off, naive, A, B, C or endgame.
      control_options: ``"FIELD=VALUE"`` settings of the control method.
      style: online playing style: off, centre or edge.
      blocks, filters, value_head: the shape of a random net (ignored for
        other nets, whose checkpoint or zoo record decides).
    """

    visits: int = _option(
        128,
        "simulations per move (default {visits}: enough for the Gumbel search's sequential halving "
        "to give each of its 16 root candidates 2 visits in the first round, and a 7x7 move takes well "
        "under a second on a CPU)",
        type=int,
    )
    algorithm: str = _option(
        "gumbel",
        "search algorithm (default {algorithm}: the search saijax trains with; puct is SAI's)",
        choices=search.ALGORITHMS,
    )
    lambda_: float = _option(
        0.0,
        "agent λ, upper end of the bonus interval, 0 <= μ <= λ <= 1 (default {lambda_:g}: the plain win rate, "
        "the strongest agent and the one every net trains with; SAI's engine defaulted to λ = 0.5 to "
        "play for a bigger margin at little cost in strength, but a player's strength, which matches "
        "and Elo measure, should not depend on an opt-in score bonus)",
        type=float,
    )
    mu: float = _option(
        0.0,
        "agent μ, lower end of the bonus interval (default {mu:g}, with λ = {lambda_:g} the plain win rate)",
        type=float,
    )
    threshold: float = _option(
        0.0,
        "variable agent: use (λ, μ) only while the root's win rate is at least this, else (0, 0) "
        "(default {threshold:g}: always; it only matters when λ > 0, and who asks for λ > 0 asks for it; "
        "SAI's papers tried 0.5 and 0.7)",
        type=float,
    )
    gumbel_scale: float = _option(
        0.0,
        "Gumbel noise on the search's root (default {gumbel_scale:g}: deterministic, the search's best move, "
        "the player at full strength; variety between games comes from random openings and colours; "
        f"> 0 samples moves, {search.SearchConfig.gumbel_scale:g} as in self-play)",
        type=float,
    )
    control: str = _option(
        "off",
        "position control: off, naive, A, B, C or endgame (docs/design.md §8; default {control})",
        own=True,
    )
    control_options: tuple[str, ...] = _option(
        (),
        "a position-control setting, e.g. gentleness=2.5; repeat for more",
        flag="control_option",
        own=True,
        action="append",
        metavar="FIELD=VALUE",
    )
    style: str = _option(
        "off",
        "online playing style: off, centre or edge (docs/design.md §8; default {style})",
        own=True,
    )
    blocks: int = _option(
        2,
        "random net only: residual blocks (default {blocks}, with {filters} filters: "
        "players.random_player's net, the Elo anchor; its size barely matters, it plays nearly at random)",
        type=int,
    )
    filters: int = _option(16, "random net only: filters (default {filters})", type=int)
    value_head: str = _option(
        "sai",
        f"random net only: {', '.join(networks.VALUE_HEADS)} (default {{value_head}})",
    )

    def __post_init__(self):
        object.__setattr__(self, "control_options", tuple(str(o) for o in self.control_options))
        _validate(self, lambda field: f"PlayerOptions.{field}")

    def agent(self) -> search.Agent:
        """The λ/μ agent."""
        return search.Agent(self.lambda_, self.mu, self.threshold)

    def control_config(self) -> control.ControlConfig | None:
        """The position-control method, or None."""
        return control.from_options(self.control, self.control_options)

    def root_prior(self) -> styles.OnlineStyle | None:
        """The online style as a search root prior, or None."""
        return styles.online_style(self.style)


def _flag(field: dataclasses.Field) -> str:
    """A field's flag name, without ``--`` and prefix."""
    return field.metadata["flag"] or field.name


# How the player's search settings are called on the command line.
_SEARCH_FLAGS = {"num_simulations": "visits"}


def _validate(options: PlayerOptions, flag) -> None:
    """Raises ValueError naming the flag (``flag(field)``) and its value for the first bad value.

    The search settings and the λ/μ agent are checked by building
    :class:`saijax.search.SearchConfig` and :class:`saijax.search.Agent`,
    which hold their rules; here are only the checks they do not make.
    """

    def bad(field, why):
        raise ValueError(f"{flag(field)}={getattr(options, field)!r}: {why}")

    if not checks.is_int(options.visits):
        bad("visits", "needs an int >= 1")
    # search.SearchConfig does not check the noise scale.
    if not checks.is_number(options.gumbel_scale) or options.gumbel_scale < 0:
        bad("gumbel_scale", "needs a finite number >= 0")
    checks.build(
        search.SearchConfig,
        {"algorithm": options.algorithm, "num_simulations": options.visits, "gumbel_scale": options.gumbel_scale},
        lambda field: flag(_SEARCH_FLAGS.get(field, field)),
    )
    checks.build(search.Agent, {"lambda_": options.lambda_, "mu": options.mu, "threshold": options.threshold}, flag)
    given = f"{flag('control')}={options.control!r}"
    if options.control_options:
        given += f" {flag('control_options')}={','.join(options.control_options)!r}"
    with checks.naming(given):
        control.from_options(options.control, options.control_options)
    with checks.naming(f"{flag('style')}={options.style!r}"):
        styles.online_style(options.style)
    # A random net's shape (networks.NetworkSpec would also take 0 blocks).
    for field in ("blocks", "filters"):
        if not checks.is_int(getattr(options, field)) or getattr(options, field) < 1:
            bad(field, "needs an int >= 1")
    if options.value_head not in networks.VALUE_HEADS:
        bad("value_head", f"use one of {', '.join(networks.VALUE_HEADS)}")


_DEFAULTS = PlayerOptions()


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
    Tromp–Taylor-compatible settings (:func:`saijax.gtp_match.gnugo_arena_argv`);
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
    (:meth:`saijax.control.ControlConfig.search_config`).

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
      saijax.checkpoints.CheckpointError: a corrupt checkpoint.
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


def with_options(loaded: players.Player, options: PlayerOptions = _DEFAULTS, *, name: str | None = None):
    """A loaded net playing as ``options`` say, named as :func:`load_player` names it.

    For nets that come from elsewhere than a spec (e.g. a private zoo
    directory, :func:`saijax.zoo.load` with ``directory``).
    """
    config = dataclasses.replace(
        loaded.config,
        algorithm=options.algorithm,
        num_simulations=int(options.visits),
        gumbel_scale=float(options.gumbel_scale),
        root_prior=options.root_prior(),
    )
    player = loaded.replace(config=config).with_agent(options.agent(), rename=name is None)
    controlled = options.control_config()
    if controlled is not None:
        player = player.replace(
            control=controlled,
            config=controlled.search_config(config),
            name=f"{player.name}[{controlled.method}]",
        )
    if config.root_prior is not None:
        player = player.replace(name=f"{player.name}[{config.root_prior.style}]")
    return player if name is None else player.replace(name=name)
