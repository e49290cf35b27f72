"""The network's input planes, built and stored (docs/design.md §2).

SAI's network sees 17 binary planes per position, grouped by feature, not by
time (P is the player to move now, at every time step):

* 0..3: P's stones at t, t-1, t-2, t-3;
* 4..7: the opponent's stones at t..t-3;
* 8..11: points illegal for the player to move at that time;
* 12..15: "last liberty" points at t..t-3;
* 16: all ones, which tells the zero-padded convolutions where the board
  ends.

`go.features` computes them for one state; `sai_planes` batches it. SAI has
no colour-to-move plane: komi reaches the value only through the sigmoid.
The baselines' value heads ("winrate", "score") are trained at one komi and
need the colour: `add_colour_plane` appends an 18th plane, all ones when
Black is to move and all zeros when White is. How many planes each value head
takes is `networks.input_planes`, since the width of the network's first
convolution depends on it.

Search (`network_inputs`, from game states) and training (replay rows,
unpacked) build the network's input through the same `add_colour_plane`, so
the two cannot disagree on the convention.

Replay files store planes 0..15 bit-packed, two bytes per point
(`pack_planes`); `unpack_planes` rebuilds the ones plane, and the colour plane
is rebuilt from the row's player to move.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from saijax.core import go, networks

__all__ = [
    "NUM_PACKED_PLANES",
    "PACKED_BYTES",
    "add_colour_plane",
    "network_inputs",
    "pack_planes",
    "sai_planes",
    "unpack_planes",
]

# SAI planes 0..15 (own, opponent, illegal, last liberty, each at t..t-3);
# plane 16, the ones plane, is not stored.
NUM_PACKED_PLANES = go.NUM_FEATURE_PLANES - 1
PACKED_BYTES = NUM_PACKED_PLANES // 8  # 2 bytes per point


def sai_planes(rules: go.GoRules, states: go.GoState) -> jax.Array:
    """SAI's 17 input planes for a batch of states.

    Args:
        rules: the static rules (board size N).
        states: a batch of B states.

    Returns:
        float32 [B, N, N, 17], `go.features` of each state.
    """
    return jax.vmap(lambda s: go.features(rules, s))(states)


def _takes_colour_plane(value_head: str) -> bool:
    # networks.input_planes validates the head; a head that takes one plane
    # more than SAI's takes the colour plane.
    return networks.input_planes(value_head) == go.NUM_FEATURE_PLANES + 1


def add_colour_plane(planes: jax.Array, to_play: jax.Array, value_head: str) -> jax.Array:
    """The network's input from SAI's planes and the player to move.

    Args:
        planes: [..., N, N, 17] SAI planes.
        to_play: [...] +1 (Black) / -1 (White), the player to move of each
            position.
        value_head: "sai" (planes returned unchanged) or a baseline,
            "winrate" / "score" (the colour plane is appended: all ones when
            Black is to move, all zeros when White is).

    Returns:
        [..., N, N, C] with C = `networks.input_planes(value_head)`, in the
        dtype of `planes`.

    Raises:
        ValueError: for an unknown value head.
    """
    if not _takes_colour_plane(value_head):
        return planes
    black = (jnp.asarray(to_play) == 1).astype(planes.dtype)  # [...]
    colour = jnp.broadcast_to(black[..., None, None, None], planes.shape[:-1] + (1,))  # [..., N, N, 1]
    return jnp.concatenate([planes, colour], axis=-1)


def network_inputs(rules: go.GoRules, states: go.GoState, value_head: str = "sai") -> jax.Array:
    """The network's input planes for a batch of states.

    Args:
        rules: the static rules (board size N).
        states: a batch of B states.
        value_head: the network's value head, "sai", "winrate" or "score".

    Returns:
        float32 [B, N, N, C]: the 17 SAI planes, followed by the colour plane
        for the baselines (C = `networks.input_planes(value_head)`).
    """
    return add_colour_plane(sai_planes(rules, states), states.to_play, value_head)


def pack_planes(planes: jax.Array) -> jax.Array:
    """Bit-packs SAI planes 0..15 for a replay file.

    Args:
        planes: [..., N, N, C] with C >= 16, e.g. `go.features` output;
            values are read as `> 0.5`. Planes from 16 on (the ones plane, a
            colour plane) are dropped: `unpack_planes` and `add_colour_plane`
            rebuild them.

    Returns:
        uint8 [..., N, N, 2]: plane i is bit 7 - (i mod 8) of byte i // 8.
    """
    bits = planes[..., :NUM_PACKED_PLANES] > 0.5
    return jnp.packbits(bits, axis=-1)


def unpack_planes(packed: jax.Array) -> jax.Array:
    """SAI's 17 planes from `pack_planes` output (jittable).

    Args:
        packed: uint8 [..., N, N, 2].

    Returns:
        float32 [..., N, N, 17]: planes 0..15 and the ones plane, as
        `go.features` gave them.

    Raises:
        ValueError: if `packed` is not [..., N, N, 2].
    """
    if packed.ndim < 3 or packed.shape[-1] != PACKED_BYTES or packed.shape[-3] != packed.shape[-2]:
        raise ValueError(f"packed planes must be [..., N, N, {PACKED_BYTES}] uint8, got shape {tuple(packed.shape)}")
    planes = jnp.unpackbits(packed, axis=-1, count=NUM_PACKED_PLANES).astype(jnp.float32)  # [..., N, N, 16]
    ones = jnp.ones(planes.shape[:-1] + (1,), jnp.float32)  # [..., N, N, 1]
    return jnp.concatenate([planes, ones], axis=-1)
