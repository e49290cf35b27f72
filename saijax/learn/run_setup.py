"""A run's setup (docs/design.md §6, §7, §9): its config read once into typed
settings, and the pieces every generation uses, built from them.

:func:`setup` is what ``pipeline.train_and_evaluate`` starts with and what the
benchmarks build from (``benchmarks/selfplay.py``, ``benchmarks/training.py``),
so that they measure the run's own pieces:

* :class:`RunSettings`: the config as frozen dataclasses, one per phase
  (:class:`SelfPlaySettings`, :class:`TrainSettings`,
  ``gating.GatingSettings``) and what changes with the generation
  (:class:`Schedules`: visits, network shape, window);
* :class:`RunSetup`: the rules (style and move cap), the device meshes,
  the keys (:class:`RunKeys`, :class:`GenerationKeys`), and the builds:
  a network's optimizer, train step and evaluator (:meth:`RunSetup.build`),
  generation 0's state (fresh or ``init_checkpoint``) and a resumed
  checkpoint's;
* the empty-board evaluation (:func:`empty_board_eval`, :func:`first_move`),
  which sets self-play's komi and the metrics' α_∅, β_∅ and first move.

:func:`search_config`, :func:`selfplay_agent` and :func:`selfplay_config`
read one setting from a config; ``saijax.learn.pipeline`` re-exports them.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from saijax import zoo
from saijax.core import checkpoints, go, networks, search
from saijax.learn import config as config_lib
from saijax.learn import distributed, gating, selfplay, training
from saijax.play import players, styles

__all__ = [
    "search_config",
    "selfplay_agent",
    "selfplay_config",
    "Schedules",
    "SelfPlaySettings",
    "TrainSettings",
    "RunSettings",
    "RunKeys",
    "GenerationKeys",
    "Built",
    "Start",
    "RunSetup",
    "setup",
    "empty_board_eval",
    "first_move",
]


def search_config(config, generation: int) -> search.SearchConfig:
    """The static search settings of a generation (visits from the schedule,
    ``config_lib.visits_schedule``)."""
    return _search_config(config, config_lib.num_simulations(config, generation))


def _search_config(config, simulations: int) -> search.SearchConfig:
    return dataclasses.replace(
        config_lib.from_section(search.SearchConfig, config.search),
        num_simulations=simulations,
        dirichlet_alpha=config_lib.dirichlet_alpha(config),
    )


def selfplay_agent(config) -> search.Agent:
    """The λ/μ agent of self-play (``config.search.lambda_``, ``mu``, ``threshold``)."""
    return search.Agent(config.search.lambda_, config.search.mu, config.search.threshold)


def selfplay_config(config) -> selfplay.SelfPlayConfig:
    """The static self-play settings (``config.selfplay``) of this process.

    ``selfplay.batch_size`` counts the slots of all processes; each of P
    processes runs batch_size / P of them.
    """
    sp_cfg = config_lib.from_section(selfplay.SelfPlayConfig, config.selfplay)
    if jax.process_count() > 1:
        sp_cfg = dataclasses.replace(sp_cfg, batch_size=sp_cfg.batch_size // jax.process_count())
    return sp_cfg


# ---------------------------------------------------------------------------
# The settings.


def _table(schedule) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(v) for v in entry) for entry in schedule)


@dataclasses.dataclass(frozen=True)
class Schedules:
    """What changes with the generation (``config.schedules``), as tables of
    (first generation, value...) entries; an empty schedule of the config is
    its constant (``search.num_simulations``, ``network.blocks``/``filters``)
    from generation 0."""

    visits: tuple[tuple[int, ...], ...]  # (generation, simulations)
    network: tuple[tuple[int, ...], ...]  # (generation, blocks, filters)
    window: tuple[tuple[int, ...], ...]  # (generation, generations in the training window)

    @classmethod
    def from_config(cls, config) -> Schedules:
        return cls(
            visits=config_lib.visits_schedule(config),
            network=_table(config.schedules.network) or ((0, *config_lib.network_shape(config, 0)),),
            window=_table(config.schedules.window),
        )

    def simulations(self, generation: int) -> int:
        """Search simulations at ``generation`` (``config_lib.num_simulations``)."""
        return config_lib.schedule_value(self.visits, generation)

    def network_shape(self, generation: int) -> tuple[int, int]:
        """(blocks, filters) at ``generation`` (``config_lib.network_shape``)."""
        return config_lib.schedule_value(self.network, generation)

    def window_size(self, generation: int) -> int:
        """Training window w at ``generation`` (``config_lib.window_size``)."""
        return config_lib.schedule_value(self.window, generation)


@dataclasses.dataclass(frozen=True)
class SelfPlaySettings:
    """Self-play's settings: the static configs and what the records hold."""

    config: selfplay.SelfPlayConfig  # this process's (selfplay_config)
    agent: search.Agent
    ownership: bool  # records ownership targets (config_lib.records_ownership)
    opponent_policy: bool  # records opponent-reply targets (config_lib.records_opponent_policy)
    games_per_generation: int  # all processes' games
    sgf_games_per_generation: int

    @classmethod
    def from_config(cls, config) -> SelfPlaySettings:
        return cls(
            config=selfplay_config(config),
            agent=selfplay_agent(config),
            ownership=config_lib.records_ownership(config),
            opponent_policy=config_lib.records_opponent_policy(config),
            games_per_generation=int(config.selfplay.games_per_generation),
            sgf_games_per_generation=int(config.selfplay.sgf_games_per_generation),
        )


@dataclasses.dataclass(frozen=True)
class TrainSettings:
    """Training's settings as the loop reads them (``saijax.learn.training``'s
    builders take ``config.training`` itself, in :meth:`RunSetup.build`)."""

    batch_size: int  # all processes' batch
    local_batch_size: int  # this process's slice of it
    steps_per_generation: int
    samples_per_new_row: float  # r > 0: steps from the new rows; 0: steps_per_generation
    steps_per_call: int  # config_lib.steps_per_call
    ema: bool  # weight averaging (training.ema_decay > 0): the average plays
    optimizer: str
    growth: str  # how a grown net starts: "retrain" or "widen" (config_lib.GROWTHS)

    @classmethod
    def from_config(cls, config) -> TrainSettings:
        return cls(
            batch_size=int(config.training.batch_size),
            local_batch_size=config.training.batch_size // jax.process_count(),
            steps_per_generation=int(config.training.steps_per_generation),
            # Missing in older configs: 0, off.
            samples_per_new_row=float(config.training.get("samples_per_new_row", 0.0) or 0.0),
            steps_per_call=config_lib.steps_per_call(config),
            ema=float(config.training.get("ema_decay", 0.0) or 0.0) > 0,
            optimizer=str(config.training.optimizer),
            growth=str(config.training.get("growth", "retrain")),  # missing in older configs
        )

    @property
    def by_generation(self) -> bool:
        """Steps from the new rows: the learning rate is set per generation, from the schedule at its start."""
        return self.samples_per_new_row > 0

    def steps(self, new_rows: int) -> int:
        """A generation's training steps: ``training.steps_per_generation``, or
        with ``training.samples_per_new_row`` r > 0, round(r · new rows / batch
        size), at least 1, so that each new row is trained on about r times
        whatever the games' lengths."""
        if self.samples_per_new_row <= 0:
            return self.steps_per_generation
        return max(1, round(self.samples_per_new_row * new_rows / self.batch_size))


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """A run's config, read once (:meth:`from_config`): what every phase reads."""

    board_size: int
    generations: int
    seed: int
    precision: str
    rules: go.GoRules  # the move cap and the style's centre bonus
    network: networks.NetworkSpec  # generation 0's; the schedule sets blocks and filters
    init_checkpoint: str  # generation 0's net ("": random)
    time_limit_minutes: float  # 0: no limit
    search: search.SearchConfig  # generation 0's; the schedule sets num_simulations
    schedules: Schedules
    selfplay: SelfPlaySettings
    training: TrainSettings
    gating: gating.GatingSettings

    @classmethod
    def from_config(cls, config) -> RunSettings:
        schedules = Schedules.from_config(config)  # the one read of the visits schedule
        return cls(
            board_size=int(config.board_size),
            generations=int(config.generations),
            seed=int(config.seed),
            precision=str(config.precision),
            rules=styles.style_rules(
                go.GoRules(config.board_size, config_lib.effective_max_moves(config)), config.style.centre_bonus
            ),
            network=training.network_spec(config, 0),
            init_checkpoint=str(config.init_checkpoint or ""),
            time_limit_minutes=float(config.get("time_limit_minutes", 0) or 0),
            search=_search_config(config, schedules.simulations(0)),
            schedules=schedules,
            selfplay=SelfPlaySettings.from_config(config),
            training=TrainSettings.from_config(config),
            gating=gating.GatingSettings.from_config(config),
        )

    def network_spec(self, generation: int) -> networks.NetworkSpec:
        """The network the schedule asks for at ``generation`` (``training.network_spec``)."""
        blocks, filters = self.schedules.network_shape(generation)
        return dataclasses.replace(self.network, blocks=blocks, filters=filters)

    def search_config(self, generation: int) -> search.SearchConfig:
        """The static search settings of ``generation`` (:func:`search_config`)."""
        return dataclasses.replace(self.search, num_simulations=self.schedules.simulations(generation))


# ---------------------------------------------------------------------------
# The keys.


@dataclasses.dataclass(frozen=True)
class GenerationKeys:
    """One generation's keys, each folded from ``key`` (the run's key folded
    with the generation); those of self-play are this process's own."""

    key: jax.Array

    @property
    def growth(self) -> jax.Array:
        """The grown network's catch-up training."""
        return jax.random.fold_in(self.key, 1)

    @property
    def slots(self) -> jax.Array:
        """Self-play's fresh slots (``selfplay.init_selfplay``): the first generation a net plays."""
        return distributed.process_key(jax.random.fold_in(self.key, 2))

    @property
    def train(self) -> jax.Array:
        """The generation's training (and the gate's candidates)."""
        return jax.random.fold_in(self.key, 3)

    def chunk(self, i: int) -> jax.Array:
        """Self-play chunk ``i`` of the generation."""
        return distributed.process_key(jax.random.fold_in(self.key, 100 + i))


@dataclasses.dataclass(frozen=True)
class RunKeys:
    """The run's keys, all from ``config.seed``."""

    base: jax.Array

    @classmethod
    def from_seed(cls, seed: int) -> RunKeys:
        return cls(jax.random.PRNGKey(seed))

    @property
    def init(self) -> jax.Array:
        """Generation 0's random weights."""
        return jax.random.fold_in(self.base, 10**6)

    def generation(self, generation: int) -> GenerationKeys:
        return GenerationKeys(jax.random.fold_in(self.base, generation))

    def checkpoint(self, generation: int) -> jax.Array:
        """The key stored with ``generation``'s checkpoint."""
        return jax.random.fold_in(self.base, generation + 1)


# ---------------------------------------------------------------------------
# The builds.


class Built(NamedTuple):
    """What the run builds from one network spec."""

    spec: networks.NetworkSpec
    net: networks.SaiNet
    optimizer: Any  # optax.GradientTransformation
    train_step: Any  # training.make_train_step's step
    evaluator: search.Evaluator


class Start(NamedTuple):
    """Where a run starts: generation 0's net, or a checkpoint's."""

    generation: int  # the first generation to play
    built: Built
    state: Any  # training.TrainState
    selfplay_variables: Any  # a gated run's promoted net, or None (the state's plays)
    extra: dict[str, Any]  # the checkpoint's extra payload ({} at generation 0)


def _resume_spec(settings: RunSettings, meta: dict[str, Any], step_dir: str) -> networks.NetworkSpec:
    """The network of the checkpoint a run resumes from, checked against the config.

    Its shape (blocks, filters) is the checkpoint's; its board size, value
    head, β scale and ownership head must be the config's (a checkpoint
    without ``ownership_head`` has none). A format-1 checkpoint did not
    record beta_scale: its net was built with the config's, which is taken.

    Raises:
      checkpoints.CheckpointError: naming the checkpoint, on a mismatch.
    """
    want = settings.network_spec(int(meta["generation"]))
    beta_scale = want.beta_scale if meta["beta_scale"] is None else meta["beta_scale"]
    stored = networks.NetworkSpec.from_dict({**meta, "beta_scale": beta_scale})

    def describe(spec):
        head = " and the ownership head" if spec.ownership_head else ""
        head += " and global pooling" if spec.global_pooling else ""
        head += " and the opponent policy head" if spec.opponent_policy_head else ""
        return f"{spec.board_size}x{spec.board_size} {spec.value_head!r} net with beta_scale {spec.beta_scale!r}{head}"

    def key(spec):
        return (
            spec.board_size,
            spec.value_head,
            spec.beta_scale,
            spec.ownership_head,
            spec.global_pooling,
            spec.opponent_policy_head,
        )

    if key(stored) != key(want):
        raise checkpoints.CheckpointError(
            f"checkpoint {step_dir} is for a {describe(stored)}, but the config asks for a {describe(want)} "
            "(board_size, network.value_head, network.beta_scale, network.ownership_head, "
            "network.global_pooling, network.opponent_policy_head); use another --workdir"
        )
    return stored


def _init_checkpoint_variables(source: str, spec: networks.NetworkSpec, log) -> dict[str, Any] | None:
    """The net that generation 0 starts from (``config.init_checkpoint``), or None (random)."""
    if not source:
        return None
    try:
        player = zoo.load(source) if str(source).startswith(zoo.PREFIX) else players.load_player(source)
    except KeyError as e:  # no such zoo entry
        raise ValueError(f"init_checkpoint={source!r}: {e.args[0]}") from None
    except (FileNotFoundError, checkpoints.CheckpointError, ValueError) as e:
        raise ValueError(f"init_checkpoint={source!r}: {e}") from None
    have = player.net.spec
    if have != spec:
        raise ValueError(
            f"init_checkpoint={source!r} is a {have.blocks}x{have.filters} {have.value_head} net for "
            f"{have.board_size}x{have.board_size} (ownership_head {have.ownership_head}), but the config's "
            f"generation-0 net is {spec.blocks}x{spec.filters} {spec.value_head} for "
            f"{spec.board_size}x{spec.board_size} (ownership_head {spec.ownership_head})"
        )
    log(f"starting from {source} ({player.description})")
    return player.variables


class RunSetup:
    """A run's settings and what it builds from them (see :func:`setup`).

    Attributes:
      settings: the config, read once.
      rules: the run's rules (``settings.rules``).
      mesh: training's mesh, over every device of every process.
      selfplay_mesh: self-play's, over this process's devices.
      keys: the run's keys.
      learning_rate: the learning-rate schedule, by step.
    """

    def __init__(self, config):
        self.settings = RunSettings.from_config(config)
        self.rules = self.settings.rules
        self.mesh = training.make_mesh()
        # Self-play stays on this process's devices; training spans all of them.
        self.selfplay_mesh = distributed.local_mesh() if jax.process_count() > 1 else self.mesh
        self.keys = RunKeys.from_seed(self.settings.seed)
        # saijax.learn.training's builders read the training section themselves.
        self._training_config = config.training
        self.learning_rate = training.learning_rate_schedule(config.training)

    def build(self, spec: networks.NetworkSpec) -> Built:
        """The network, its optimizer, train step and search evaluator: the one
        place the run builds them (fresh start, resume and growth)."""
        net = spec.build()
        optimizer = training.make_optimizer(self._training_config)
        train_step = training.make_train_step(
            net,
            spec.board_size,
            self._training_config,
            mesh=self.mesh,
            optimizer=optimizer,
            schedule_by_generation=self.settings.training.by_generation,
        )
        evaluator = search.make_network_evaluator(net, self.rules, precision=self.settings.precision)
        return Built(spec, net, optimizer, train_step, evaluator)

    def init_variables(self, net: networks.SaiNet) -> dict[str, Any]:
        """A fresh net's random weights, as generation 0 draws them."""
        return networks.init_network(net, self.keys.init)

    def fresh_start(self, log) -> Start:
        """Generation 0: the schedule's first net, random or ``init_checkpoint``'s."""
        built = self.build(self.settings.network_spec(0))
        variables = _init_checkpoint_variables(self.settings.init_checkpoint, built.spec, log)
        state = training.create_train_state(
            built.net,
            built.optimizer,
            self.keys.init,
            mesh=self.mesh,
            variables=self.init_variables(built.net) if variables is None else variables,
            ema=self.settings.training.ema,
        )
        return Start(0, built, state, None, {})

    def resume(self, ckpt: checkpoints.Checkpointer, latest: int, log) -> Start:
        """The net and state of checkpoint ``latest``, checked against the config.

        A compact leg's checkpoint (no optimizer state) restarts the optimizer;
        the weight average is started from the live weights, or dropped, as
        ``training.ema_decay`` asks.
        """
        spec = _resume_spec(self.settings, ckpt.read_metadata(latest), ckpt.step_directory(latest))
        built = self.build(spec)
        template = training.abstract_train_state(built.net, built.optimizer, mesh=self.mesh)
        payload = ckpt.restore(latest, template, expected_shape=(spec.blocks, spec.filters))
        state = payload.state
        log(f"resuming from {payload.directory}: generation {latest} done, continuing at {latest + 1}")
        if not payload.optimizer_state:
            state = training.restart_optimizer(state, built.optimizer, self.mesh)
            log(
                f"compact leg (weights stored in {payload.weights_dtype}): the optimizer's state "
                f"({self.settings.training.optimizer}'s moments) restarted from zero; step, schedule and weights kept"
            )
        if self.settings.training.ema:
            if payload.ema is None:
                log(
                    "training.ema_decay > 0 but the checkpoint has no weight average: starting it from the live weights"
                )
            state = training.start_ema(state, payload.ema)
        elif payload.ema is not None:
            log(
                "training.ema_decay is 0 but the checkpoint has a weight average: dropping it; "
                "self-play and training continue from the live weights"
            )
        return Start(latest + 1, built, state, payload.selfplay_variables, payload.extra)


def setup(config) -> RunSetup:
    """A run's settings, rules, meshes and keys, from a validated config: the
    pieces ``pipeline.train_and_evaluate`` builds its generations from."""
    return RunSetup(config)


# ---------------------------------------------------------------------------
# The empty board.


@functools.cache
def _empty_state_fn(rules: go.GoRules):
    """A jitted ``komi -> go.init(rules, komi)``, compiled once per rules: run
    eagerly, ``go.init``'s loops compile again at every call."""
    return jax.jit(lambda komi: go.init(rules, komi))


def empty_board_eval(evaluator, variables, rules: go.GoRules, komi: float = 0.0) -> tuple[float, float, np.ndarray]:
    """The net's (α_∅, β_∅, policy logits) at the empty board, on this process's devices.

    α_∅ and β_∅ centre and scale the komi of self-play's complete games; with
    several processes ``variables`` may be replicated over the global mesh.
    """
    variables = distributed.to_local(variables, distributed.local_mesh())
    state = jax.tree_util.tree_map(lambda x: x[None], _empty_state_fn(rules)(jnp.float32(komi)))
    logits, alpha, beta = jax.jit(evaluator)(variables, state)
    return float(alpha[0]), float(beta[0]), np.asarray(logits[0])


def first_move(rules: go.GoRules, logits) -> dict[str, Any]:
    """The empty board under the policy: ``first_move``, its most likely legal
    move as a GTP vertex, and ``first_move_pass_prior``, its probability of a
    pass (legal moves only), which says whether a pass as the preferred first
    move is a preference (a collapsing run's net) or the largest entry of a
    near-uniform prior (1/(N² + 1) each)."""
    legal = np.asarray(_empty_state_fn(rules)(jnp.float32(0.0)).legal)
    z = np.where(legal, np.asarray(logits, np.float64), -np.inf)
    p = np.exp(z - z.max())
    return {
        "first_move": go.to_gtp(rules, int(np.argmax(z))),
        "first_move_pass_prior": float(p[rules.pass_action] / p.sum()),
    }
