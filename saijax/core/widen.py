"""Function-preserving growth of a SaiNet: more filters, more blocks, the same net.

`schedules.network` grows a run's net. Leela Zero and SAI grew theirs by
training the bigger net from scratch on the replay window
(`training.growth = "retrain"`, `learn.training.grow_network`); with a small
window that net starts far weaker than the one it replaces. This module
grows it the other way (`training.growth = "widen"`): the bigger net starts
as exactly the old one and training goes on from there, in the spirit of
Net2Net (Chen et al., 2016), with zero outgoing weights instead of copied
channels.

* **More filters.** Every trunk convolution's old input→old output weights
  are copied; the new output channels get a fresh initialisation (random
  kernels, batch norm at scale 1, shift 0, running mean 0, variance 1);
  every weight from a new channel into an old one, or into a head, is 0.
  The new channels compute something, but nothing reads it yet, so every
  output is the old net's. Their outgoing weights get gradients at once
  (the new channels' activations are not zero), and their incoming ones
  as soon as those move. The global-pooling features ([mean of F channels,
  max of F channels]) are remapped channel by channel.
* **More blocks.** A new residual block is appended after the old ones,
  freshly initialised except its second batch norm's scale, 0: the block
  adds 0 to its input, and ReLU(x + 0) = x since x ≥ 0 after the block
  before. The scale's gradient is not zero, so the block starts to learn.
  Blocks are only appended where they keep the old blocks' global pooling
  (`networks.pooling_blocks`).
* **The optimizer's state** (Adam's moments, SGD's momentum) grows the same
  way with zeros in the new entries; its step count and hyperparameters
  carry on, so an optimizer-state restart does not come with the growth.

Exact in both batch-norm modes: with running averages, and with batch
statistics (each channel is normalised on its own, so the old channels'
statistics are the old net's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from saijax.core import networks

__all__ = ["check_widening", "widen_tree", "widen_variables"]

# What each axis of a leaf indexes: trunk channels (T), the pooling branch's
# channels (G), the trunk's pooled features [mean(T), max(T)] (PT), the
# pooling branch's (PG), the value heads' input [value conv's board, PT] (V),
# or something that does not grow (None).
_T, _G, _PT, _PG, _V = "T", "G", "PT", "PG", "V"
_KERNEL_AXES: dict[str, tuple[str | None, ...]] = {
    "input_conv": (None, None, None, _T),
    "conv1": (None, None, _T, _T),
    "conv2": (None, None, _T, _T),
    "gpool_conv": (None, None, _T, _G),
    "gpool_dense": (_PG, _T),
    "policy_conv": (None, None, _T, None),
    "opponent_policy_conv": (None, None, _T, None),
    "ownership_conv": (None, None, _T, None),
    "value_conv": (None, None, _T, None),
    "policy_gpool": (_PT, None),
    "opponent_policy_gpool": (_PT, None),
    "policy_pass_gpool": (_PT, None),
    "opponent_policy_pass_gpool": (_PT, None),
    "alpha_hidden": (_V, None),
    "beta_hidden": (_V, None),
    "value_hidden": (_V, None),
}
# Batch norms (scale, bias, mean, var) over one channel axis.
_NORM_AXIS = {"input_bn": _T, "bn1": _T, "bn2": _T, "gpool_bn": _G}
_SAME = ("board_size", "value_head", "beta_scale", "ownership_head", "global_pooling", "opponent_policy_head")


def check_widening(old: networks.NetworkSpec, new: networks.NetworkSpec) -> None:
    """Raises ValueError, naming the field, unless ``new`` can start as ``old``."""
    for field in _SAME:
        if getattr(old, field) != getattr(new, field):
            raise ValueError(
                f"widening changes only network.blocks and network.filters, but {field} goes "
                f"{getattr(old, field)!r} -> {getattr(new, field)!r}"
            )
    if new.blocks < old.blocks or new.filters < old.filters:
        raise ValueError(
            f"widening cannot shrink a net: {old.blocks}x{old.filters} -> {new.blocks}x{new.filters} "
            "(blocks and filters must not decrease)"
        )
    if old.global_pooling:
        kept = tuple(i for i in networks.pooling_blocks(new.blocks) if i < old.blocks)
        if kept != networks.pooling_blocks(old.blocks):
            raise ValueError(
                f"widening {old.blocks} blocks to {new.blocks} moves global pooling from blocks "
                f"{networks.pooling_blocks(old.blocks)} to {networks.pooling_blocks(new.blocks)}: the old blocks "
                "would not keep their function (grow to 3 or more blocks from 3 or more)"
            )


def _index_maps(old: networks.NetworkSpec, new: networks.NetworkSpec) -> dict[str, tuple[np.ndarray, int]]:
    """Kind -> (old index -> new index, new size)."""
    f, f2 = old.filters, new.filters
    g, g2 = max(1, f // 4), max(1, f2 // 4)
    t = np.arange(f)
    gi = np.arange(g)
    pooled = np.concatenate([t, f2 + t])
    board = np.arange(2 * old.board_size**2)
    value = np.concatenate([board, board.size + pooled]) if old.global_pooling else board
    return {
        _T: (t, f2),
        _G: (gi, g2),
        _PT: (pooled, 2 * f2),
        _PG: (np.concatenate([gi, g2 + gi]), 2 * g2),
        _V: (value, board.size + (2 * f2 if old.global_pooling else 0)),
    }


def _path_names(path) -> tuple[str, ...]:
    return tuple(str(k.key) for k in path if isinstance(k, jax.tree_util.DictKey))


def _embed(old: np.ndarray, fresh: np.ndarray, axes, maps, where: str) -> np.ndarray:
    """``fresh`` with ``old`` at the mapped indices; a kernel's weights from new
    inputs into old outputs zeroed."""
    index = []
    for d, kind in enumerate(axes):
        if kind is None:
            if old.shape[d] != fresh.shape[d]:
                raise ValueError(f"{where}: axis {d} should not grow, but {old.shape} -> {fresh.shape}")
            index.append(np.arange(old.shape[d]))
        else:
            idx, size = maps[kind]
            if old.shape[d] != idx.size or fresh.shape[d] != size:
                raise ValueError(f"{where}: shapes {old.shape} -> {fresh.shape} do not match a {kind} axis")
            index.append(idx)
    out = np.array(fresh, copy=True)
    out[np.ix_(*index)] = old
    if len(axes) >= 2 and axes[-2] is not None:
        new_in = np.setdiff1d(np.arange(out.shape[-2]), index[-2])
        if new_in.size:
            lead = tuple(slice(None) for _ in range(out.ndim - 2))
            out[lead + np.ix_(new_in, index[-1])] = 0
    return out


def widen_tree(
    old_tree: Any,
    fresh_tree: Any,
    old_spec: networks.NetworkSpec,
    new_spec: networks.NetworkSpec,
    *,
    new_block_leaf: Callable[[tuple[str, ...], np.ndarray], np.ndarray] | None = None,
) -> Any:
    """``fresh_tree`` (the bigger net's params, batch stats or optimizer state,
    as initialised) with ``old_tree``'s values in their places.

    Leaves are matched by their path; dict keys name the layer (the module,
    then the leaf: ``block_0/conv1/kernel``, ``.../mu/block_0/bn1/scale``).
    A leaf the old tree lacks (a new block) is ``new_block_leaf(names,
    fresh)`` (default: the fresh one). A leaf of unchanged shape is copied.

    Raises:
      ValueError: a leaf changed shape where no rule says how.
    """
    check_widening(old_spec, new_spec)
    maps = _index_maps(old_spec, new_spec)
    old_leaves = {jax.tree_util.keystr(p): leaf for p, leaf in jax.tree_util.tree_leaves_with_path(old_tree)}

    def one(path, fresh):
        key = jax.tree_util.keystr(path)
        names = _path_names(path)
        fresh_np = np.asarray(jax.device_get(fresh))
        if key not in old_leaves:
            return new_block_leaf(names, fresh_np) if new_block_leaf is not None else fresh_np
        old = np.asarray(jax.device_get(old_leaves[key]))
        if old.shape == fresh_np.shape and (old_spec.filters == new_spec.filters or len(names) < 2):
            return old.astype(fresh_np.dtype)
        module, leaf = names[-2], names[-1]
        if leaf == "kernel" and module in _KERNEL_AXES:
            axes = _KERNEL_AXES[module]
        elif module in _NORM_AXIS and leaf in ("scale", "bias", "mean", "var"):
            axes = (_NORM_AXIS[module],)
        elif old.shape == fresh_np.shape:
            return old.astype(fresh_np.dtype)
        else:
            raise ValueError(f"widening has no rule for {key}: {old.shape} -> {fresh_np.shape}")
        return _embed(old, fresh_np, axes, maps, key).astype(fresh_np.dtype)

    return jax.tree_util.tree_map_with_path(one, fresh_tree)


def _identity_block(names: tuple[str, ...], fresh: np.ndarray) -> np.ndarray:
    # A new block's second batch norm scales by 0: the block adds nothing.
    if names[-2:] == ("bn2", "scale"):
        return np.zeros_like(fresh)
    return fresh


def widen_variables(
    old_variables: dict[str, Any],
    old_spec: networks.NetworkSpec,
    new_spec: networks.NetworkSpec,
    fresh_variables: dict[str, Any],
) -> dict[str, Any]:
    """The bigger net's ``{'params', 'batch_stats'}``, computing what the old
    one computes (``fresh_variables``: the bigger net initialised, e.g. by
    ``networks.init_network``, which supplies the new channels and blocks)."""
    return {
        "params": widen_tree(
            old_variables["params"], fresh_variables["params"], old_spec, new_spec, new_block_leaf=_identity_block
        ),
        "batch_stats": widen_tree(old_variables["batch_stats"], fresh_variables["batch_stats"], old_spec, new_spec),
    }
