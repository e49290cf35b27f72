"""The training step, its optimizer and sharding, and network growth (§7, §9).

Pieces for the generation loop in `saijax.train`:

* `TrainState`: step, params, batch stats and optimizer state (the flax
  module itself stays outside, static). With `training.ema_decay` > 0 the
  state is an `EmaTrainState`, which also carries `ema`, the moving average
  of `{'params', 'batch_stats'}` that plays (`playing_variables`); with 0 it
  is the plain TrainState, so a run and its checkpoints are as before.
* `make_optimizer` / `learning_rate_schedule`: SGD with Nesterov momentum
  (SAI) or Adam. The learning rate is an injected hyperparameter that the
  train step sets from the schedule at the *global* step `TrainState.step`,
  so the schedule (keyed by generation in the config) carries on across
  network growth, where a fresh optimizer state starts. L2 is in the loss
  (`losses.total_loss`), not decoupled weight decay.
* `make_train_step`: one jitted, donating step on a `Mesh` with a 'batch'
  axis: the batch is sharded along it, the state replicated. Batch norm's
  statistics are computed over the whole (global) batch, so results do not
  depend on the number of devices beyond float rounding.
* `train_on_window`: runs S steps drawing batches from a sampler, raising
  `FloatingPointError` on a non-finite metric, naming the step and metric.
* `network_spec`: the `networks.NetworkSpec` the config asks for at a
  generation; `grow_network` initialises a newly built net and trains it on
  the current window before it takes over (`training.growth = "retrain"`),
  `widen_network` makes the bigger net start as the old one, optimizer
  state included (`"widen"`, `saijax.core.widen`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import flax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from saijax.core import networks, widen
from saijax.learn import config as config_lib
from saijax.learn import losses

__all__ = [
    "EmaTrainState",
    "GrownNetwork",
    "TrainState",
    "abstract_train_state",
    "can_fuse",
    "create_train_state",
    "grow_network",
    "learning_rate_schedule",
    "make_mesh",
    "make_optimizer",
    "make_train_step",
    "network_spec",
    "replicate",
    "samples_per_new_row",
    "set_learning_rate",
    "restart_optimizer",
    "start_ema",
    "shard_batch",
    "train_on_window",
    "widen_network",
]

BATCH_AXIS = "batch"


@flax.struct.dataclass
class TrainState:
    """Everything a training step changes. The module is kept outside."""

    step: jax.Array  # [] int32, global training step (survives growth)
    params: Any  # flax 'params' collection
    batch_stats: Any  # flax 'batch_stats' collection (BN running averages)
    opt_state: Any  # optax state of `make_optimizer`

    @property
    def variables(self) -> dict[str, Any]:
        """`{'params', 'batch_stats'}`, as `networks.apply_network` takes."""
        return {"params": self.params, "batch_stats": self.batch_stats}

    @property
    def playing_variables(self) -> dict[str, Any]:
        """The net that plays: the live `variables` (the average with EMA)."""
        return self.variables

    def live(self) -> TrainState:
        """The state without any weight average (itself here)."""
        return self


@flax.struct.dataclass
class EmaTrainState(TrainState):
    """A TrainState with an exponential moving average of the weights
    (`training.ema_decay` > 0, docs/design.md §7).

    `ema` is `{'params', 'batch_stats'}`, replicated like `params`; every
    train step sets ema ← d·ema + (1 − d)·(new params, new batch stats).
    The batch-norm running stats are averaged too, so the averaged net's
    normalisation follows the averaged weights' time scale. Training goes
    on from the live `params`; `playing_variables` is the average.
    """

    ema: Any = None

    @property
    def playing_variables(self) -> dict[str, Any]:
        return self.ema

    def live(self) -> TrainState:
        return TrainState(step=self.step, params=self.params, batch_stats=self.batch_stats, opt_state=self.opt_state)


# ---------------------------------------------------------------------------
# Optimizer and learning rate.


def learning_rate_schedule(
    training_config, steps_per_generation: int | None = None
) -> Callable[[jax.Array], jax.Array]:
    """The learning rate as a function of the global training step.

    The config's boundaries are generations; a step s belongs to generation
    s / steps_per_generation.

    * 'constant': `learning_rate`.
    * 'piecewise': `learning_rate` before generation `lr_boundaries[0]`, then
      `lr_values[i]` from generation `lr_boundaries[i]` on.
    * 'cosine': cosine decay from `learning_rate` at step 0 to `lr_values[0]`
      at generation `lr_boundaries[0]`, constant after.

    Args:
        training_config: the config's `training` section.
        steps_per_generation: S; None reads
            `training_config.steps_per_generation`.

    Returns:
        A jittable `step -> float32 learning rate`.
    """
    steps = int(steps_per_generation or training_config.steps_per_generation)
    base = float(training_config.learning_rate)
    kind = training_config.lr_schedule
    boundaries = [int(b) * steps for b in training_config.lr_boundaries]
    values = [float(v) for v in training_config.lr_values]

    if kind == "constant":
        return lambda step: jnp.full((), base, jnp.float32)
    if kind == "piecewise":

        def piecewise(step):
            lr = jnp.full((), base, jnp.float32)
            for boundary, value in zip(boundaries, values):
                lr = jnp.where(step >= boundary, value, lr)
            return lr

        return piecewise
    if kind == "cosine":
        end, final = boundaries[0], values[0]

        def cosine(step):
            frac = jnp.clip(jnp.asarray(step, jnp.float32) / end, 0.0, 1.0)
            return (final + (base - final) * 0.5 * (1.0 + jnp.cos(math.pi * frac))).astype(jnp.float32)

        return cosine
    raise ValueError(f"training.lr_schedule must be one of {config_lib.LR_SCHEDULES}, got {kind!r}")


def make_optimizer(training_config, steps_per_generation: int | None = None) -> optax.GradientTransformation:
    """SGD + (Nesterov) momentum or Adam, with an injected learning rate.

    The learning rate lives in `opt_state.hyperparams['learning_rate']`;
    `make_train_step` overwrites it before every update with
    `learning_rate_schedule(training_config, steps_per_generation)` at the
    global step. Used on its own, the transform runs at the schedule's
    step-0 rate.

    Args:
        training_config: the config's `training` section.
        steps_per_generation: S; None reads it from `training_config`.

    Returns:
        An optax transform.
    """
    initial = float(learning_rate_schedule(training_config, steps_per_generation)(0))
    kind = training_config.optimizer
    if kind == "sgd":
        momentum = float(training_config.momentum)
        return optax.inject_hyperparams(optax.sgd)(
            learning_rate=initial, momentum=momentum or None, nesterov=bool(training_config.nesterov) and momentum > 0
        )
    if kind == "adam":
        return optax.inject_hyperparams(optax.adam)(learning_rate=initial)
    raise ValueError(f"training.optimizer must be one of {config_lib.OPTIMIZERS}, got {kind!r}")


# ---------------------------------------------------------------------------
# Sharding.


def make_mesh(devices: list[jax.Device] | None = None) -> Mesh:
    """A 1-D mesh with axis 'batch' over `devices` (default: all devices,
    which on one host are the local devices)."""
    devices = jax.devices() if devices is None else list(devices)
    return Mesh(np.asarray(devices), (BATCH_AXIS,))


def _replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec())


def _batch_sharded(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec(BATCH_AXIS))


def replicate(tree: Any, mesh: Mesh) -> Any:
    """Places a pytree (e.g. a TrainState) replicated on every mesh device."""
    return jax.device_put(tree, _replicated(mesh))


def shard_batch(batch: Mapping[str, Any], mesh: Mesh) -> dict[str, jax.Array]:
    """Shards every array of a batch along its leading axis over 'batch'.

    On one process this is a `device_put` (a no-op for arrays already placed
    so). With several processes each passes its local share, and the global
    batch is assembled from them.

    Raises:
        ValueError: if the batch size is not divisible by the device count.
    """
    sharding = _batch_sharded(mesh)
    devices = mesh.devices.size
    out = {}
    for name, value in batch.items():
        size = np.shape(value)[0]
        if jax.process_count() > 1:
            out[name] = jax.make_array_from_process_local_data(sharding, value)
            continue
        if size % devices:
            raise ValueError(f"batch[{name!r}] has {size} rows, not divisible by the {devices} devices of the mesh")
        out[name] = jax.device_put(value, sharding)
    return out


# ---------------------------------------------------------------------------
# State.


def create_train_state(
    net: networks.SaiNet,
    optimizer: optax.GradientTransformation,
    key: jax.Array,
    *,
    step: int = 0,
    mesh: Mesh | None = None,
    variables: dict[str, Any] | None = None,
    ema: bool = False,
) -> TrainState:
    """Initialises a network and its optimizer.

    Args:
        net: the module.
        optimizer: from `make_optimizer`.
        key: PRNG key, consumed by the initialisation.
        step: global step to start from (a grown net continues the old
            net's count, and with it the learning-rate schedule).
        mesh: where to replicate the state; None means `make_mesh()`.
        variables: start from these `{'params', 'batch_stats'}` (e.g. a zoo
            net, `config.init_checkpoint`) instead of a fresh initialisation;
            the optimizer state starts fresh either way.
        ema: return an `EmaTrainState` whose average starts at the initial
            weights (`training.ema_decay` > 0).

    Returns:
        A TrainState, replicated over the mesh.
    """
    if variables is None:
        variables = networks.init_network(net, key)
    state = TrainState(
        step=jnp.asarray(step, jnp.int32),
        params=variables["params"],
        batch_stats=variables["batch_stats"],
        opt_state=optimizer.init(variables["params"]),
    )
    state = replicate(state, mesh if mesh is not None else make_mesh())
    return start_ema(state) if ema else state


def start_ema(state: TrainState, ema: dict[str, Any] | None = None) -> EmaTrainState:
    """`state` with a weight average: `ema` (`{'params', 'batch_stats'}`, e.g.
    restored from a checkpoint), or by default a copy of the live weights,
    placed like them (a resumed pre-EMA run, a grown net)."""
    live = state.live()
    if ema is None:
        ema = jax.tree_util.tree_map(lambda x: jax.device_put(jnp.copy(x), x.sharding), live.variables)
    return EmaTrainState(
        step=live.step, params=live.params, batch_stats=live.batch_stats, opt_state=live.opt_state, ema=ema
    )


def restart_optimizer(
    state: TrainState, optimizer: optax.GradientTransformation, mesh: Mesh | None = None
) -> TrainState:
    """`state` with a fresh optimizer state (`optimizer.init`: Adam's moments
    and count, SGD's momentum at zero), replicated over the mesh: the resume
    of a compact leg, which does not keep it (`checkpoints.write_compact`).
    The global step, and with it the learning-rate schedule, goes on."""
    opt_state = replicate(optimizer.init(state.params), mesh if mesh is not None else make_mesh())
    return state.replace(opt_state=opt_state)


def samples_per_new_row(steps: int, batch_size: int, new_rows: int) -> float | None:
    """The training reuse ratio of a generation: steps · batch size / the
    rows its self-play wrote (the `train_samples_per_new_row` metric); None
    without new rows. KataGo trains on about 4 samples per generated one."""
    return steps * batch_size / new_rows if new_rows > 0 else None


def abstract_train_state(
    net: networks.SaiNet, optimizer: optax.GradientTransformation, *, mesh: Mesh | None = None
) -> TrainState:
    """The shapes, dtypes and (replicated) shardings of a TrainState, without
    allocating it: the restore target for `checkpoints`."""
    shapes = jax.eval_shape(functools.partial(_unplaced_state, net, optimizer), jax.random.key(0))
    sharding = _replicated(mesh if mesh is not None else make_mesh())
    return jax.tree_util.tree_map(lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding), shapes)


def _unplaced_state(net, optimizer, key) -> TrainState:
    variables = networks.init_network(net, key)
    return TrainState(
        step=jnp.zeros((), jnp.int32),
        params=variables["params"],
        batch_stats=variables["batch_stats"],
        opt_state=optimizer.init(variables["params"]),
    )


# ---------------------------------------------------------------------------
# The step.


def _set_learning_rate(opt_state: Any, learning_rate: jax.Array) -> Any:
    hyperparams = dict(opt_state.hyperparams)
    hyperparams["learning_rate"] = learning_rate.astype(hyperparams["learning_rate"].dtype)
    return opt_state._replace(hyperparams=hyperparams)


def set_learning_rate(state: TrainState, learning_rate: float | jax.Array) -> TrainState:
    """`state` with the optimizer's learning rate set (placed as before), for
    a step built with `schedule_by_generation`."""
    old = state.opt_state.hyperparams["learning_rate"]
    value = jax.device_put(jnp.asarray(learning_rate, old.dtype), old.sharding)
    return state.replace(opt_state=_set_learning_rate(state.opt_state, value))


def make_train_step(
    net: networks.SaiNet,
    board_size: int,
    training_config,
    *,
    mesh: Mesh | None = None,
    optimizer: optax.GradientTransformation | None = None,
    steps_per_generation: int | None = None,
    schedule_by_generation: bool = False,
):
    """Builds the jitted training step.

    With `training.ema_decay` d > 0 the state must be an `EmaTrainState`
    (`create_train_state(..., ema=True)`), and each step also sets
    ema ← d·ema + (1 − d)·(new params, new batch stats), inside the jit.

    Args:
        net: the module (its `value_head` picks the loss).
        board_size: N.
        training_config: the config's `training` section (loss weights,
            optimizer, schedule).
        mesh: the device mesh; None means `make_mesh()`.
        optimizer: the transform the state was created with; None builds
            `make_optimizer(training_config, steps_per_generation)`.
        steps_per_generation: S for the schedule; None reads the config.
        schedule_by_generation: leave the learning rate in the optimizer
            state as it is (the caller sets it per generation with
            `set_learning_rate`, as the pipeline does when
            `training.samples_per_new_row` makes the steps of a generation
            vary) instead of setting it from the schedule at the global step.

    Returns:
        `train_step(state, batch) -> (state, metrics)`. `batch` is the dict
        `ReplayBuffer.sample` returns; it is sharded over the mesh's 'batch'
        axis on the way in (`shard_batch`). The state is donated: don't use
        the old one afterwards. `metrics` are replicated float32 scalars:
        those of `losses.total_loss` plus 'learning_rate' and 'grad_norm'.
        The jitted function itself is `train_step.jitted`.
    """
    mesh = mesh if mesh is not None else make_mesh()
    if optimizer is None:
        optimizer = make_optimizer(training_config, steps_per_generation)
    schedule = learning_rate_schedule(training_config, steps_per_generation)
    value_head = net.value_head
    value_weight = float(training_config.value_weight)
    score_weight = float(training_config.score_weight)
    # Auxiliary losses (0 when the fields are missing, e.g. older configs).
    ownership_weight = float(training_config.get("ownership_weight", 0.0) or 0.0)
    score_aux_weight = float(training_config.get("score_aux_weight", 0.0) or 0.0)
    opponent_policy_weight = float(training_config.get("opponent_policy_weight", 0.0) or 0.0)
    l2_coef = float(training_config.l2)
    grad_clip = float(training_config.get("grad_clip", 0.0) or 0.0)
    ema_decay = float(training_config.get("ema_decay", 0.0) or 0.0)

    def loss_fn(params, batch_stats, batch):
        outputs, new_stats = networks.apply_network(
            net, {"params": params, "batch_stats": batch_stats}, batch["planes"], train=True
        )
        loss, metrics = losses.total_loss(
            outputs,
            batch,
            params,
            value_head=value_head,
            value_weight=value_weight,
            l2_coef=l2_coef,
            score_weight=score_weight,
            board_size=board_size,
            ownership_weight=ownership_weight,
            score_aux_weight=score_aux_weight,
            opponent_policy_weight=opponent_policy_weight,
        )
        return loss, (metrics, new_stats)

    def step_fn(state: TrainState, batch):
        grad_fn = jax.value_and_grad(loss_fn, has_aux=True)
        (_, (metrics, batch_stats)), grads = grad_fn(state.params, state.batch_stats, batch)
        grad_norm = optax.tree.norm(grads)
        if grad_clip > 0:
            # Global-norm clipping: a safety net against the rare huge
            # gradient (e.g. an unbounded score head early in training).
            scale = jnp.minimum(1.0, grad_clip / jnp.maximum(grad_norm, 1e-12))
            grads = jax.tree_util.tree_map(lambda g: g * scale, grads)
        if schedule_by_generation:
            opt_state = state.opt_state
            learning_rate = jnp.asarray(opt_state.hyperparams["learning_rate"], jnp.float32)
        else:
            learning_rate = schedule(state.step)
            opt_state = _set_learning_rate(state.opt_state, learning_rate)
        updates, opt_state = optimizer.update(grads, opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        metrics = dict(metrics, learning_rate=learning_rate, grad_norm=grad_norm)
        new_state = state.replace(step=state.step + 1, params=params, batch_stats=batch_stats, opt_state=opt_state)
        if ema_decay > 0:
            if not isinstance(state, EmaTrainState):
                raise TypeError(
                    "training.ema_decay > 0 needs an EmaTrainState (create_train_state(..., ema=True) or start_ema)"
                )
            live = {"params": params, "batch_stats": batch_stats}
            ema = jax.tree_util.tree_map(lambda e, x: ema_decay * e + (1.0 - ema_decay) * x, state.ema, live)
            new_state = new_state.replace(ema=ema)
        return new_state, metrics

    replicated = _replicated(mesh)
    jitted = jax.jit(
        step_fn,
        in_shardings=(replicated, _batch_sharded(mesh)),
        out_shardings=(replicated, replicated),
        donate_argnums=0,
    )

    @functools.wraps(step_fn)
    def train_step(state: TrainState, batch):
        return jitted(state, shard_batch(batch, mesh))

    blocks: dict[Any, Callable] = {}

    def train_block(state: TrainState, sampler, keys: jax.Array):
        """`len(keys)` steps as one program (a `lax.scan`): step i samples
        its batch on the device with `sampler.pure(*sampler.args(), keys[i])`
        and trains on it, so the host dispatches once for the block. Only
        for one process on a one-device mesh (`can_fuse`). Returns (state,
        metrics), each metric stacked [len(keys)]."""
        fn = blocks.get(sampler.spec)
        if fn is None:
            pure = sampler.pure

            def block_fn(state, args, keys):
                def body(state, key):
                    return step_fn(state, pure(*args, key))

                return jax.lax.scan(body, state, keys)

            fn = blocks[sampler.spec] = jax.jit(block_fn, donate_argnums=0)
        return fn(state, sampler.args(), keys)

    train_step.jitted = jitted
    train_step.mesh = mesh
    train_step.block = train_block
    return train_step


def can_fuse(train_step, sample_batch) -> bool:
    """Whether `train_on_window` can run blocks of steps as one program: a
    sampler that exposes its pure sampling function (`spec`, `pure`,
    `args`, as `replay.Sampler` does), one process (each process of a
    multi-host run samples its own share: `distributed.process_key`), and a
    one-device mesh (the window lives on one device)."""
    mesh = getattr(train_step, "mesh", None)
    return (
        hasattr(train_step, "block")
        and all(hasattr(sample_batch, name) for name in ("spec", "pure", "args"))
        and jax.process_count() == 1
        and mesh is not None
        and mesh.devices.size == 1
    )


# ---------------------------------------------------------------------------
# Loops.


def _first_non_finite(metrics: Mapping[str, Any]) -> tuple[str, float] | None:
    names = sorted(metrics, key=lambda k: (k != "total_loss", k))
    for name in names:
        value = float(np.asarray(metrics[name]))
        if not math.isfinite(value):
            return name, value
    return None


def train_on_window(
    state: TrainState,
    train_step,
    sample_batch: Callable[[jax.Array], Mapping[str, jax.Array]],
    num_steps: int,
    key: jax.Array,
    *,
    log_every: int = 0,
    log_fn: Callable[[int, dict[str, float]], None] | None = None,
    steps_per_call: int = 1,
    on_steps: Callable[[int], None] | None = None,
) -> tuple[TrainState, dict[str, float]]:
    """Runs `num_steps` training steps.

    One call stays in flight: call c is dispatched before call c−1's
    metrics are read back, so the finiteness check costs no device idle
    time. With `steps_per_call` K > 1 and a sampler that `can_fuse`, the
    steps go in blocks of K as one program each (`train_step.block`: the
    batches are sampled on the device inside it), so the host's per-step
    cost (dispatching the sample and the step, reading the metrics back),
    which a small net's step on a GPU does not cover, is paid once a
    block; the steps left over (fewer than K) run one by one. Step i's
    batch is the same either way, so the blocks change only the speed.

    Args:
        state: the TrainState (donated to the first step).
        train_step: from `make_train_step`.
        sample_batch: `key -> batch`, e.g. `buffer.sampler(B, value_head)`
            (a `replay.Sampler`, which can be fused) or any callable.
        num_steps: S.
        key: PRNG key; step i's batch uses `fold_in(key, i)`.
        log_every: call `log_fn` every this many steps (0: never).
        log_fn: `(global_step, metrics) -> None`, with host floats.
        steps_per_call: K, the steps per program (config
            `training.steps_per_call`; 1: one step at a time).
        on_steps: called with the number of steps each time some finish
            dispatching (a progress bar's `update`).

    Returns:
        (state, summary): the new state and each metric's mean over the
        steps.

    Raises:
        FloatingPointError: naming the global step and the metric, when a
            metric (the loss first) is NaN or infinite.
    """
    block = int(steps_per_call)
    if block < 1:
        raise ValueError(f"steps_per_call must be at least 1, got {steps_per_call!r}")
    start = int(np.asarray(jax.device_get(state.step)))
    totals: dict[str, float] = {}
    pending = None

    def check(first, count, metrics):
        host = jax.device_get(metrics)
        for j in range(count):
            index = first + j
            step = {k: (v[j] if count > 1 else v) for k, v in host.items()}
            bad = _first_non_finite(step)
            if bad is not None:
                name, value = bad
                raise FloatingPointError(
                    f"non-finite {name} = {value} at training step {start + index}"
                    f" (step {index + 1} of {num_steps} on this window)"
                )
            for name, value in step.items():
                totals[name] = totals.get(name, 0.0) + float(value)
            if log_fn is not None and log_every and (index + 1) % log_every == 0:
                log_fn(start + index + 1, {k: float(v) for k, v in step.items()})

    fused = block > 1 and num_steps >= block and can_fuse(train_step, sample_batch)
    i = 0
    while i < num_steps:
        if fused and num_steps - i >= block:
            keys = jax.vmap(lambda j: jax.random.fold_in(key, j))(jnp.arange(i, i + block))
            state, metrics = train_step.block(state, sample_batch, keys)
            count = block
        else:
            batch = sample_batch(jax.random.fold_in(key, i))
            state, metrics = train_step(state, batch)
            count = 1
        if on_steps is not None:
            on_steps(count)
        if pending is not None:
            check(*pending)
        pending = (i, count, metrics)
        i += count
    if pending is not None:
        check(*pending)
    summary = {name: total / max(num_steps, 1) for name, total in totals.items()}
    return state, summary


# ---------------------------------------------------------------------------
# Network growth.


def network_spec(config, generation: int) -> networks.NetworkSpec:
    """The network the config asks for at `generation`: the schedule's
    (blocks, filters), and `network.value_head`, `network.beta_scale`
    (0 means the default 10/N²), `network.ownership_head`,
    `network.global_pooling` and `network.opponent_policy_head` (missing:
    False)."""
    blocks, filters = config_lib.network_shape(config, generation)
    return networks.NetworkSpec(
        board_size=config.board_size,
        blocks=blocks,
        filters=filters,
        value_head=config.network.value_head,
        beta_scale=config.network.beta_scale or None,
        ownership_head=bool(config.network.get("ownership_head", False)),
        global_pooling=bool(config.network.get("global_pooling", False)),
        opponent_policy_head=bool(config.network.get("opponent_policy_head", False)),
    )


class GrownNetwork(NamedTuple):
    """A newly built net's state, trained on the window and ready to take over."""

    state: TrainState
    metrics: dict[str, float]  # mean metrics of its catch-up training


def grow_network(
    net: networks.SaiNet,
    optimizer: optax.GradientTransformation,
    train_step,
    *,
    key: jax.Array,
    sample_batch: Callable[[jax.Array], Mapping[str, jax.Array]],
    num_steps: int,
    start_step: int = 0,
    mesh: Mesh | None = None,
    log_every: int = 0,
    log_fn: Callable[[int, dict[str, float]], None] | None = None,
    ema: bool = False,
    learning_rate: float | jax.Array | None = None,
) -> GrownNetwork:
    """Initialises a newly built net and trains it on the window.

    The caller decides when to grow (when `network_spec(config, generation)`
    differs from the current net's) and builds the new net, its optimizer and
    its train step. The new net starts from scratch (fresh initialisation and
    optimizer state) and is trained on the current replay window before it
    replaces the old net, as Leela Zero and SAI did (papers §3.3); only the
    global step carries on.

    Args:
        net: the new module.
        optimizer: its optimizer, from `make_optimizer`.
        train_step: its step, from `make_train_step(net, ..., optimizer=optimizer)`.
        key: PRNG key, consumed (initialisation and batch sampling).
        sample_batch: `key -> batch` over the current window.
        num_steps: catch-up training steps (0: initialise only).
        start_step: global step of the old net, so the learning-rate
            schedule carries on.
        mesh: device mesh; None means `make_mesh()`.
        log_every, log_fn: as in `train_on_window`.
        ema: keep a weight average (`training.ema_decay` > 0). It restarts
            from the new net's weights after its catch-up training, so the
            random initialisation is never averaged into the playing net.
        learning_rate: set this rate in the fresh optimizer state first (a
            step built with `schedule_by_generation`); None leaves it.

    Returns:
        GrownNetwork(state, metrics).
    """
    init_key, train_key = jax.random.split(key)
    state = create_train_state(net, optimizer, init_key, step=start_step, mesh=mesh, ema=ema)
    if learning_rate is not None:
        state = set_learning_rate(state, learning_rate)
    state, metrics = train_on_window(
        state, train_step, sample_batch, num_steps, train_key, log_every=log_every, log_fn=log_fn
    )
    if ema:
        state = start_ema(state)
    return GrownNetwork(state=state, metrics=metrics)


def widen_network(
    state: TrainState,
    old_spec: networks.NetworkSpec,
    net: networks.SaiNet,
    optimizer: optax.GradientTransformation,
    key: jax.Array,
    *,
    mesh: Mesh | None = None,
) -> TrainState:
    """The state of a bigger net that computes what ``state``'s does
    (`saijax.core.widen`): its weights, batch-norm averages, the optimizer's
    moments (zeros in the new entries) and step count carried over, and a
    weight average (`EmaTrainState`) widened the same way.

    Args:
        state: the old net's state.
        old_spec: its architecture.
        net: the bigger module (only blocks and filters may differ, and grow).
        optimizer: its optimizer, from `make_optimizer` (the same kind).
        key: PRNG key, consumed: the new channels' and blocks' initialisation.
        mesh: where to replicate it; None means `make_mesh()`.

    Raises:
        ValueError: ``net`` cannot start as the old one (`widen.check_widening`).
    """
    new_spec = net.spec
    widen.check_widening(old_spec, new_spec)
    fresh = jax.jit(functools.partial(networks.init_network, net))(key)  # one program, not op by op
    live = state.live()
    variables = widen.widen_variables(live.variables, old_spec, new_spec, fresh)
    opt_state = widen.widen_tree(live.opt_state, optimizer.init(fresh["params"]), old_spec, new_spec)
    grown = TrainState(
        step=jnp.asarray(jax.device_get(live.step), jnp.int32),
        params=variables["params"],
        batch_stats=variables["batch_stats"],
        opt_state=opt_state,
    )
    mesh = mesh if mesh is not None else make_mesh()
    grown = replicate(jax.tree_util.tree_map(jnp.asarray, grown), mesh)
    if isinstance(state, EmaTrainState):
        ema = widen.widen_variables(state.ema, old_spec, new_spec, fresh)
        return start_ema(grown, replicate(jax.tree_util.tree_map(jnp.asarray, ema), mesh))
    return grown
