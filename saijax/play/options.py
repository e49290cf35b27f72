"""How a net plays: :class:`PlayerOptions`, every player setting declared once (docs/design.md §8).

A player (:class:`saijax.play.players.Player`) is a net with search
settings and a λ/μ agent; :class:`PlayerOptions` says how it plays: visits,
algorithm, the λ/μ agent, Gumbel noise, position control, online style, and
the shape of a random net. Each field is declared once, here, with its
default and the help of its command-line flag, which says why that default
(:mod:`saijax.cli.player` makes the flags from the fields);
:func:`with_options` applies the options to a loaded net. The GTP engine,
the arena and the experiments all read their defaults from here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from saijax.core import checks, networks, search
from saijax.play import control, players, styles

__all__ = ["PlayerOptions", "with_options", "DEFAULTS"]


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
      lambda_, mu, threshold: the λ/μ agent (:class:`saijax.core.search.Agent`).
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
    :class:`saijax.core.search.SearchConfig` and :class:`saijax.core.search.Agent`,
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


DEFAULTS = PlayerOptions()


def with_options(loaded: players.Player, options: PlayerOptions = DEFAULTS, *, name: str | None = None):
    """A loaded net playing as ``options`` say, named as :func:`saijax.cli.player.load_player` names it.

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
