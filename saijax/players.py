"""Networks ready to play: a checkpoint or a random net, for GTP and the arena.

A :class:`Player` is what an engine needs to search with a network: the flax
module, its inference variables (``{'params', 'batch_stats'}``) and the
board size it plays on. The network's dense layers fix N, so a player
supports exactly one board size.

:func:`load_player` builds one of two kinds:

* ``checkpoint=None``: a randomly initialised net (the "random net" that
  anchors Elo at 0, and what the engine plays before training exists);
* a checkpoint: a run's workdir, its ``checkpoints`` directory, or one
  generation's step directory (``<workdir>/checkpoints/12``). Without a step
  directory the newest generation is used.

Checkpoints are read **read-only**. ``checkpoints.Checkpointer`` opens its
directory for writing and removes unfinished temporary directories when it
starts, which would delete the save in progress of a training run that is
still going; an engine watching a live run must never do that. The restore
therefore opens its own read-only orbax manager and restores only the
network variables (a partial restore: the optimizer state, whose structure
depends on the training config, is never read). It relies on the layout
documented in ``saijax/checkpoints.py``: items ``state`` (a tree with the
TrainState under ``train_state``) and ``meta`` (JSON with the network shape).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
from typing import Any

import jax

from saijax import checkpoints, networks

__all__ = ["Player", "load_player"]

# Item and tree names of the checkpoint layout (saijax/checkpoints.py).
_STATE_ITEM = "state"
_META_ITEM = "meta"
_TRAIN_STATE = "train_state"


@dataclasses.dataclass(frozen=True)
class Player:
    """A network ready for inference.

    Attributes:
      net: the flax module (``networks.SaiNet``).
      variables: ``{'params': ..., 'batch_stats': ...}`` on the default device.
      board_sizes: the board sizes the net supports; one, since the dense
        layers fix N.
      value_head: "sai", "winrate" or "score".
      name: a short label, e.g. ``"random-2x16"`` or ``"gen12"``.
      description: one line saying where the net came from.
      generation: the checkpoint's generation, or None for a random net.
    """

    net: networks.SaiNet
    variables: dict[str, Any]
    board_sizes: tuple[int, ...]
    value_head: str
    name: str
    description: str
    generation: int | None = None

    @property
    def board_size(self) -> int:
        """The (only) board size of the net."""
        return self.board_sizes[0]


def load_player(
    checkpoint: str | os.PathLike | None,
    *,
    board_size: int | None = None,
    blocks: int = 2,
    filters: int = 16,
    value_head: str = "sai",
    seed: int = 0,
) -> Player:
    """A checkpointed network, or a random one.

    Args:
      checkpoint: None for a random net; else a workdir, its ``checkpoints``
        directory, or a step directory ``<workdir>/checkpoints/<generation>``.
      board_size: N of a random net (required then). With a checkpoint it is
        optional and, if given, must match the checkpoint's size.
      blocks, filters, value_head: shape of a random net; a checkpoint's own
        metadata decides its shape.
      seed: PRNG seed of a random net's initialisation.

    Returns:
      The :class:`Player`.

    Raises:
      ValueError: no ``board_size`` for a random net, a bad net shape, or a
        checkpoint for another board size.
      FileNotFoundError: the path does not exist or holds no checkpoint.
      checkpoints.CheckpointError: the checkpoint is corrupt or unreadable
        (the message names its directory).
    """
    if checkpoint is None:
        if board_size is None:
            raise ValueError("load_player: a random net needs board_size")
        net = networks.make_network(board_size, blocks=blocks, filters=filters, value_head=value_head)
        # Jitted: one compile is much faster than flax's op-by-op init.
        variables = jax.jit(functools.partial(networks.init_network, net))(jax.random.PRNGKey(seed))
        name = f"random-{blocks}x{filters}"
        return Player(
            net=net,
            variables=variables,
            board_sizes=(board_size,),
            value_head=value_head,
            name=name,
            description=f"random {value_head} net {blocks}x{filters} for {board_size}x{board_size}, seed {seed}",
        )

    directory, generation = _locate(os.fspath(checkpoint))
    meta, variables = _restore_variables(directory, generation)
    net = networks.make_network(
        int(meta["board_size"]),
        blocks=int(meta["blocks"]),
        filters=int(meta["filters"]),
        value_head=str(meta["value_head"]),
    )
    if board_size is not None and int(board_size) != net.board_size:
        raise ValueError(
            f"checkpoint {directory}/{generation} is for {net.board_size}x{net.board_size}, "
            f"not the requested {board_size}x{board_size}"
        )
    generation = int(meta["generation"])
    return Player(
        net=net,
        variables=variables,
        board_sizes=(net.board_size,),
        value_head=net.value_head,
        name=f"gen{generation}",
        description=(
            f"generation {generation}, {net.blocks}x{net.filters} {net.value_head} net for "
            f"{net.board_size}x{net.board_size}, from {os.path.join(directory, str(generation))}"
        ),
        generation=generation,
    )


def _locate(path: str) -> tuple[str, int | None]:
    """(checkpoints directory, generation or None for the newest) for a path."""
    path = os.path.abspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"checkpoint path {path} does not exist")
    if not os.path.isdir(path):
        raise FileNotFoundError(f"checkpoint path {path} is not a directory")
    if os.path.isdir(os.path.join(path, "checkpoints")):
        return os.path.join(path, "checkpoints"), None
    parent, base = os.path.split(path)
    if base.isdecimal() and base.isascii() and os.path.basename(parent) == "checkpoints":
        return parent, int(base)
    if base == "checkpoints":
        return path, None
    raise FileNotFoundError(
        f"no checkpoint at {path}: expected a workdir with a 'checkpoints' directory, "
        "that directory, or one of its generation directories"
    )


@contextlib.contextmanager
def _quiet_absl():
    """Hides orbax's warnings about read-only managers (it logs through absl)."""
    logger = logging.getLogger("absl")
    old = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(old)


def _restore_variables(directory: str, generation: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Reads one checkpoint's metadata and network variables, read-only.

    Returns:
      (metadata dict, ``{'params', 'batch_stats'}`` on the default device).
    """
    import orbax.checkpoint as ocp  # pylint: disable=g-import-not-at-top

    def corrupt(step_dir, what, cause):
        reason = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
        if len(reason) > 300:
            reason = reason[:300] + "..."
        error = checkpoints.CheckpointError(
            f"checkpoint {step_dir} is corrupt or incompatible: {what} ({type(cause).__name__}: {reason})"
        )
        error.__cause__ = cause
        return error

    with _quiet_absl():
        try:
            manager = ocp.CheckpointManager(
                directory,
                options=ocp.CheckpointManagerOptions(read_only=True, create=False),
                item_handlers={
                    _STATE_ITEM: ocp.PyTreeCheckpointHandler(),
                    _META_ITEM: ocp.JsonCheckpointHandler(),
                },
            )
        except Exception as e:  # pylint: disable=broad-except
            raise corrupt(directory, "the checkpoint directory cannot be opened", e) from e
        try:
            steps = sorted(manager.all_steps())
            if generation is None:
                if not steps:
                    raise FileNotFoundError(f"no finished checkpoint in {directory}")
                generation = steps[-1]
            elif generation not in steps:
                raise FileNotFoundError(
                    f"no finished checkpoint for generation {generation} in {directory} (found: {steps})"
                )
            step_dir = os.path.join(directory, str(generation))
            try:
                meta = manager.restore(generation, args=ocp.args.Composite(**{_META_ITEM: ocp.args.JsonRestore()}))[
                    _META_ITEM
                ]
            except Exception as e:  # pylint: disable=broad-except
                raise corrupt(step_dir, "its metadata is unreadable", e) from e
            required = ("generation", "blocks", "filters", "value_head", "board_size")
            if not isinstance(meta, dict) or any(k not in meta for k in required):
                raise checkpoints.CheckpointError(f"checkpoint {step_dir} has incomplete metadata: {meta!r}")
            try:
                net = networks.make_network(
                    int(meta["board_size"]),
                    blocks=int(meta["blocks"]),
                    filters=int(meta["filters"]),
                    value_head=str(meta["value_head"]),
                )
            except (TypeError, ValueError) as e:
                raise corrupt(step_dir, "its metadata describes no valid network", e) from e
            shapes = jax.eval_shape(functools.partial(networks.init_network, net), jax.random.PRNGKey(0))
            device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
            template = {
                _TRAIN_STATE: jax.tree_util.tree_map(
                    lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=device), shapes
                )
            }
            try:
                restored = manager.restore(
                    generation,
                    args=ocp.args.Composite(
                        **{
                            _STATE_ITEM: ocp.args.PyTreeRestore(
                                item=template,
                                restore_args=ocp.checkpoint_utils.construct_restore_args(template),
                                partial_restore=True,
                            )
                        }
                    ),
                )[_STATE_ITEM]
                train_state = restored[_TRAIN_STATE]
                variables = {"params": train_state["params"], "batch_stats": train_state["batch_stats"]}
                # A shape mismatch between metadata and arrays must fail here,
                # not at the first search.
                for want, got in zip(jax.tree_util.tree_leaves(shapes), jax.tree_util.tree_leaves(variables)):
                    if tuple(want.shape) != tuple(got.shape):
                        raise ValueError(f"array of shape {tuple(got.shape)} where {tuple(want.shape)} is expected")
            except checkpoints.CheckpointError:
                raise
            except Exception as e:  # pylint: disable=broad-except
                raise corrupt(step_dir, "its network arrays are unreadable", e) from e
        finally:
            manager.close()
    return meta, variables
