"""Run checkpoints with orbax (docs/design.md §7).

One `orbax.checkpoint.CheckpointManager` lives under `<workdir>/checkpoints`,
with one step directory per generation (`checkpoints/12/`) holding two items:

* `state`: the `training.TrainState` (params, batch stats, optimizer state,
  global step) under `train_state`, the run's PRNG key as raw uint32
  data under `rng`, in a gated run the variables of the promoted net
  (the one that plays the next generation's self-play) under `selfplay`,
  and with weight averaging (`training.ema_decay` > 0, a
  `training.EmaTrainState`) the averaged `{'params', 'batch_stats'}` under
  `ema` (`train_state` then holds the live net, exactly as without EMA);
* `meta` (JSON), one flat object: `format_version`, `generation`, the
  network's `networks.NetworkSpec` fields (`board_size`, `blocks`,
  `filters`, `value_head`, `beta_scale`), `replay_dir`, `rng_impl` (the
  key's PRNG implementation), `selfplay_net` (whether `selfplay` is stored),
  `ema_net` (whether `ema` is stored; only written when true, missing
  reads as false), `optimizer_state` (only written, as false, in a compact
  leg; missing reads as true) and `extra` (the caller's JSON-able fields).

A compact leg (`write_compact`, `python -m saijax.compact_leg`) is a copy of
one checkpoint without the optimizer's state (Adam's moments, SGD's
momentum): `train_state` holds only `step`, `params` and `batch_stats`,
beside the same `rng`, `ema` and `selfplay`, whose float arrays may be
stored in bfloat16 (`weights_dtype`, recorded in the metadata). It is what
a committed leg can be kept as (README, "Long runs in legs"). `restore`
reads it into the template's dtypes and returns a `Payload` whose
`optimizer_state` is False and whose state's `opt_state` is None; the
caller starts a fresh optimizer state (`training.restart_optimizer`).

Metadata formats: 2 (written now) records `beta_scale`, the effective
float. Format 1 did not, and is still read: its `beta_scale` reads as None,
which `NetworkSpec` resolves to the default 10/N². That is what a format-1
net was trained with unless its run config set `network.beta_scale`;
`pipeline.train_and_evaluate` resumes such a run with its config's value,
while `load_network` (which has no config) assumes the default.

Saves are synchronous and atomic: orbax writes each step into
`<generation>.orbax-checkpoint-tmp-<time>` and renames it to `<generation>`
only when every file is written (its `AtomicRenameTemporaryPath`, the default
on local file systems). A run killed at any moment therefore leaves either
the new checkpoint or none, and the previous ones stay readable; leftover
temporary directories are removed when the next manager opens the
directory. The last `max_to_keep` generations are kept, and with
`keep_every=k` also every k-th generation (for Elo curves and the zoo). Nothing outside
`<workdir>/checkpoints` is ever deleted.

Unreadable or incompatible checkpoints raise `CheckpointError` (a
`ValueError`) naming the step directory.

`load_network` reads one checkpoint's network for play (GTP, the arena)
without a `Checkpointer`: read-only, and only the network variables: the
promoted net's where the run was gated (the net of that generation in SAI's
sense), else the averaged net's where the run kept a weight average, else
the trained net's.

orbax's INFO/DEBUG log lines are filtered out (its warnings and errors are
kept), so runs under `absl.app` stay readable.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp
from jax.sharding import NamedSharding, PartitionSpec

from saijax.core import networks

__all__ = [
    "COMPACT_DTYPES",
    "CheckpointError",
    "Checkpointer",
    "LoadedNetwork",
    "Payload",
    "load_network",
    "write_compact",
]

# 2 added beta_scale (see the module docstring).
_FORMAT_VERSION = 2
# Items of a step directory, and the entries of the `state` item's tree.
_STATE = "state"
_META = "meta"
_TRAIN_STATE = "train_state"
_RNG = "rng"
_SELFPLAY = "selfplay"
_EMA = "ema"
_OPT_STATE = "opt_state"
# The float dtypes a compact leg may store its weights in.
COMPACT_DTYPES = ("float32", "bfloat16")
_REQUIRED_META = (
    "format_version",
    "generation",
    "board_size",
    "blocks",
    "filters",
    "value_head",
    "replay_dir",
    "rng_impl",
    "extra",
)


# Orbax warns about every item of a checkpoint that a restore does not ask for. saijax always restores items
# selectively (the metadata alone, then the state alone), so on every resume that warning named an item that was
# skipped on purpose; it is dropped, and orbax's other warnings are kept.
_SKIPPED_ITEM_WARNING = "was found in the checkpoint, but could not be restored"


class _QuietOrbax(logging.Filter):
    """Drops orbax's records below WARNING (it logs through absl), and its
    warning about a checkpoint item that a selective restore skipped."""

    def filter(self, record: logging.LogRecord) -> bool:
        path = record.pathname.replace(os.sep, "/")
        if "/orbax/" not in path:
            return True
        if record.levelno >= logging.WARNING:
            return _SKIPPED_ITEM_WARNING not in record.getMessage()
        return False


def _quiet_orbax_logging() -> None:
    for name in ("absl", "orbax"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _QuietOrbax) for f in logger.filters):
            logger.addFilter(_QuietOrbax())


_quiet_orbax_logging()


class CheckpointError(ValueError):
    """A checkpoint is unreadable, corrupt, or does not fit the run."""


def _check_layout(directory: str) -> None:
    """Refuses a `checkpoints` directory that holds one checkpoint's files
    directly instead of in a generation's step directory.

    `cp -r <run>/checkpoints/127 <leg>/checkpoints` onto a missing
    `<leg>/checkpoints` makes this; orbax would see no checkpoint in it and
    the run would silently start again from generation 0.
    """
    if not os.path.isdir(directory):
        return
    loose = sorted({_STATE, _META, "_CHECKPOINT_METADATA"} & set(os.listdir(directory)))
    if loose:
        raise CheckpointError(
            f"{directory} holds a checkpoint's files ({', '.join(loose)}) directly; each checkpoint belongs in "
            f"its generation's directory, {os.path.join(directory, '<generation>')}/ (move them into one, e.g. "
            "the last generation of metrics.jsonl)"
        )


@dataclasses.dataclass(frozen=True)
class Payload:
    """What a checkpoint restores.

    Attributes:
        generation: the last completed generation.
        state: the saved TrainState (shardings from the restore template).
        selfplay_variables: a gated run's promoted net (`{'params',
            'batch_stats'}`, shardings as the state's), or None.
        ema: the weight average (`{'params', 'batch_stats'}`, shardings as
            the state's) of a run with `training.ema_decay` > 0, or None.
            `state` is the live TrainState either way;
            `training.start_ema(state, ema)` joins them.
        rng_key: the run's PRNG key (a typed key if one was saved).
        spec: the network of `state` (format 1: the default beta_scale).
        replay_dir: where the replay window's files are.
        extra: the caller's extra JSON fields.
        directory: the checkpoint's step directory.
        optimizer_state: False for a compact leg, whose state's `opt_state`
            is None (`training.restart_optimizer` starts a fresh one).
        weights_dtype: the dtype a compact leg's weights were stored in
            (restored in the template's dtypes either way).
    """

    generation: int
    state: Any
    rng_key: jax.Array
    spec: networks.NetworkSpec
    selfplay_variables: Any
    replay_dir: str
    extra: dict[str, Any]
    directory: str
    ema: Any = None
    optimizer_state: bool = True
    weights_dtype: str = "float32"


@dataclasses.dataclass(frozen=True)
class LoadedNetwork:
    """One checkpoint's network, ready for inference (see `load_network`).

    Attributes:
        spec: the network (`spec.build()` is the flax module).
        variables: `{'params', 'batch_stats'}` on the default device.
        generation: the checkpoint's generation.
        directory: its step directory.
        metadata: its metadata (as `Checkpointer.read_metadata` returns it,
            the caller's `extra` included).
    """

    spec: networks.NetworkSpec
    variables: dict[str, Any]
    generation: int
    directory: str
    metadata: dict[str, Any]


def _corrupt(step_dir: str, what: str, cause: Exception, hint: str = "") -> CheckpointError:
    """A one-line CheckpointError naming the step directory and the cause."""
    reason = " ".join(str(cause).split())
    reason = reason.split(" See full TensorStore details")[0]
    if len(reason) > 300:
        reason = reason[:300] + "..."
    error = CheckpointError(
        f"checkpoint {step_dir} is corrupt or incompatible: {what} ({type(cause).__name__}: {reason}).{hint}"
    )
    error.__cause__ = cause
    return error


def _checked_metadata(meta: Any, step_dir: str) -> dict[str, Any]:
    """Validates a checkpoint's metadata, reading format 1 as format 2 with
    `beta_scale` None (the default)."""
    if not isinstance(meta, dict) or any(k not in meta for k in _REQUIRED_META):
        raise CheckpointError(f"checkpoint {step_dir} has incomplete metadata: {meta!r}")
    version = meta["format_version"]
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= _FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {step_dir} has metadata format {version!r}; this saijax reads formats 1..{_FORMAT_VERSION}"
        )
    meta = dict(meta)
    meta.setdefault("selfplay_net", False)
    meta.setdefault("ema_net", False)
    meta.setdefault("optimizer_state", True)
    if version == 1:
        meta.setdefault("beta_scale", None)
    elif "beta_scale" not in meta:
        raise CheckpointError(f"checkpoint {step_dir} has incomplete metadata: {meta!r}")
    try:
        networks.NetworkSpec.from_dict(meta)
    except (TypeError, ValueError) as e:
        raise _corrupt(step_dir, "its metadata describes no valid network", e) from e
    return meta


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

    def __init__(self, workdir: str | os.PathLike, *, max_to_keep: int = 3, keep_every: int = 0):
        """Opens (creating if needed) `<workdir>/checkpoints`.

        Args:
            workdir: the run's working directory; never deleted.
            max_to_keep: how many recent generations to keep.
            keep_every: also keep every generation divisible by this (0: none).
        """
        self.directory = os.path.abspath(os.path.join(os.fspath(workdir), "checkpoints"))
        _check_layout(self.directory)
        options = ocp.CheckpointManagerOptions(
            max_to_keep=max_to_keep,
            keep_period=int(keep_every) or None,
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

        `networks.NetworkSpec.from_dict` reads its network. A format-1
        checkpoint's `beta_scale` reads as None: it was not recorded (see
        the module docstring).

        Raises:
            FileNotFoundError: if there is no such checkpoint.
            CheckpointError: naming the directory, if it is unreadable.
        """
        if generation is None:
            generation = self.latest_generation()
            if generation is None:
                raise FileNotFoundError(f"no checkpoint in {self.directory}")
        try:
            meta = self._manager.restore(generation, args=ocp.args.Composite(**{_META: ocp.args.JsonRestore()}))[_META]
        except FileNotFoundError:
            raise
        except Exception as e:  # pylint: disable=broad-except
            raise self._error(generation, "its metadata is unreadable", e) from e
        return _checked_metadata(meta, self.step_directory(generation))

    # Save and restore.

    def save(
        self,
        generation: int,
        *,
        state: Any,
        rng_key: jax.Array,
        network: networks.NetworkSpec,
        replay_dir: str | os.PathLike,
        extra: dict[str, Any] | None = None,
        selfplay_variables: Any | None = None,
    ) -> str:
        """Saves a finished generation, atomically; returns its directory.

        Args:
            generation: the generation just completed (the step number).
            state: the TrainState (any pytree of arrays). An
                `training.EmaTrainState`'s average is stored apart, under
                `ema`, and its live state as a plain TrainState.
            rng_key: the run's PRNG key after this generation.
            network: the spec of the network `state` belongs to.
            replay_dir: the replay buffer's directory.
            extra: JSON-able extra fields (e.g. metrics) kept in the
                metadata.
            selfplay_variables: a gated run's promoted net (`{'params',
                'batch_stats'}`), when it differs from `state`'s.

        Raises:
            TypeError: if `network` is not a `networks.NetworkSpec`.
        """
        if not isinstance(network, networks.NetworkSpec):
            raise TypeError(f"network must be a networks.NetworkSpec (e.g. net.spec), got {type(network).__name__}")
        data, impl = _key_to_data(rng_key)
        ema = getattr(state, _EMA, None)
        if ema is not None:
            state = state.live()
        meta = {
            "format_version": _FORMAT_VERSION,
            "generation": int(generation),
            **network.to_dict(),
            "replay_dir": os.path.abspath(os.fspath(replay_dir)),
            "rng_impl": impl,
            "selfplay_net": selfplay_variables is not None,
            **({"ema_net": True} if ema is not None else {}),
            "extra": dict(extra or {}),
        }
        tree = {_TRAIN_STATE: state, _RNG: data}
        if selfplay_variables is not None:
            tree[_SELFPLAY] = selfplay_variables
        if ema is not None:
            tree[_EMA] = ema
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
                a function from the checkpoint's metadata dict (as
                `read_metadata` returns it) to one. Leaves without a sharding
                are restored replicated over all devices. A stored weight
                average is restored into `Payload.ema` whatever the template
                (an `EmaTrainState` template is read as its live part).
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
        if hasattr(state_template, "live"):
            state_template = state_template.live()
        rng_shape = np.shape(
            _key_to_data(jax.random.key(0, impl=meta["rng_impl"]) if meta["rng_impl"] else jax.random.PRNGKey(0))[0]
        )
        compact = not meta["optimizer_state"]
        trained = state_template
        if compact:  # a compact leg: no optimizer state stored
            trained = {"step": state_template.step, "params": state_template.params}
            trained["batch_stats"] = state_template.batch_stats
        wanted = {_TRAIN_STATE: trained, _RNG: jax.ShapeDtypeStruct(rng_shape, np.uint32)}
        if meta["selfplay_net"]:
            wanted[_SELFPLAY] = {"params": state_template.params, "batch_stats": state_template.batch_stats}
        if meta["ema_net"]:
            wanted[_EMA] = {"params": state_template.params, "batch_stats": state_template.batch_stats}
        target = _abstract(wanted)
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
        state = restored[_TRAIN_STATE]
        if compact:
            state = state_template.replace(**state, opt_state=None)
        return Payload(
            generation=int(meta["generation"]),
            state=state,
            rng_key=_data_to_key(np.asarray(restored[_RNG]), meta["rng_impl"]),
            spec=networks.NetworkSpec.from_dict(meta),
            selfplay_variables=restored.get(_SELFPLAY),
            replay_dir=str(meta["replay_dir"]),
            extra=dict(meta["extra"]),
            directory=directory,
            ema=restored.get(_EMA),
            optimizer_state=not compact,
            weights_dtype=str(meta.get("weights_dtype", "float32")),
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
        return _corrupt(directory, what, cause, hint)


def kept_generations(workdir: str | os.PathLike) -> list[int]:
    """The generations with a finished checkpoint in a run's workdir (``<workdir>/checkpoints/<g>/``), oldest first.

    Raises:
      FileNotFoundError: the workdir has no checkpoints directory.
    """
    directory = os.path.join(os.fspath(workdir), "checkpoints")
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{workdir} has no checkpoints directory")
    return sorted(int(d) for d in os.listdir(directory) if d.isdecimal() and os.path.isdir(os.path.join(directory, d)))


def load_network(path: str | os.PathLike) -> LoadedNetwork:
    """Reads one checkpoint's network for play, read-only.

    `Checkpointer` opens its directory for writing and removes unfinished
    temporary directories when it starts, which would delete the save in
    progress of a training run that is still going; an engine watching a
    live run must never do that. This opens its own read-only orbax manager
    and restores only `params` and `batch_stats` (a partial restore: the
    optimizer state, whose structure depends on the training config, is
    never read).

    Args:
        path: a run's workdir, its `checkpoints` directory, or one
            generation's step directory (`<workdir>/checkpoints/12`).
            Without a step directory the newest finished generation is used.

    Returns:
        The LoadedNetwork. A format-1 checkpoint's spec has the default
        beta_scale (see the module docstring).

    Raises:
        FileNotFoundError: naming the path, if it does not exist or holds no
            finished checkpoint (or not the requested generation).
        CheckpointError: naming the step directory, if the checkpoint is
            corrupt or its arrays do not fit its metadata.
    """
    directory, generation = _locate(os.fspath(path))
    with _quiet_absl():
        manager = _read_only_manager(directory)
        try:
            generation, step_dir, meta = _read_only_metadata(manager, directory, generation)
            spec = networks.NetworkSpec.from_dict(meta)
            item = _SELFPLAY if meta["selfplay_net"] else _EMA if meta["ema_net"] else _TRAIN_STATE
            variables = _restore_variables(manager, generation, spec, step_dir, item=item)
        finally:
            manager.close()
    return LoadedNetwork(
        spec=spec, variables=variables, generation=int(meta["generation"]), directory=step_dir, metadata=meta
    )


def _read_only_manager(directory: str) -> ocp.CheckpointManager:
    """A read-only orbax manager of a `checkpoints` directory (it never
    removes a live run's save in progress)."""
    try:
        return ocp.CheckpointManager(
            directory,
            options=ocp.CheckpointManagerOptions(read_only=True, create=False),
            item_handlers={_STATE: ocp.PyTreeCheckpointHandler(), _META: ocp.JsonCheckpointHandler()},
        )
    except Exception as e:  # pylint: disable=broad-except
        raise _corrupt(directory, "the checkpoint directory cannot be opened", e) from e


def _read_only_metadata(
    manager: ocp.CheckpointManager, directory: str, generation: int | None
) -> tuple[int, str, dict[str, Any]]:
    """(generation, step directory, checked metadata) of one finished
    checkpoint (None: the newest)."""
    steps = sorted(manager.all_steps())
    if generation is None:
        if not steps:
            raise FileNotFoundError(f"no finished checkpoint in {directory}")
        generation = steps[-1]
    elif generation not in steps:
        raise FileNotFoundError(f"no finished checkpoint for generation {generation} in {directory} (found: {steps})")
    step_dir = os.path.join(directory, str(generation))
    try:
        meta = manager.restore(generation, args=ocp.args.Composite(**{_META: ocp.args.JsonRestore()}))[_META]
    except Exception as e:  # pylint: disable=broad-except
        raise _corrupt(step_dir, "its metadata is unreadable", e) from e
    return generation, step_dir, _checked_metadata(meta, step_dir)


def write_compact(source: str | os.PathLike, leg_dir: str | os.PathLike, *, weights_dtype: str = "float32") -> str:
    """Writes one checkpoint as a compact leg's: without the optimizer's
    state, its weights in `weights_dtype` (see the module docstring).

    The source is read read-only (a live run's save in progress is left
    alone). Resuming from the copy restarts the optimizer (Adam's moments,
    SGD's momentum) from zero; the step, and with it the learning-rate
    schedule, the PRNG key, the weight average and a gated run's promoted
    net are kept.

    Args:
        source: a workdir, its `checkpoints` directory, or one generation's
            step directory (default: the newest finished generation).
        leg_dir: the leg's folder; the checkpoint goes to
            `<leg_dir>/checkpoints/<generation>/`, which must hold no
            checkpoint yet.
        weights_dtype: one of `COMPACT_DTYPES`: "float32" keeps the weights
            exactly; "bfloat16" halves them again (each weight rounded to 8
            significant bits).

    Returns:
        The new step directory.

    Raises:
        ValueError: for another `weights_dtype`.
        FileNotFoundError: naming the path, if there is no checkpoint there.
        FileExistsError: if `leg_dir` already holds a checkpoint.
        CheckpointError: naming the step directory, if the source is
            corrupt.
    """
    if weights_dtype not in COMPACT_DTYPES:
        raise ValueError(f"weights_dtype must be one of {COMPACT_DTYPES}, got {weights_dtype!r}")
    directory, generation = _locate(os.fspath(source))
    with _quiet_absl():
        manager = _read_only_manager(directory)
        try:
            generation, step_dir, meta = _read_only_metadata(manager, directory, generation)
            try:
                stored = manager.item_metadata(generation)[_STATE]
                stored = getattr(stored, "tree", stored)
                restore_args = jax.tree_util.tree_map(lambda _: ocp.RestoreArgs(restore_type=np.ndarray), stored)
                tree = manager.restore(
                    generation,
                    args=ocp.args.Composite(**{_STATE: ocp.args.PyTreeRestore(restore_args=restore_args)}),
                )[_STATE]
                trained = dict(tree[_TRAIN_STATE])
                for name in ("step", "params", "batch_stats"):
                    if name not in trained:
                        raise ValueError(f"{_TRAIN_STATE}/{name} is missing")
            except Exception as e:  # pylint: disable=broad-except
                raise _corrupt(step_dir, "its arrays are unreadable", e) from e
        finally:
            manager.close()
    trained.pop(_OPT_STATE, None)
    tree = {**tree, _TRAIN_STATE: trained}
    if weights_dtype != "float32":
        dtype = jax.numpy.dtype(weights_dtype)
        for name in (_TRAIN_STATE, _EMA, _SELFPLAY):
            if name in tree:
                tree[name] = jax.tree_util.tree_map(
                    lambda x: x.astype(dtype) if np.issubdtype(x.dtype, np.floating) else x, tree[name]
                )
    meta = {**meta, "optimizer_state": False, "weights_dtype": weights_dtype}
    leg_checkpoints = os.path.join(os.path.abspath(os.fspath(leg_dir)), "checkpoints")
    if os.path.isdir(leg_checkpoints) and os.listdir(leg_checkpoints):
        raise FileExistsError(f"{leg_checkpoints} is not empty: a compact leg goes into a new folder")
    with Checkpointer(leg_dir, max_to_keep=1) as ckpt:
        ckpt._manager.save(  # pylint: disable=protected-access
            generation,
            args=ocp.args.Composite(**{_STATE: ocp.args.StandardSave(tree), _META: ocp.args.JsonSave(meta)}),
            force=True,
        )
        ckpt._manager.wait_until_finished()  # pylint: disable=protected-access
        return ckpt.step_directory(generation)


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


def _restore_variables(
    manager: ocp.CheckpointManager, generation: int, spec: networks.NetworkSpec, step_dir: str, *, item: str
) -> dict[str, Any]:
    """`{'params', 'batch_stats'}` of one step's `item` (the trained, promoted
    or averaged net), on the default device."""
    shapes = jax.eval_shape(functools.partial(networks.init_network, spec.build()), jax.random.PRNGKey(0))
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    template = {item: jax.tree_util.tree_map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=device), shapes)}
    try:
        restored = manager.restore(
            generation,
            args=ocp.args.Composite(
                **{
                    _STATE: ocp.args.PyTreeRestore(
                        item=template,
                        restore_args=ocp.checkpoint_utils.construct_restore_args(template),
                        partial_restore=True,
                    )
                }
            ),
        )[_STATE]
        stored = restored[item]
        variables = {"params": stored["params"], "batch_stats": stored["batch_stats"]}
        # A shape mismatch between metadata and arrays must fail here, not
        # at the first search.
        for want, got in zip(jax.tree_util.tree_leaves(shapes), jax.tree_util.tree_leaves(variables)):
            if tuple(want.shape) != tuple(got.shape):
                raise ValueError(f"array of shape {tuple(got.shape)} where {tuple(want.shape)} is expected")
    except Exception as e:  # pylint: disable=broad-except
        raise _corrupt(step_dir, "its network arrays are unreadable", e) from e
    return variables
