"""Position control: choosing a gentler, natural move from a search's output (docs/design.md §8).

The methods of Shi, Fan, Li, Hsueh and Ikeda, "Position control and
production of various strategies for game of Go using deep learning methods"
(JISE 37(3), 2021) [PosCtl], as pure functions of one batched
:class:`saijax.core.search.SearchOutput`. The search is left as it is (except that
Method A wants PUCT with a high exploration constant, see
:meth:`ControlConfig.search_config`); a :class:`ControlConfig` names the
method and :func:`select` picks each game's move from the root's children:

* ``"naive"`` (§5.2, Leela_naive): Method A's candidates, then the move whose
  win rate is nearest ½.
* ``"A"`` (§4.1): candidates are the moves with enough visits (scaled from
  the paper's 100, see :class:`ControlConfig`), then the move whose win rate
  is nearest ``target_winrate``.
* ``"B"`` (§4.2, §4.3): Method A's candidates; the selection probabilities
  are reweighted by the distance to the opponent's last move(s)
  (:func:`distance_weights`), and Ikeda and Viennot's procedure that §4.3
  recalls picks the move: when the best win rate w₁ exceeds
  ``winning_threshold`` (0.55), the set M⁺ holds m₁ and the candidates with
  w₁ − wᵢ < 0.03c and pᵢ > 0.05, or < 0.04c and > 0.10, or < 0.06c and
  > 0.20, or < 0.08c and > 0.40 (c = ``gentleness``), and the lowest wᵢ in
  M⁺ is played; otherwise m₁ is played (§4.1 steps 1–4).
* ``"C"`` (§4.3, the paper's Leela_ABC): as B, but the move played is the
  lowest ``wᵢ − naturalness_weight · p′ᵢ`` in M⁺ (the paper's α, 0.25 in
  its experiments), p′ being B's reweighted probability. With no usable last
  move (``last_moves`` all −1) the weights are 1 and this is Method A + C.
* ``"endgame"`` (§7.2, Algorithm 1) with SAI's score lead α + k (the player
  to move's predicted margin from each child's evaluation,
  ``child_score_lead``) in place of KataGo's scoreLead: keep the
  ``top_moves`` (20) most probable moves; play m₁ if p₁ > 0.9; drop pᵢ <
  0.01 and δᵢ < δ* − 5; play the highest sᵢ = pᵢ / γ^dᵢ, dᵢ being δᵢ's
  distance to the band [−10, −4] (``lead_band``), γ = ``gamma``.

Here wᵢ is ``child_q``, the agent value of child i for the player to move,
which is the plain win rate when the player's agent is λ = μ = 0 (the
arena's default), pᵢ is ``child_prior``, the net's prior (the paper's
"selection probability", its proxy for naturalness). A move the search did
not visit has no win rate and no score lead, so it is never a candidate of
A, B, C or naive, and the endgame method drops it after step 2 (KataGo
evaluates every move of its list; give the endgame a search that visits the
20 most probable moves, e.g. Gumbel with ``gumbel_scale=0``,
``max_num_considered_actions=20`` and at least 20 simulations).

Naturalness metrics for the experiments (§5.2, §7.4) are plain NumPy:
:func:`move_priors` evaluates the uncontrolled net on a game's positions and
:func:`naturalness` counts a game's unnatural moves (prior below 0.05) and
the mean Euclidean distance from the engine's moves to the opponent's last
move.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Sequence
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from saijax.core import go, search

__all__ = [
    "METHODS",
    "FIELDS",
    "ControlConfig",
    "parse_method",
    "set_option",
    "from_options",
    "min_visits",
    "distance_weights",
    "candidates",
    "select",
    "select_fn",
    "last_opponent_moves",
    "Naturalness",
    "naturalness",
    "move_priors",
]

METHODS = ("naive", "A", "B", "C", "endgame")
_WINRATE_METHODS = ("naive", "A", "B", "C")

# Method B (§4.2): weight ωᵢ by the distance dᵢ to the opponent's last move:
# 1.50 for d ≤ 2, 1.25 for 2 < d ≤ 3, 1.00 for 3 < d ≤ 4, 0.75 for 4 < d ≤ 5,
# 0.50 for 5 < d ≤ 6, 0.25 for 6 < d ≤ 7 and 0.10 for d > 7. Compared as
# squared integer distances, so the segment ends are exact.
_SQUARED_EDGES = (4, 9, 16, 25, 36, 49)
_DISTANCE_WEIGHTS = (1.5, 1.25, 1.0, 0.75, 0.5, 0.25, 0.1)
# The exception of §4.2: no stone of the player to move within distance 3 of
# the opponent's last move leaves the probabilities unchanged.
_ATTACK_SQUARED_RADIUS = 9
# Ikeda and Viennot's acceptance conditions, as §4.3 recalls them:
# (w₁ − wᵢ < margin · c) and (pᵢ > prior).
_CONDITIONS = ((0.03, 0.05), (0.04, 0.10), (0.06, 0.20), (0.08, 0.40))
# Folded into the caller's key, so the search's own keys can be passed.
_KEY_SALT = 0x5E1EC7


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"ControlConfig.{name} must be a number, got {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"ControlConfig.{name} must be finite, got {value!r}")
    return float(value)


def _integer(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"ControlConfig.{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


@dataclasses.dataclass(frozen=True)
class ControlConfig:
    """A position-control method and its parameters (frozen, hashable: a jit static).

    Method A's visit threshold. The paper keeps the moves with at least 100
    visits out of Leela's 16,000 simulations per move on 13×13 (§4.1, §5),
    and 16,000 / 170 actions ≈ 94: its threshold is about one uniform share
    of the simulations. saijax keeps that ratio: a candidate needs at least
    ``min_visit_share · S / A`` visits, S being the root's simulations (the sum
    of its children's visits) and A = N² + 1, and never fewer than one. The
    default 1.0625 = 100 · 170 / 16,000 gives exactly 100 visits in the
    paper's setting; it is 0.29 % of the simulations on 19×19, 1.3 % on 9×9
    and 4.1 % on 5×5 (:func:`min_visits` gives the number).

    Attributes:
      method: one of :data:`METHODS`: "naive", "A", "B", "C" or "endgame".
      min_visit_share: Method A's visit threshold in uniform shares (above);
        used by naive, A, B and C.
      target_winrate: the win rate Method A steers to (0.5; naive fixes it).
      c_puct: Method A's exploration constant (10, §4.1), applied by
        :meth:`search_config`.
      winning_threshold: B and C play the best move m₁ unless its win rate
        w₁ exceeds this (0.55, Ikeda and Viennot's value, §4.3).
      gentleness: the paper's c in the acceptance conditions of M⁺ (§4.3);
        larger accepts worse moves. 2.5 is its Leela_ABC25.
      naturalness_weight: Method C's α (§4.3): the move played minimises
        wᵢ − naturalness_weight · p′ᵢ. 0.25 in the paper's experiments.
      opponent_moves: how many of the opponent's last moves Method B
        measures distances to (the nearest counts); the paper uses 1.
      top_moves: Algorithm 1's move list: the 20 most probable moves.
      obvious_prior: Algorithm 1 plays m₁ at once when p₁ exceeds this (0.9).
      min_prior: Algorithm 1 drops moves with a lower prior (0.01).
      max_loss: Algorithm 1 drops moves whose score lead is more than this
        below the best one (5 points).
      lead_band: the band (low, high) of the player to move's score lead
        that Algorithm 1 steers to: the paper's [−10, −4] points, i.e. the
        engine lets the weaker opponent lead by 4 to 10 points.
      gamma: Algorithm 1's γ ≥ 1: a move's prior is divided by γ per point
        of its score lead outside ``lead_band``; the paper uses 2 (Table 6),
        3 and 5 (§7.4); 5 by default (its 13×13 experiment).
    """

    method: str = "A"
    min_visit_share: float = 100 * 170 / 16000
    target_winrate: float = 0.5
    c_puct: float = 10.0
    winning_threshold: float = 0.55
    gentleness: float = 2.5
    naturalness_weight: float = 0.25
    opponent_moves: int = 1
    top_moves: int = 20
    obvious_prior: float = 0.9
    min_prior: float = 0.01
    max_loss: float = 5.0
    lead_band: tuple[float, float] = (-10.0, -4.0)
    gamma: float = 5.0

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"ControlConfig.method must be one of {METHODS}, got {self.method!r}")
        floats = (
            "min_visit_share",
            "target_winrate",
            "c_puct",
            "winning_threshold",
            "gentleness",
            "naturalness_weight",
            "obvious_prior",
            "min_prior",
            "max_loss",
            "gamma",
        )
        for name in floats:
            object.__setattr__(self, name, _number(name, getattr(self, name)))
        for name in ("opponent_moves", "top_moves"):
            object.__setattr__(self, name, _integer(name, getattr(self, name), 1))
        band = self.lead_band
        if not isinstance(band, (tuple, list)) or len(band) != 2:
            raise ValueError(f"ControlConfig.lead_band must be a pair (low, high), got {band!r}")
        band = (_number("lead_band", band[0]), _number("lead_band", band[1]))
        if band[0] > band[1]:
            raise ValueError(f"ControlConfig.lead_band must have low <= high, got {band}")
        object.__setattr__(self, "lead_band", band)

        def check(name, ok, what):
            if not ok:
                raise ValueError(f"ControlConfig.{name} must be {what}, got {getattr(self, name):g}")

        check("min_visit_share", self.min_visit_share >= 0, ">= 0")
        check("target_winrate", 0 <= self.target_winrate <= 1, "in [0, 1]")
        check("c_puct", self.c_puct > 0, "> 0")
        check("winning_threshold", 0 <= self.winning_threshold <= 1, "in [0, 1]")
        check("gentleness", self.gentleness > 0, "> 0 (the paper's c)")
        check("naturalness_weight", self.naturalness_weight > 0, "> 0 (Method C's α; 0 would be Method B)")
        check("obvious_prior", 0 < self.obvious_prior <= 1, "in (0, 1]")
        check("min_prior", 0 <= self.min_prior < 1, "in [0, 1)")
        check("max_loss", self.max_loss >= 0, ">= 0 points")
        check("gamma", self.gamma >= 1, ">= 1 (the paper's γ)")
        if self.method == "naive" and self.target_winrate != 0.5:
            raise ValueError(
                f"ControlConfig.target_winrate is 0.5 for method 'naive', got {self.target_winrate:g}; "
                "use method 'A' for another target"
            )

    def replace(self, **changes) -> ControlConfig:
        """A copy with some values changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @property
    def uses_winrate(self) -> bool:
        """Whether the method reads win rates (naive, A, B, C) rather than score leads."""
        return self.method in _WINRATE_METHODS

    def search_config(self, base: search.SearchConfig) -> search.SearchConfig:
        """The search this method wants, from ``base``.

        Win-rate methods use Method A's search (§4.1): PUCT with
        ``c_puct`` (10), so that weaker moves get enough visits for reliable
        win rates; the move itself is chosen by :func:`select`. The endgame
        method reads priors and score leads, so ``base`` is kept.
        """
        self.check_search(base)
        if not self.uses_winrate:
            return base
        return dataclasses.replace(base, algorithm="puct", c_puct=self.c_puct)

    def check_search(self, config: search.SearchConfig, name: str = "") -> None:
        """Raises ValueError if a search with ``config`` cannot feed this method.

        Win-rate methods need ``child_q`` to be a win rate in [0, 1], which
        ``value_mode="score"`` (the LZS baseline) does not give.
        """
        if self.uses_winrate and config.value_mode != "sigmoid":
            who = f"player {name!r}: " if name else ""
            raise ValueError(
                f"{who}ControlConfig.method {self.method!r} reads win rates, but the search's "
                f"value_mode is {config.value_mode!r}; use method 'endgame' or a 'sigmoid' search"
            )


# ---------------------------------------------------------------------------
# Settings from text: the GTP engine's lz-setoption and the command lines.

FIELDS = tuple(f.name for f in dataclasses.fields(ControlConfig))
_OFF = ("off", "none")
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_method(text: str) -> str | None:
    """A method name as typed (any case: "c", "Endgame"), or None for "off"/"none".

    Raises:
      ValueError: not a method, naming the choices.
    """
    word = str(text).strip().lower()
    if word in _OFF:
        return None
    for method in METHODS:
        if method.lower() == word:
            return method
    raise ValueError(f"unknown position-control method {text!r}: use off, {', '.join(METHODS)}")


def _parse_value(field: str, text: str):
    """One field's value from text (ASCII numbers only; ``lead_band`` as "low,high")."""
    text = str(text).strip()
    if field == "method":
        method = parse_method(text)
        if method is None:
            raise ValueError("ControlConfig.method must be one of " + ", ".join(METHODS) + f", got {text!r}")
        return method
    if field == "lead_band":
        parts = text.split(",")
        if len(parts) != 2 or not all(_FLOAT_TEXT.fullmatch(p.strip()) for p in parts):
            raise ValueError(f"ControlConfig.lead_band must be two numbers 'low,high', got {text!r}")
        return (float(parts[0]), float(parts[1]))
    if field in ("opponent_moves", "top_moves"):
        if not _INT_TEXT.fullmatch(text):
            raise ValueError(f"ControlConfig.{field} must be an integer, got {text!r}")
        return int(text)
    if not _FLOAT_TEXT.fullmatch(text):
        raise ValueError(f"ControlConfig.{field} must be a number, got {text!r}")
    return float(text)


def set_option(config: ControlConfig, field: str, text: str) -> ControlConfig:
    """``config`` with one field set from text, validated again.

    Args:
      config: the settings to change.
      field: a name of :data:`FIELDS` (any case), e.g. "gentleness", "gamma",
        "min_visit_share", "lead_band" ("-10,-4").
      text: the value as typed.

    Raises:
      ValueError: an unknown field, or a bad value; the message names the field.
    """
    name = str(field).strip().lower()
    if name not in FIELDS:
        raise ValueError(f"unknown position-control option {field!r}: use one of {', '.join(FIELDS)}")
    return config.replace(**{name: _parse_value(name, text)})


def from_options(method: str | None, options: Sequence[str] = ()) -> ControlConfig | None:
    """The ControlConfig of command-line flags: a method and ``field=value`` strings.

    ``from_options("C", ["gentleness=1", "naturalness_weight=0.5"])``. The
    method may be "off" (or None): then the options are still checked, and
    None is returned.

    Raises:
      ValueError: an unknown method or field, a malformed option, or a bad
        value; the message names it.
    """
    chosen = parse_method(method) if method is not None else None
    config = ControlConfig(method=chosen or "A")
    for option in options:
        field, sep, text = str(option).partition("=")
        if not sep or not field.strip():
            raise ValueError(f"a position-control option is field=value, got {option!r}")
        if field.strip().lower() == "method":
            raise ValueError("give the position-control method on its own (--control), not as an option")
        config = set_option(config, field, text)
    return config if chosen is not None else None


def min_visits(config: ControlConfig, num_simulations: int, board_size: int) -> int:
    """Method A's visit threshold: ⌈min_visit_share · S / (N² + 1)⌉, at least 1.

    ``min_visits(ControlConfig(), 16000, 13) == 100``, the paper's setting.
    """
    actions = board_size * board_size + 1
    # The small slack absorbs float rounding: visits are integers.
    return max(1, math.ceil(config.min_visit_share * num_simulations / actions - 1e-9))


# ---------------------------------------------------------------------------
# Method B: distance weights.


def _as_last_moves(last_moves, batch: int) -> chex.Array:
    last = jnp.asarray(last_moves, jnp.int32)
    if last.ndim == 1:
        last = last[:, None]
    chex.assert_shape(last, (batch, None))
    return last


def distance_weights(states: go.GoState, last_moves: chex.Array) -> chex.Array:
    """Method B's weights ωᵢ (§4.2) for every action, [B, A].

    dᵢ is the Euclidean distance on the board grid from point i to the
    nearest of the opponent's last moves, and ωᵢ is 1.50 for d ≤ 2, 1.25 up
    to 3, 1.00 up to 4, 0.75 up to 5, 0.50 up to 6, 0.25 up to 7, and 0.10
    beyond. A last move counts only if the player to move has a stone within
    distance 3 of it (the paper's exception: otherwise the opponent's move
    "does not intend to attack or invade"); with no such move every weight is
    1. A pass has no position: as a last move it is ignored (like −1, no
    move), and as a candidate it keeps weight 1 (its prior is unchanged).

    Args:
      states: the positions searched, batched [B].
      last_moves: [B, k] (or [B]) actions of the opponent's last moves, −1
        for none.

    Returns:
      float32 [B, N² + 1].
    """
    points = states.board.shape[-1]
    n = math.isqrt(points)
    batch = states.board.shape[0]
    last = _as_last_moves(last_moves, batch)
    on_board = (last >= 0) & (last < points)  # [B, k]
    where = jnp.where(on_board, last, 0)
    grid = jnp.arange(points)
    rows, cols = grid // n, grid % n
    d2 = (rows[None, None, :] - (where // n)[..., None]) ** 2 + (cols[None, None, :] - (where % n)[..., None]) ** 2
    own = states.board == states.to_play[:, None]  # [B, P]
    attacking = on_board & jnp.any(own[:, None, :] & (d2 <= _ATTACK_SQUARED_RADIUS), axis=-1)  # [B, k]
    nearest = jnp.min(jnp.where(attacking[..., None], d2, jnp.iinfo(jnp.int32).max), axis=1)  # [B, P]
    segment = jnp.searchsorted(jnp.asarray(_SQUARED_EDGES), nearest, side="left")
    weights = jnp.asarray(_DISTANCE_WEIGHTS, jnp.float32)[segment]
    weights = jnp.where(jnp.any(attacking, axis=1)[:, None], weights, 1.0)
    return jnp.concatenate([weights, jnp.ones((batch, 1), jnp.float32)], axis=1)


# ---------------------------------------------------------------------------
# The methods, as (candidate set, preference) per game.


def _method_a_candidates(config: ControlConfig, out: search.SearchOutput) -> chex.Array:
    """Visited moves with at least min_visit_share · S / A visits, plus the most visited (§4.1)."""
    visits = out.child_visits
    actions = visits.shape[-1]
    total = jnp.sum(visits, axis=-1, keepdims=True).astype(jnp.float32)
    enough = visits.astype(jnp.float32) * actions >= config.min_visit_share * total
    most = jax.nn.one_hot(jnp.argmax(visits, axis=-1), actions, dtype=bool)
    return (enough | most) & (visits > 0) & jnp.isfinite(out.child_q)


def _nearest_target(config: ControlConfig, out, cand):
    target = 0.5 if config.method == "naive" else config.target_winrate
    return cand, -jnp.abs(out.child_q - target)


def _ikeda_viennot(config: ControlConfig, out, states, last_moves, cand):
    """M⁺ and the move preference of B and C (§4.2, §4.3)."""
    w = jnp.where(cand, out.child_q, -jnp.inf)
    w1 = jnp.max(w, axis=-1, keepdims=True)
    best = cand & (w == w1)
    p = out.child_prior * distance_weights(states, last_moves)
    gap = w1 - w
    accepted = jnp.zeros_like(cand)
    for margin, prior in _CONDITIONS:
        accepted = accepted | ((gap < margin * config.gentleness) & (p > prior))
    m_plus = cand & (accepted | best)
    winning = w1 > config.winning_threshold
    chosen = jnp.where(winning, m_plus, best)
    if config.method == "B":
        preference = -w
    else:
        preference = -(w - config.naturalness_weight * p)
    return chosen, preference


def _endgame(config: ControlConfig, out):
    """Algorithm 1 (§7.2) with δᵢ = the child's α + k for the player to move."""
    prior = out.child_prior
    lead = out.child_score_lead
    legal = prior > 0
    # Rank by prior, ties to the lower action.
    rank = jnp.argsort(jnp.argsort(-prior, axis=-1, stable=True), axis=-1, stable=True)
    listed = legal & (rank < config.top_moves)  # step 1
    first = rank == 0
    obvious = jnp.max(prior, axis=-1, keepdims=True) > config.obvious_prior  # step 2
    kept = listed & (prior >= config.min_prior) & jnp.isfinite(lead)  # step 3 (and a lead is needed)
    best_lead = jnp.max(jnp.where(kept, lead, -jnp.inf), axis=-1, keepdims=True)  # step 4
    kept = kept & (lead >= best_lead - config.max_loss)  # step 5
    low, high = config.lead_band
    outside = jnp.maximum(low - lead, 0.0) + jnp.maximum(lead - high, 0.0)
    # Step 6, in logs: log sᵢ = log pᵢ − (points outside the band) · log γ.
    log_s = jnp.log(jnp.maximum(prior, 1e-30)) - jnp.where(kept, outside, 0.0) * math.log(config.gamma)
    chosen = jnp.where(obvious, first & legal, kept)
    return chosen, jnp.where(obvious, prior, log_s)


def _plan(config: ControlConfig, out: search.SearchOutput, states: go.GoState, last_moves):
    """(candidates [B, A] bool, preference [B, A]): the move is the candidate most preferred."""
    if config.method == "endgame":
        chosen, preference = _endgame(config, out)
    else:
        cand = _method_a_candidates(config, out)
        if config.method in ("naive", "A"):
            chosen, preference = _nearest_target(config, out, cand)
        else:
            chosen, preference = _ikeda_viennot(config, out, states, last_moves, cand)
    # No candidate (or a finished game): the search's own move.
    own = jax.nn.one_hot(out.action, chosen.shape[-1], dtype=bool)
    fallback = states.terminated[:, None] | ~jnp.any(chosen, axis=-1, keepdims=True)
    chosen = jnp.where(fallback, own, chosen)
    preference = jnp.where(chosen, jnp.nan_to_num(preference, nan=-jnp.inf), -jnp.inf)
    return chosen, preference


def candidates(
    config: ControlConfig, out: search.SearchOutput, states: go.GoState, last_moves: chex.Array
) -> chex.Array:
    """The moves :func:`select` chooses among, bool [B, A].

    naive and A: Method A's candidates. B and C: M⁺, or {m₁} when w₁ is at
    most ``winning_threshold``. endgame: Algorithm 1's list after steps 1–5,
    or {m₁} at step 2. A finished game, or one with no candidate, has the
    search's own move ``out.action`` alone.
    """
    return _plan(config, out, states, last_moves)[0]


def _game_keys(key, batch: int):
    typed = jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
    keys = jax.random.split(key, batch) if key.ndim == (0 if typed else 1) else key
    return jax.vmap(lambda k: jax.random.fold_in(k, _KEY_SALT))(keys)


def select(
    config: ControlConfig,
    out: search.SearchOutput,
    states: go.GoState,
    last_moves: chex.Array,
    key: chex.PRNGKey,
) -> chex.Array:
    """Each game's position-controlled move, int32 [B]; pure and jittable (config static).

    Args:
      config: the method and its parameters.
      out: the batched search output of the positions ``states``.
      states: the positions searched [B] (Method B reads the stones; a
        finished game keeps ``out.action``).
      last_moves: [B, k] (or [B]) the opponent's last moves, most recent
        first, −1 for none (:func:`last_opponent_moves`); only B and C read
        them.
      key: one key, or one per game [B, 2]; consumed (only to break exact
        ties at random). A salt is folded in, so the search's own per-game
        keys may be passed.

    Returns:
      int32 [B] actions, each in :func:`candidates`.
    """
    chosen, preference = _plan(config, out, states, last_moves)
    top = jnp.max(preference, axis=-1, keepdims=True)
    ties = chosen & (preference >= top)
    noise = jax.vmap(lambda k: jax.random.uniform(k, chosen.shape[-1:]))(_game_keys(key, chosen.shape[0]))
    return jnp.argmax(jnp.where(ties, noise, -1.0), axis=-1).astype(jnp.int32)


@functools.cache
def select_fn(config: ControlConfig):
    """``jit(select)`` for ``config``: ``(out, states, last_moves, key) -> action [B]`` (cached)."""
    return jax.jit(functools.partial(select, config))


def last_opponent_moves(history: np.ndarray, ply: int, count: int = 1) -> np.ndarray:
    """The opponent's last ``count`` moves before ``ply``, int32 [B, count], −1 for none.

    Colours alternate every ply (a pass is a move), so they are the moves of
    plies ``ply − 1, ply − 3, …``, most recent first.

    Args:
      history: [B, T] actions played so far (−1 where none).
      ply: the ply about to be played (0-based).
      count: how many of the opponent's moves.
    """
    history = np.asarray(history)
    cols = ply - 1 - 2 * np.arange(count)
    last = history[:, np.maximum(cols, 0)] if history.shape[1] else np.full((len(history), count), -1)
    return np.where(cols[None, :] >= 0, last, -1).astype(np.int32)


# ---------------------------------------------------------------------------
# Naturalness metrics (§5.2, §7.4).


@dataclasses.dataclass(frozen=True)
class Naturalness:
    """One game's naturalness measures of the controlled engine.

    Attributes:
      moves: the engine's moves counted.
      unnatural: how many of them have a prior below the threshold under the
        uncontrolled net (Table 7's "p < 0.05 move"); None without priors.
      mean_distance: the mean Euclidean distance from the engine's moves to
        the opponent's last move (§3, §5.2); NaN if no pair counts.
      distance_moves: the moves that mean is over (neither move a pass).
    """

    moves: int
    unnatural: int | None
    mean_distance: float
    distance_moves: int


def naturalness(
    moves: Sequence[int],
    controlled: Sequence[bool],
    priors: Sequence[float] | None = None,
    *,
    board_size: int,
    threshold: float = 0.05,
    plies: tuple[int, int] | None = None,
) -> Naturalness:
    """Counts a game's unnatural engine moves and their mean distance to the opponent's last move.

    Args:
      moves: the game's actions in order (``row * N + col``, pass = N²),
        passes included; colours alternate.
      controlled: per ply, whether the controlled engine played it (e.g.
        ``np.arange(T) % 2 == 1`` for White in an even game, with random
        opening plies set False).
      priors: per ply, the uncontrolled net's prior of the move played
        (:func:`move_priors`); only the engine's plies are read.
      board_size: N.
      threshold: a move is unnatural below this prior (0.05, §7.4).
      plies: ``(start, stop)``, the 0-based plies counted; the paper's
        "2nd–60th moves" is ``(1, 60)``. Default: all.

    Returns:
      :class:`Naturalness`. A distance needs both the move and the
      opponent's move before it on the board (a pass has no position).
    """
    moves = np.asarray(moves, np.int64)
    mask = np.asarray(controlled, bool)
    if mask.shape != moves.shape:
        raise ValueError(f"controlled has {mask.size} plies for {moves.size} moves")
    if plies is not None:
        window = np.zeros_like(mask)
        window[plies[0] : plies[1]] = True
        mask = mask & window
    points = board_size * board_size
    unnatural = None
    if priors is not None:
        priors = np.asarray(priors, np.float64)
        if priors.shape != moves.shape:
            raise ValueError(f"priors has {priors.size} plies for {moves.size} moves")
        unnatural = int(np.sum(mask & (priors < threshold)))
    previous = np.concatenate([[-1], moves[:-1]])
    pair = mask & (moves >= 0) & (moves < points) & (previous >= 0) & (previous < points)
    dr = moves // board_size - previous // board_size
    dc = moves % board_size - previous % board_size
    distances = np.sqrt(dr**2 + dc**2)[pair]
    mean = float(np.mean(distances)) if distances.size else math.nan
    return Naturalness(moves=int(mask.sum()), unnatural=unnatural, mean_distance=mean, distance_moves=int(pair.sum()))


@functools.cache
def _prior_fn(evaluator):
    def priors(variables, states, actions):
        logits, _, _ = evaluator(variables, states)
        logits = jnp.where(states.legal, logits.astype(jnp.float32), -jnp.inf)
        probs = jax.nn.softmax(logits, axis=-1)
        return jnp.take_along_axis(probs, actions[:, None], axis=1)[:, 0]

    return jax.jit(priors)


def move_priors(evaluator: search.Evaluator, variables, states, moves: Sequence[int]) -> np.ndarray:
    """The prior of each move played under a net, as the search sees it (illegal moves masked).

    Args:
      evaluator: the uncontrolled net's evaluator (``Player.evaluator``; a
        controlled player's own net is the uncontrolled one).
      variables: its variables.
      states: the position before each move: a list of ``GoState`` (e.g.
        ``sgf.replay(record)[:-1]``) or one batched ``GoState`` [T].
      moves: the move played in each position [T].

    Returns:
      float64 [T] priors.
    """
    if isinstance(states, (list, tuple)):
        states = jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)
    actions = jnp.asarray(moves, jnp.int32)
    return np.asarray(_prior_fn(evaluator)(variables, states, actions), np.float64)
