"""Playing styles: centre- and edge/corner-oriented play (docs/design.md §8).

The strategy methods of Shi, Fan, Li, Hsueh and Ikeda, "Position control and
production of various strategies for game of Go using deep learning methods"
(JISE 37(3), 2021) [PosCtl], §4.4 and §6, on saijax's search:

* **Online** (§4.4.1): the root's policy is reweighted by line,
  p″ᵢ = p′ᵢ · ω′(lᵢ), where lᵢ is the line of move i (the border is line
  1) and p′ᵢ is Method B's distance-reweighted prior
  (:func:`saijax.play.control.distance_weights`, the opponent's last move read
  from the position). :class:`OnlineStyle` is a ``SearchConfig.root_prior``:
  the search starts from p″ at the root (Gumbel considers and picks moves
  by p″ and the searched values; PUCT spreads its visits by p″), and the
  tree below the root keeps the net's own priors, so the opponent's replies
  are modelled as the net sees them.
* **Offline** (§4.4.2): nets trained on a weighted score. A point on the
  neutral line counts 1, edge points 1 − b and centre points 1 + b
  (:func:`score_weights`; the paper's β, here ``centre_bonus`` so as not to
  clash with SAI's β): b > 0 trains a centre-oriented net, b < 0 an
  edge/corner-oriented one. The map becomes ``GoRules.point_weights`` and
  so enters every Tromp–Taylor margin of the run: outcomes, α targets,
  fair komi and the search's terminal leaves (``config.style.centre_bonus``).
* **Mixed** (§4.4.2): searches with the normal net and with the biased net;
  the biased net's moves are kept only if the normal net's win rate is
  within ``w_diff`` of its best and the biased prior is at least ``p_th``;
  the most visited kept move is played, else the normal net's move
  (:func:`mixed_select`).

Line weights. The paper gives ω′ for 19×19 (centre: 0.25 for lines 1–2,
0.5 for line 3, 1.5, 1.75 for lines 4, 5 and 2.0 beyond; edge the reverse:
2.0, 1.5, 0.75, 0.5, 0.25) and 13×13 (centre 0.5 up to line 3, 2.0 beyond;
edge 2.0 and 0.5). Other sizes use the 13×13 rule with the edge band scaled
to the board: lines 1..e with e = round(3N/13) (7×7 and 9×9: lines 1–2;
13×13: 1–3; 19×19 has its own table). The offline map uses the same band:
lines 1..e count 1 − b, line e + 1 counts 1, lines beyond count 1 + b (the
paper's 13×13 map: lines 1–3, line 4, lines 5+).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

from saijax.core import go
from saijax.play import control

__all__ = [
    "STYLES",
    "line_numbers",
    "edge_lines",
    "line_weights",
    "score_weights",
    "style_rules",
    "OnlineStyle",
    "online_style",
    "last_moves",
    "MixedStyle",
    "mixed_select",
    "mixed_select_fn",
    "line_shares",
]

STYLES = ("centre", "edge")

# §4.4.1 on 19×19: ω′ for lines ≤ 2, 3, 4, 5, > 5.
_LINE_WEIGHTS_19 = {"centre": (0.25, 0.5, 1.5, 1.75, 2.0), "edge": (2.0, 1.5, 0.75, 0.5, 0.25)}
# §4.4.1 on 13×13: ω′ for lines in the edge band, and beyond it.
_BAND_WEIGHTS = {"centre": (0.5, 2.0), "edge": (2.0, 0.5)}


def line_numbers(size: int) -> np.ndarray:
    """int32 [N²]: the line of each point, 1 on the border, 2 next to it, …"""
    rows, cols = np.divmod(np.arange(size * size), size)
    return (1 + np.minimum.reduce([rows, cols, size - 1 - rows, size - 1 - cols])).astype(np.int32)


def edge_lines(size: int) -> int:
    """The edge band's width e = round(3N/13), at least 1 (13×13: 3, 9×9 and 7×7: 2)."""
    return max(1, int(math.floor(3 * size / 13 + 0.5)))


def _check_style(style: str) -> None:
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, got {style!r}")


def line_weights(style: str, size: int) -> np.ndarray:
    """float32 [N² + 1]: the online method's ω′ per action (pass: 1)."""
    _check_style(style)
    lines = line_numbers(size)
    if size == 19:
        table = np.asarray(_LINE_WEIGHTS_19[style], np.float32)
        weights = table[np.clip(lines, 2, 6) - 2]
    else:
        inner, outer = _BAND_WEIGHTS[style]
        weights = np.where(lines <= edge_lines(size), inner, outer).astype(np.float32)
    return np.concatenate([weights, [1.0]]).astype(np.float32)


def score_weights(size: int, centre_bonus: float) -> np.ndarray:
    """float32 [N²]: the offline method's point weights (module docstring).

    Lines 1..e count 1 − b, line e + 1 counts 1, lines beyond count 1 + b,
    b = ``centre_bonus`` in (−1, 1): positive for a centre-oriented net,
    negative for an edge/corner-oriented one, 0 for standard Go.
    """
    b = float(centre_bonus)
    if not -1.0 < b < 1.0:
        raise ValueError(f"centre_bonus must be in (-1, 1), got {centre_bonus!r}")
    lines = line_numbers(size)
    e = edge_lines(size)
    return np.select([lines <= e, lines == e + 1], [1.0 - b, 1.0], 1.0 + b).astype(np.float32)


def style_rules(rules: go.GoRules, centre_bonus: float) -> go.GoRules:
    """``rules`` scored with the offline style's point weights (unchanged for b = 0)."""
    if float(centre_bonus) == 0.0:
        return dataclasses.replace(rules, point_weights=None)
    weights = tuple(float(w) for w in score_weights(rules.size, centre_bonus))
    return dataclasses.replace(rules, point_weights=weights)


def last_moves(states: go.GoState) -> chex.Array:
    """int32 [B]: the opponent's last move read from each position, −1 for none.

    The point that was empty one position ago and now holds one of the
    opponent's stones; −1 after a pass, at the start, and after setup.
    """
    placed = (states.past_boards[:, 0] == 0) & (states.board == -states.to_play[:, None])
    return jnp.where(jnp.any(placed, axis=-1), jnp.argmax(placed, axis=-1), -1).astype(jnp.int32)


@dataclasses.dataclass(frozen=True)
class OnlineStyle:
    """The online method as a search's root prior (``SearchConfig.root_prior``).

    Attributes:
      style: "centre" or "edge".
      method_b: also apply Method B's distance weights (§4.4.1 uses p′,
        Method B's probabilities, to keep the moves natural).
    """

    style: str = "centre"
    method_b: bool = True

    def __post_init__(self):
        _check_style(self.style)
        if not isinstance(self.method_b, bool):
            raise ValueError(f"OnlineStyle.method_b must be a bool, got {self.method_b!r}")

    @property
    def label(self) -> str:
        return f"online-{self.style}" + ("" if self.method_b else "-noB")

    def weights(self, rules: go.GoRules, states: go.GoState) -> chex.Array:
        """float32 [B, N² + 1]: ω′(lᵢ) · ω_B(dᵢ), multiplied into the root prior."""
        omega = jnp.asarray(line_weights(self.style, rules.size))[None, :]
        if not self.method_b:
            return jnp.broadcast_to(omega, (states.board.shape[0], omega.shape[-1]))
        return omega * control.distance_weights(states, last_moves(states))


def online_style(name: str) -> OnlineStyle | None:
    """The online style a user names: ``centre`` (or ``center``), ``edge``, or ``off``/``none``.

    Case and surrounding spaces are ignored. The GTP engine's ``--style``
    flag and ``lz-setoption name style value <name>`` read styles with this.

    Returns:
      An :class:`OnlineStyle` (with Method B's distance weights), or None for
      off (no root reweighting).

    Raises:
      ValueError: for any other name, listing the accepted ones.
    """
    word = str(name).strip().lower()
    if word in ("off", "none"):
        return None
    word = {"center": "centre"}.get(word, word)
    if word not in STYLES:
        raise ValueError(f"unknown style {name!r}: use off, {', '.join(STYLES)}")
    return OnlineStyle(word)


@dataclasses.dataclass(frozen=True)
class MixedStyle:
    """The mixed approach's settings (``Player.mixed``).

    Attributes:
      biased: the biased net's :class:`saijax.play.players.Player` (an offline
        style net, e.g. the zoo's ``go7-centre``); it searches with its own
        settings and the main player's λ/μ agent.
      w_diff: the win-rate margin within which a biased move is acceptable.
      p_th: the biased prior a move needs.
    """

    biased: Any
    w_diff: float = 0.05
    p_th: float = 0.1

    def __post_init__(self):
        for name in ("w_diff", "p_th"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"MixedStyle.{name} must be a number in [0, 1], got {value!r}")
        if not hasattr(self.biased, "evaluator"):
            raise ValueError(f"MixedStyle.biased must be a players.Player, got {type(self.biased).__name__}")


def mixed_select(normal, biased, *, w_diff: float = 0.05, p_th: float = 0.1) -> chex.Array:
    """The mixed approach's move (§4.4.2), int32 [B]; pure and jittable.

    From the biased net's visited moves M_B, drop m if the normal search's
    win rate w_N(m) is below max w_N − ``w_diff`` (a move the normal search
    did not visit has no win rate and is dropped), or if the biased prior
    p_B(m) is below ``p_th``; play the most visited remaining move of the
    biased search, or the normal search's most visited move if none remains.
    The paper uses w_diff = 0.05 and p_th = 0.1 (§6.2.2).

    Args:
      normal, biased: :class:`saijax.core.search.SearchOutput` of the same
        positions with the normal and the biased net.
    """
    w_n = normal.child_q
    best = jnp.nanmax(jnp.where(normal.child_visits > 0, w_n, -jnp.inf), axis=-1, keepdims=True)
    acceptable = (normal.child_visits > 0) & (w_n >= best - w_diff)
    keep = (biased.child_visits > 0) & acceptable & (biased.child_prior >= p_th)
    pick = jnp.argmax(jnp.where(keep, biased.child_visits, -1), axis=-1)
    fallback = jnp.argmax(normal.child_visits, axis=-1)
    return jnp.where(jnp.any(keep, axis=-1), pick, fallback).astype(jnp.int32)


@functools.cache
def mixed_select_fn(w_diff: float, p_th: float):
    """``jit(mixed_select)`` with these settings: ``(normal, biased) -> action [B]`` (cached)."""
    return jax.jit(functools.partial(mixed_select, w_diff=w_diff, p_th=p_th))


def line_shares(moves, size: int) -> dict[str, float]:
    """The share of board moves (passes excluded) on lines 1–2 and on lines 3+.

    Returns:
      ``{"moves", "lines_1_2", "lines_3_plus"}`` (shares NaN with no move).
    """
    moves = np.asarray([m for m in moves if 0 <= m < size * size], np.int64)
    if moves.size == 0:
        return {"moves": 0, "lines_1_2": float("nan"), "lines_3_plus": float("nan")}
    lines = line_numbers(size)[moves]
    low = float(np.mean(lines <= 2))
    return {"moves": int(moves.size), "lines_1_2": low, "lines_3_plus": 1.0 - low}
