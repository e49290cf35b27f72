"""Run checkpoints with orbax (DESIGN §7).

One `orbax.checkpoint.CheckpointManager` lives under `<workdir>/checkpoints`,
with one step directory per generation (`checkpoints/12/`) holding two items:

* `state`: the `training.TrainState` (params, batch stats, optimizer state,
  global step) and the run's PRNG key as raw uint32 data (`rng`);
* `meta` (JSON): the generation, the network shape (blocks, filters), value
  head and board size, the replay directory, the key's PRNG implementation,
  and any extra JSON-able fields the caller adds.

Saves are synchronous and atomic: orbax writes each step into
`<generation>.orbax-checkpoint-tmp-<time>` and renames it to `<generation>`
only when every file is written (its `AtomicRenameTemporaryPath`, the default
on local file systems). A run killed at any moment therefore leaves either
the new checkpoint or none, and the previous ones stay readable; leftover
temporary directories are removed when the next manager opens the
directory. The last `max_to_keep` generations are kept. Nothing outside
`<workdir>/checkpoints` is ever deleted.

Unreadable or incompatible checkpoints raise `CheckpointError` (a
`ValueError`) naming the step directory.

orbax's INFO/DEBUG log lines are filtered out (its warnings and errors are
kept), so runs under `absl.app` stay readable.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp
from jax.sharding import NamedSharding, PartitionSpec

__all__ = [
    "CheckpointError",
    "Checkpointer",
    "Payload",
]

_FORMAT_VERSION = 1
_STATE = "state"
_META = "meta"


class _QuietOrbax(logging.Filter):
    """Drops orbax's records below WARNING (it logs through absl)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        path = record.pathname.replace(os.sep, "/")
        return "/orbax/" not in path


def _quiet_orbax_logging() -> None:
    for name in ("absl", "orbax"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _QuietOrbax) for f in logger.filters):
            logger.addFilter(_QuietOrbax())


_quiet_orbax_logging()


class CheckpointError(ValueError):
    """A checkpoint is unreadable, corrupt, or does not fit the run."""


@dataclasses.dataclass(frozen=True)
class Payload:
    """What a checkpoint restores.

    Attributes:
        generation: the last completed generation.
        state: the saved TrainState (shardings from the restore template).
        rng_key: the run's PRNG key (a typed key if one was saved).
        blocks, filters: the network shape of `state`.
        value_head: the network's value head.
        board_size: N.
        replay_dir: where the replay window's files are.
        extra: the caller's extra JSON fields.
        directory: the checkpoint's step directory.
    """

    generation: int
    state: Any
    rng_key: jax.Array
    blocks: int
    filters: int
    value_head: str
    board_size: int
    replay_dir: str
    extra: dict[str, Any]
    directory: str


def _key_to_data(key: jax.Array) -> tuple[np.ndarray, str | None]:
    """Raw uint32 data of a key, and its implementation name (None for a
    legacy raw uint32 key)."""
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return (np.asarray(jax.random.key_data(key)), str(jax.random.key_impl(key)))
    return np.asarray(key, np.uint32), None


def _data_to_key(data: np.ndarray, impl: str | None) -> jax.Array:
    data = np.asarray(data, np.uint32)
    if impl is None:
        return jax.numpy.asarray(data)
    return jax.random.wrap_key_data(data, impl=impl)


def _replicated_sharding() -> NamedSharding:
    mesh = jax.sharding.Mesh(np.asarray(jax.devices()), ("batch",))
    return NamedSharding(mesh, PartitionSpec())


def _abstract(tree: Any) -> Any:
    """ShapeDtypeStructs with shardings for a restore target; leaves without
    a sharding are replicated over all devices."""
    default = None

    def leaf(x):
        nonlocal default
        sharding = getattr(x, "sharding", None)
        if sharding is None:
            if default is None:
                default = _replicated_sharding()
            sharding = default
        return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)

    return jax.tree_util.tree_map(leaf, tree)


def _key_name(entry: Any) -> str:
    for attr in ("name", "key", "idx"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    return str(entry)


def _shapes_by_path(tree: Any) -> dict[str, tuple[int, ...]]:
    """`{'train_state/params/block_0/conv1/kernel': shape, ...}`: paths that
    match whether a node is a dataclass, a NamedTuple or orbax's dict."""
    leaves = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda x: hasattr(x, "shape"))[0]
    return {"/".join(_key_name(k) for k in path): tuple(leaf.shape) for path, leaf in leaves if hasattr(leaf, "shape")}


def _shape_mismatches(template: Any, stored: Any) -> list[str]:
    """Readable differences between a template's arrays and the stored ones:
    missing, unexpected, or differently shaped."""
    expected = _shapes_by_path(template)
    found = _shapes_by_path(stored)
    out = []
    for path, shape in expected.items():
        if path not in found:
            out.append(f"{path}: missing from the checkpoint")
        elif found[path] != shape:
            out.append(f"{path}: stored {found[path]}, expected {shape}")
    out.extend(f"{path}: stored but not expected" for path in found if path not in expected)
    return out


class Checkpointer:
    """The run's checkpoints under `<workdir>/checkpoints`.

    Use as a context manager, or call `close()`.
    """

    def __init__(self, workdir: str | os.PathLike, *, max_to_keep: int = 3):
        """Opens (creating if needed) `<workdir>/checkpoints`.

        Args:
            workdir: the run's working directory; never deleted.
            max_to_keep: how many recent generations to keep.
        """
        self.directory = os.path.abspath(os.path.join(os.fspath(workdir), "checkpoints"))
        options = ocp.CheckpointManagerOptions(
            max_to_keep=max_to_keep,
            create=True,
            # Left by a run killed mid-save; never a finished checkpoint.
            cleanup_tmp_directories=True,
            enable_async_checkpointing=False,
        )
        self._manager = ocp.CheckpointManager(self.directory, options=options, item_names=(_STATE, _META))

    # Context management.

    def close(self) -> None:
        self._manager.close()

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # Queries.

    def step_directory(self, generation: int) -> str:
        """The directory of one generation's checkpoint."""
        return os.path.join(self.directory, str(int(generation)))

    def all_generations(self) -> list[int]:
        """Generations with a finished checkpoint, sorted."""
        self._manager.reload()
        return sorted(self._manager.all_steps())

    def latest_generation(self) -> int | None:
        """The newest finished checkpoint's generation, or None."""
        self._manager.reload()
        return self._manager.latest_step()

    def read_metadata(self, generation: int | None = None) -> dict[str, Any]:
        """The JSON metadata of a checkpoint (default: the latest).

        Raises:
            FileNotFoundError: if there is no such checkpoint.
            CheckpointError: naming the directory, if it is unreadable.
        """
        if generation is None:
            generation = self.latest_generation()
            if generation is None:
                raise FileNotFoundError(f"no checkpoint in {self.directory}")
        directory = self.step_directory(generation)
        try:
            meta = self._manager.restore(generation, args=ocp.args.Composite(**{_META: ocp.args.JsonRestore()}))[_META]
        except FileNotFoundError:
            raise
        except Exception as e:  # pylint: disable=broad-except
            raise self._error(generation, "its metadata is unreadable", e) from e
        required = (
            "format_version",
            "generation",
            "blocks",
            "filters",
            "value_head",
            "board_size",
            "replay_dir",
            "rng_impl",
            "extra",
        )
        if not isinstance(meta, dict) or any(k not in meta for k in required):
            raise CheckpointError(f"checkpoint {directory} has incomplete metadata: {meta!r}")
        return meta

    # Save and restore.

    def save(
        self,
        generation: int,
        *,
        state: Any,
        rng_key: jax.Array,
        blocks: int,
        filters: int,
        value_head: str,
        board_size: int,
        replay_dir: str | os.PathLike,
        extra: dict[str, Any] | None = None,
    ) -> str:
        """Saves a finished generation, atomically; returns its directory.

        Args:
            generation: the generation just completed (the step number).
            state: the TrainState (any pytree of arrays).
            rng_key: the run's PRNG key after this generation.
            blocks, filters, value_head, board_size: the network shape.
            replay_dir: the replay buffer's directory.
            extra: JSON-able extra fields (e.g. metrics) kept in the
                metadata.
        """
        data, impl = _key_to_data(rng_key)
        meta = {
            "format_version": _FORMAT_VERSION,
            "generation": int(generation),
            "blocks": int(blocks),
            "filters": int(filters),
            "value_head": str(value_head),
            "board_size": int(board_size),
            "replay_dir": os.path.abspath(os.fspath(replay_dir)),
            "rng_impl": impl,
            "extra": dict(extra or {}),
        }
        tree = {"train_state": state, "rng": data}
        self._manager.save(
            int(generation),
            args=ocp.args.Composite(
                **{
                    _STATE: ocp.args.StandardSave(tree),
                    _META: ocp.args.JsonSave(meta),
                }
            ),
            force=True,
        )
        self._manager.wait_until_finished()
        return self.step_directory(generation)

    def restore(
        self,
        generation: int,
        template: Any | Callable[[dict[str, Any]], Any],
        *,
        expected_shape: tuple[int, int] | None = None,
    ) -> Payload:
        """Restores one generation's checkpoint.

        Args:
            generation: which checkpoint.
            template: the expected state as a pytree of arrays or
                ShapeDtypeStructs (e.g. `training.abstract_train_state`), or
                a function from the checkpoint's metadata dict (with
                'blocks', 'filters', ...) to one. Leaves without a sharding
                are restored replicated over all devices.
            expected_shape: (blocks, filters) the config expects; a
                different stored shape is an error.

        Returns:
            The Payload.

        Raises:
            FileNotFoundError: if there is no such checkpoint.
            CheckpointError: naming the checkpoint directory, if it is
                corrupt, truncated, or does not match the template / shape.
        """
        directory = self.step_directory(generation)
        if int(generation) not in self.all_generations():
            raise FileNotFoundError(f"no checkpoint for generation {generation} in {self.directory}")
        meta = self.read_metadata(generation)
        if expected_shape is not None and (tuple(expected_shape) != (meta["blocks"], meta["filters"])):
            raise CheckpointError(
                f"checkpoint {directory} holds a {meta['blocks']}x"
                f"{meta['filters']} network, but the config expects "
                f"{expected_shape[0]}x{expected_shape[1]}"
            )
        state_template = template(meta) if callable(template) else template
        rng_shape = np.shape(
            _key_to_data(jax.random.key(0, impl=meta["rng_impl"]) if meta["rng_impl"] else jax.random.PRNGKey(0))[0]
        )
        target = _abstract({"train_state": state_template, "rng": jax.ShapeDtypeStruct(rng_shape, np.uint32)})
        try:
            stored = self._manager.item_metadata(generation)[_STATE]
            stored_tree = getattr(stored, "tree", stored)
        except Exception:  # pylint: disable=broad-except
            stored_tree = None
        if stored_tree is not None:
            mismatches = _shape_mismatches(target, stored_tree)
            if mismatches:
                shown = "; ".join(mismatches[:5])
                more = len(mismatches) - 5
                raise CheckpointError(
                    f"checkpoint {directory} does not fit the expected state "
                    f"(stored network {meta['blocks']}x{meta['filters']} "
                    f"{meta['value_head']}): {shown}" + (f"; and {more} more" if more > 0 else "")
                )
        try:
            restored = self._manager.restore(
                generation, args=ocp.args.Composite(**{_STATE: ocp.args.StandardRestore(target)})
            )[_STATE]
        except Exception as e:  # pylint: disable=broad-except
            raise self._error(generation, "its arrays are unreadable", e) from e
        return Payload(
            generation=int(meta["generation"]),
            state=restored["train_state"],
            rng_key=_data_to_key(np.asarray(restored["rng"]), meta["rng_impl"]),
            blocks=int(meta["blocks"]),
            filters=int(meta["filters"]),
            value_head=str(meta["value_head"]),
            board_size=int(meta["board_size"]),
            replay_dir=str(meta["replay_dir"]),
            extra=dict(meta["extra"]),
            directory=directory,
        )

    def restore_latest(
        self, template: Any | Callable[[dict[str, Any]], Any], *, expected_shape: tuple[int, int] | None = None
    ) -> Payload | None:
        """Restores the newest checkpoint, or returns None if there is none.

        Args and errors as `restore`. A corrupt newest checkpoint is an
        error (naming it and listing the older ones), not silently skipped:
        resuming from an older generation is the user's decision.
        """
        generation = self.latest_generation()
        if generation is None:
            return None
        return self.restore(generation, template, expected_shape=expected_shape)

    def _error(self, generation: int, what: str, cause: Exception) -> CheckpointError:
        directory = self.step_directory(generation)
        older = [g for g in self.all_generations() if g < generation]
        hint = (
            f" Older checkpoints: {older}; move {directory} aside to resume from generation {older[-1]}."
            if older
            else ""
        )
        reason = " ".join(str(cause).split())
        reason = reason.split(" See full TensorStore details")[0]
        if len(reason) > 300:
            reason = reason[:300] + "..."
        error = CheckpointError(
            f"checkpoint {directory} is corrupt or incompatible: {what} ({type(cause).__name__}: {reason}).{hint}"
        )
        error.__cause__ = cause
        return error
