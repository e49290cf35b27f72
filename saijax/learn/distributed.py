"""One run over several processes (hosts): joining, and what they share (docs/design.md §9).

saijax runs multi-controller JAX: the same program on every host, one
process per host, each driving its local devices. `initialize` joins them
through `jax.distributed`; the rest of this module is what the pipeline
needs to keep them in step. On one process every function here is the
identity or a no-op, so a single-process run does exactly what it did
before.

How the pipeline splits the work (`saijax.learn.pipeline`):

* self-play runs on each process's own devices (`local_mesh`), with
  process-specific keys (`process_key`) and its share of the games
  (`process_share`); no cross-host traffic during a generation's games;
* the generation's rows and games are then gathered (`allgather`), process 0
  writes the one replay file and the SGFs, and every process reads the
  window from the shared workdir after a `barrier`;
* training is data-parallel over every device of every process: each process
  samples its slice of the global batch, which `training.shard_batch`
  assembles with `jax.make_array_from_process_local_data`;
* every process takes part in orbax's one save per generation, which writes
  each replicated array once (its slices spread over the processes) and
  which process 0 commits; metrics, SGFs, logs and the summary come from
  process 0 only.

A process that dies takes the run down: a collective waiting on it fails at
once (gloo on CPU, NCCL on GPU), and otherwise the coordination service
notices the missing heartbeats within ``heartbeat_timeout`` seconds and ends
every other process with "Terminating process because the JAX distributed
service detected fatal errors ... another task died".
"""

from __future__ import annotations

import os
import pickle
import re
from typing import Any

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from saijax.learn import training

__all__ = [
    "allgather",
    "agree",
    "barrier",
    "initialize",
    "is_primary",
    "local_mesh",
    "process_key",
    "process_share",
    "to_local",
]

# Read when the matching argument (flag) is not given. JAX itself reads
# JAX_COORDINATOR_ADDRESS, and detects Cloud TPU, Slurm and Open MPI
# clusters on its own; the process count and index are saijax's.
COORDINATOR_ENV = "JAX_COORDINATOR_ADDRESS"
NUM_PROCESSES_ENV = "JAX_NUM_PROCESSES"
PROCESS_ID_ENV = "JAX_PROCESS_ID"

_ADDRESS_RE = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d+)$")


def _env_int(name: str, flag: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{flag}: environment variable {name}={value!r} is not an integer") from None


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    *,
    heartbeat_timeout: int = 100,
    initialization_timeout: int = 300,
) -> None:
    """Joins this process to a multi-process run (`jax.distributed.initialize`).

    Must be called before anything touches a device. A second call is a
    no-op. Unset arguments are read from the environment
    (``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``);
    what is still unset, JAX finds itself on a Cloud TPU pod slice, Slurm or
    Open MPI. On CPU the processes talk through gloo.

    Args:
        coordinator_address: ``host:port`` of process 0, which serves the
            coordination service there (``--coordinator_address``).
        num_processes: how many processes take part (``--num_processes``).
        process_id: this process's index, 0 ... num_processes − 1
            (``--process_id``).
        heartbeat_timeout: seconds after which a silent process counts as
            dead and the others stop (``--heartbeat_timeout``).
        initialization_timeout: seconds to wait for every process to join.

    Raises:
        ValueError: naming the flag, for a malformed or inconsistent value,
            or when JAX was already in use before this call.
    """
    if jax.distributed.is_initialized():
        return
    if coordinator_address is None:
        coordinator_address = os.environ.get(COORDINATOR_ENV) or None
    if num_processes is None:
        num_processes = _env_int(NUM_PROCESSES_ENV, "--num_processes")
    if process_id is None:
        process_id = _env_int(PROCESS_ID_ENV, "--process_id")
    if coordinator_address is not None and not _ADDRESS_RE.match(coordinator_address):
        raise ValueError(f"--coordinator_address must be host:port (e.g. 10.0.0.1:1234), got {coordinator_address!r}")
    if num_processes is not None and num_processes < 1:
        raise ValueError(f"--num_processes must be >= 1, got {num_processes}")
    if process_id is not None and process_id < 0:
        raise ValueError(f"--process_id must be >= 0, got {process_id}")
    if process_id is not None and num_processes is not None and process_id >= num_processes:
        raise ValueError(
            f"--process_id must be in 0..{num_processes - 1} (--num_processes={num_processes}), got {process_id}"
        )
    for name, value in (("--heartbeat_timeout", heartbeat_timeout), ("initialization_timeout", initialization_timeout)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1 second, got {value}")

    # Cross-process collectives on CPU (the tests' fake devices); GPUs and
    # TPUs use NCCL / ICI whatever this says.
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize(
            coordinator_address,
            num_processes,
            process_id,
            initialization_timeout=int(initialization_timeout),
            heartbeat_timeout_seconds=int(heartbeat_timeout),
        )
    except (RuntimeError, ValueError) as e:
        # JAX already in use, a value neither given nor detected, or the
        # coordinator not reached within initialization_timeout.
        raise ValueError(
            f"jax.distributed.initialize failed: {' '.join(str(e).split())} (a multi-process run needs "
            "--coordinator_address, --num_processes and --process_id, or JAX_COORDINATOR_ADDRESS, "
            "JAX_NUM_PROCESSES and JAX_PROCESS_ID, unless JAX detects them on a Cloud TPU, Slurm or Open MPI)"
        ) from None


def is_primary() -> bool:
    """Whether this is process 0, the one that writes files and logs."""
    return jax.process_index() == 0


def local_mesh() -> Mesh:
    """A 1-D 'batch' mesh over this process's devices (self-play's mesh)."""
    return training.make_mesh(jax.local_devices())


def to_local(tree: Any, mesh: Mesh) -> Any:
    """A replicated pytree (e.g. the network variables) replicated over `mesh`.

    With one process the tree is returned as it is. With several, the
    training state lives replicated over the global mesh, which a jit over a
    process's own devices cannot take; every process holds a full copy, and
    that copy is placed on `mesh`.
    """
    if jax.process_count() == 1:
        return tree
    sharding = NamedSharding(mesh, PartitionSpec())

    def one(x):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            if not x.is_fully_replicated:
                raise ValueError(f"to_local needs replicated arrays, got one sharded as {x.sharding}")
            x = x.addressable_data(0)
        return jax.device_put(x, sharding)

    return jax.tree_util.tree_map(one, tree)


def process_key(key: jax.Array) -> jax.Array:
    """`key` made specific to this process (unchanged with one process)."""
    if jax.process_count() == 1:
        return key
    return jax.random.fold_in(key, jax.process_index())


def process_share(total: int) -> int:
    """This process's share of `total` items: the shares differ by at most 1 and sum to `total`."""
    count, index = jax.process_count(), jax.process_index()
    return total // count + (1 if index < total % count else 0)


def _bucket(size: int) -> int:
    # Payload sizes rounded up to a power of two: one compile per bucket.
    return max(1024, 1 << (max(size, 1) - 1).bit_length())


def allgather(value: Any) -> list[Any]:
    """Every process's `value` (any picklable object), in process order.

    A collective: every process must call it, in the same order. The value
    travels pickled (the processes of one run trust each other), at most
    2 GiB. With one process it returns ``[value]`` without copying.
    """
    if jax.process_count() == 1:
        return [value]
    payload = np.frombuffer(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), np.uint8)
    sizes = np.asarray(multihost_utils.process_allgather(np.asarray([payload.size], np.int32))).reshape(-1)
    padded = np.zeros(_bucket(int(sizes.max())), np.uint8)
    padded[: payload.size] = payload
    gathered = np.asarray(multihost_utils.process_allgather(padded))
    return [pickle.loads(gathered[i, : int(size)].tobytes()) for i, size in enumerate(sizes)]


def agree(value: Any) -> Any:
    """Process 0's `value`, on every process: for decisions that must not
    diverge (a collective; the value itself with one process)."""
    if jax.process_count() == 1:
        return value
    return allgather(value)[0]


def barrier(name: str) -> None:
    """Waits until every process reaches the barrier `name` (no-op with one process)."""
    if jax.process_count() > 1:
        multihost_utils.sync_global_devices(name)
