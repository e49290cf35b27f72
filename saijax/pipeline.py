"""The main job: generations of self-play, training and checkpoints (docs/design.md §6, §7, §9).

``train_and_evaluate(config, workdir)`` is what ``python -m saijax.train``
runs; notebooks and tests call it directly. Each generation:

1. builds (or grows) the network the schedule asks for,
2. plays self-play until ``games_per_generation`` games have finished, in
   jitted lockstep chunks (:func:`play_chunks`: each chunk dispatched before
   the last one's records are collected), and writes the generation's
   training rows to ``<workdir>/replay/gen_<generation>.npz`` and a few SGFs
   to ``<workdir>/sgf``, on a thread while step 3 trains on the rows in memory,
3. trains ``steps_per_generation`` steps on the window of the last w
   generations (or, with ``training.samples_per_new_row`` r > 0,
   round(r · new rows / batch size) steps); metrics.jsonl's
   ``train_samples_per_new_row`` is steps · batch size / the generation's
   new rows, how often each new row is trained on (KataGo: about 4),
4. saves an orbax checkpoint under ``<workdir>/checkpoints`` and appends a
   metrics line to ``<workdir>/metrics.jsonl`` (and TensorBoard events).

With several processes (``config.multihost``, `saijax.distributed`), each
plays its share of the games on its own devices, the rows of all of them go
into the one replay file, training is data-parallel over every device, and
only process 0 writes files and logs (docs/design.md §9).

Re-running the same command resumes after the last checkpoint. A run killed
during step 3 finds its generation's self-play file, if its writing had
finished (it is written atomically), and only retrains; otherwise, or killed
during step 2, it replays that generation. Nothing in the workdir is ever
deleted. Self-play games in flight at the end of a generation carry on with
the next net (their rows are tagged with the generation of the net that
played each move), except across a restart, where they are lost.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import re
import sys
import threading
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from saijax import (
    arena,
    checkpoints,
    distributed,
    go,
    match,
    networks,
    players,
    replay,
    search,
    selfplay,
    sgf,
    stats,
    styles,
    training,
    zoo,
)
from saijax import config as config_lib

__all__ = [
    "train_and_evaluate",
    "play_chunks",
    "selfplay_evaluations",
    "search_config",
    "selfplay_agent",
    "selfplay_config",
    "MetricsWriter",
]


def search_config(config, generation: int) -> search.SearchConfig:
    """The static search settings of a generation (visits from the schedule)."""
    return dataclasses.replace(
        config_lib.from_section(search.SearchConfig, config.search),
        num_simulations=config_lib.num_simulations(config, generation),
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


class MetricsWriter:
    """Per-generation metrics as JSONL (pandas-readable) and TensorBoard events.

    A metric that is undefined in a generation (e.g. ``score_error_sharp_late``
    when no late position had β > 5) is NaN in the JSONL and left out of
    TensorBoard, which would warn about it.
    """

    def __init__(self, workdir: str):
        self.path = os.path.join(workdir, "metrics.jsonl")
        self._tb = None
        try:
            from tensorboardX import SummaryWriter  # no TensorFlow needed

            self._tb = SummaryWriter(os.path.join(workdir, "tensorboard"))
        except ImportError:  # pragma: no cover - optional
            pass

    def generations(self) -> set[int]:
        """Generations that already have a metrics line."""
        return logged_generations(self.path)

    def repair(self, log) -> list[str]:
        """Drops the lines a kill mid-write left torn (not JSON), rewriting the
        file atomically, and warns through ``log`` with the generation each
        was for (read from its first characters when they hold it). The run
        then writes a dropped generation's line again from its checkpoint.
        Returns the warnings."""
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        kept, warnings = [], []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                int(json.loads(line)["generation"])
            except (ValueError, KeyError, TypeError):
                found = re.match(r'\s*\{\s*"generation"\s*:\s*(\d+)', line)
                which = f"generation {found.group(1)}'s" if found else "an unreadable"
                warnings.append(
                    f"warning: {self.path} line {number} is torn (a kill while it was written): dropped "
                    f"{which} metrics line ({len(line)} bytes); the checkpoint's copy is written again"
                )
                continue
            kept.append(line if line.endswith("\n") else line + "\n")
        if warnings:
            tmp = self.path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.writelines(kept)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            for w in warnings:
                log(w)
        return warnings

    def write(self, generation: int, metrics: dict[str, Any]):
        with open(self.path, "a") as f:
            f.write(json.dumps({"generation": generation, **metrics}, default=float) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if self._tb is not None:
            for name, value in metrics.items():
                number = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
                if number and math.isfinite(float(value)):
                    self._tb.add_scalar(name, float(value), generation)
            self._tb.flush()

    def close(self):
        if self._tb is not None:
            self._tb.close()


def logged_generations(path: str) -> set[int]:
    """Generations with a line in a run's ``metrics.jsonl`` (none if it does not exist)."""
    if not os.path.exists(path):
        return set()
    out = set()
    with open(path) as f:
        for line in f:
            try:
                out.add(int(json.loads(line)["generation"]))
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line from a kill mid-write
    return out


def _jsonable(metrics: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(metrics, default=float))


def _progress(total: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, leave=False, file=sys.stderr, dynamic_ncols=True)


# Compilation time of this process, in seconds: JAX reports each jit's
# tracing, lowering and XLA compilation (or persistent-cache retrieval) as an
# event; a generation's ``compile_seconds`` is what it added.
_COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)
_compile_seconds = [0.0]


def _on_duration_event(event: str, duration: float, **kwargs) -> None:
    if event in _COMPILE_EVENTS:
        _compile_seconds[0] += float(duration)


jax.monitoring.register_event_duration_secs_listener(_on_duration_event)


def compile_seconds() -> float:
    """Seconds this process has spent tracing, lowering and compiling jitted code."""
    return _compile_seconds[0]


def process_start_time() -> float:
    """When this process started, on the ``time.time()`` clock.

    Read from ``/proc`` where there is one (Linux), so the time limit counts
    interpreter start-up and imports too; elsewhere, when saijax was imported.
    """
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        # Field 22 of stat (starttime, clock ticks after boot); after the
        # command name's ")" the fields start at field 3.
        return time.time() - uptime + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return _IMPORTED_AT


_IMPORTED_AT = time.time()


def use_compilation_cache(config, workdir: str) -> str | None:
    """Turns JAX's persistent compilation cache on (``config.compilation_cache``)
    in ``config.compilation_cache_dir`` (empty: ``<workdir>/compilation_cache``),
    or off. Returns the folder, or None when off.

    Each compiled program (self-play chunk, train step, evaluator) is stored
    under a key of its computation, shapes, devices and JAX version, so a
    second launch of the same config on the same kind of machine loads it
    instead of compiling (only programs that took at least
    ``jax_persistent_cache_min_compile_time_secs``, 1 s by default, are
    stored). Process-wide: the last call wins.
    """
    from jax.experimental.compilation_cache import compilation_cache as cc

    if not bool(config.get("compilation_cache", False)):
        if jax.config.jax_enable_compilation_cache:
            jax.config.update("jax_enable_compilation_cache", False)
            cc.reset_cache()
        return None
    path = os.path.abspath(config.get("compilation_cache_dir", "") or os.path.join(workdir, "compilation_cache"))
    if not jax.config.jax_enable_compilation_cache or jax.config.jax_compilation_cache_dir != path:
        os.makedirs(path, exist_ok=True)
        jax.config.update("jax_enable_compilation_cache", True)
        jax.config.update("jax_compilation_cache_dir", path)
        cc.reset_cache()  # JAX opens its cache once per process: reopen it here
    return path


def _dir_bytes(path: str | None) -> int:
    """Bytes of the files under ``path`` (a cache folder, a checkpoint); 0 if it is not a folder."""
    if not path or not os.path.isdir(path):
        return 0
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def predicted_generation_seconds(last: dict[str, Any], *, recompiles: bool, compile_estimate: float) -> float:
    """The wall time the next generation is expected to take.

    The last generation's time without its compilation, plus 10% (self-play
    finishes on whole games, so generations vary a little), plus
    ``compile_estimate`` when the next generation compiles something new (a
    visits or network change, or a first generation).
    """
    steady = max(float(last.get("seconds", 0.0)) - float(last.get("compile_seconds", 0.0)), 0.0)
    return 1.1 * steady + (compile_estimate if recompiles else 0.0)


def leg_files(workdir: str, generation: int) -> list[str]:
    """What a leg must keep for the next one to resume after ``generation``."""
    return [
        os.path.join(workdir, "checkpoints", str(generation)),
        os.path.join(workdir, "metrics.jsonl"),
        os.path.join(workdir, "config.json"),
    ]


def _leg_message(workdir: str, generation: int, reason: str) -> str:
    files = leg_files(workdir, generation)
    size = _dir_bytes(files[0]) + sum(os.path.getsize(f) for f in files[1:] if os.path.exists(f))
    return "\n".join(
        [
            reason,
            f"to go on in another leg, keep these ({size / 2**20:.1f} MB):",
            *(f"  {f}" for f in files),
            "for example:",
            f"  mkdir -p LEG/checkpoints && cp -r {files[0]} LEG/checkpoints/ && cp {files[1]} {files[2]} LEG/",
            f"then run the same command with --workdir on a copy of LEG; it resumes at generation {generation + 1}",
        ]
    )


@functools.cache
def _empty_state_fn(rules: go.GoRules):
    """A jitted ``komi -> go.init(rules, komi)``, compiled once per rules: run
    eagerly, ``go.init``'s loops compile again at every call."""
    return jax.jit(lambda komi: go.init(rules, komi))


def _empty_board_eval(evaluator, variables, rules, komi=0.0):
    # On this process's devices: with several processes, `variables` may be
    # replicated over the global mesh.
    variables = distributed.to_local(variables, distributed.local_mesh())
    state = jax.tree_util.tree_map(lambda x: x[None], _empty_state_fn(rules)(jnp.float32(komi)))
    logits, alpha, beta = jax.jit(evaluator)(variables, state)
    return float(alpha[0]), float(beta[0]), np.asarray(logits[0])


def _first_move(rules: go.GoRules, logits) -> dict[str, Any]:
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


def _write_sgfs(rules, games, directory, generation, limit):
    os.makedirs(directory, exist_ok=True)
    paths = []
    for game in games[:limit]:
        black, white = selfplay.start_board(rules, game)
        moves = tuple(a for a in game.actions if a >= 0)
        origin = (
            f"branch from move {game.start_move} with fair komi {game.komi:g}"
            if game.is_branch
            else "complete game, komi sampled from the net's empty-board sigmoid"
        )
        record = sgf.GameRecord(
            size=rules.size,
            komi=game.komi,
            moves=moves,
            setup_black=tuple(black) if game.is_branch else (),
            setup_white=tuple(white) if game.is_branch else (),
            first_player=game.start_to_play,
            result=sgf.game_result_string(game.winner, game.margin, game.resigned),
            black_name=f"saijax-gen{generation}",
            white_name=f"saijax-gen{generation}",
            root_comment=f"saijax self-play, generation {generation}, game {game.game_id}: {origin}",
        )
        path = os.path.join(directory, f"gen{generation:06d}_game{game.game_id:07d}.sgf")
        sgf.write_sgf(record, path)
        paths.append(path)
    return paths


def _shard_selfplay(sp: selfplay.SelfPlayState, mesh) -> selfplay.SelfPlayState:
    """Slots along the mesh's batch axis; the branch queue replicated."""
    batch = NamedSharding(mesh, PartitionSpec(training.BATCH_AXIS))
    rep = NamedSharding(mesh, PartitionSpec())
    per_slot = {"games", "game_id", "is_branch", "may_resign", "would_resign", "branches"}
    out = {}
    for f in dataclasses.fields(sp):
        value = getattr(sp, f.name)
        sharding = batch if f.name in per_slot else rep
        out[f.name] = jax.tree_util.tree_map(lambda x: jax.device_put(x, sharding), value)
    return selfplay.SelfPlayState(**out)


class _Built(NamedTuple):
    """What the pipeline builds from one network spec."""

    spec: networks.NetworkSpec
    net: networks.SaiNet
    optimizer: Any  # optax.GradientTransformation
    train_step: Any  # training.make_train_step's step
    evaluator: search.Evaluator


def _ratio(config) -> float:
    """``training.samples_per_new_row`` (missing in older configs: 0, off)."""
    return float(config.training.get("samples_per_new_row", 0.0) or 0.0)


def _training_steps(config, new_rows: int) -> int:
    """A generation's training steps: ``training.steps_per_generation``, or
    with ``training.samples_per_new_row`` r > 0, round(r · new rows / batch
    size), at least 1, so that each new row is trained on about r times
    whatever the games' lengths."""
    ratio = _ratio(config)
    if ratio <= 0:
        return int(config.training.steps_per_generation)
    return max(1, round(ratio * new_rows / int(config.training.batch_size)))


def _build(spec: networks.NetworkSpec, config, rules: go.GoRules, mesh) -> _Built:
    """The network, its optimizer, train step and search evaluator: the one
    place the pipeline builds them (fresh start, resume and growth)."""
    net = spec.build()
    optimizer = training.make_optimizer(config.training)
    train_step = training.make_train_step(
        net,
        spec.board_size,
        config.training,
        mesh=mesh,
        optimizer=optimizer,
        schedule_by_generation=_ratio(config) > 0,
    )
    evaluator = search.make_network_evaluator(net, rules, precision=config.precision)
    return _Built(spec, net, optimizer, train_step, evaluator)


def _resume_spec(config, meta: dict[str, Any], step_dir: str) -> networks.NetworkSpec:
    """The network of the checkpoint a run resumes from, checked against the config.

    Its shape (blocks, filters) is the checkpoint's; its board size, value
    head, β scale and ownership head must be the config's (a checkpoint
    without ``ownership_head`` has none). A format-1 checkpoint did not
    record beta_scale: its net was built with the config's, which is taken.

    Raises:
      checkpoints.CheckpointError: naming the checkpoint, on a mismatch.
    """
    want = training.network_spec(config, int(meta["generation"]))
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


def _initial_variables(config, spec: networks.NetworkSpec, log) -> dict[str, Any] | None:
    """The net that generation 0 starts from (``config.init_checkpoint``), or None (random)."""
    source = config.init_checkpoint
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


class ChunkLoop(NamedTuple):
    """What :func:`play_chunks` returns."""

    state: selfplay.SelfPlayState  # after the last chunk the generation used
    parts: list  # [TrainingRows] of the games finished, in order
    games: list  # [selfplay.FinishedGame]
    chunks: int  # chunks played
    full_moves: int  # moves (of chunks) with a full search, counted on slot 0
    idle_cheap_slot_moves: int  # slots that searched cheaply without moving (selfplay.random_full_search_only)
    wait_seconds: float  # the host waiting for the device (dispatch included)
    collect_seconds: float  # the host joining records into rows and games


@jax.jit
def _finished_count(finished, active):
    return jnp.sum(finished & active)


def play_chunks(
    chunk,
    variables,
    sp_state,
    collector,
    *,
    target,
    generation,
    key_of,
    alpha_empty,
    beta_empty,
    on_games=None,
    max_chunks=None,
) -> ChunkLoop:
    """Self-play chunks until ``target`` games have finished (docs/design.md §6).

    Chunk i + 1 is dispatched before chunk i's records are collected, so the
    device plays while the host joins records (JAX's asynchronous dispatch).
    Whether chunk i ends the generation is known from its count of finished
    games alone, a scalar read as soon as chunk i is done, so no chunk is
    dispatched that the generation would not use: each net plays exactly the
    moves it played when every chunk was collected before the next, and no
    evaluation is wasted. ``key_of(i)`` is chunk i's key; ``on_games(n)``
    is told of each chunk's finished games (a progress bar); with
    ``max_chunks`` it also stops after that many chunks (benchmarks/selfplay.py).
    """
    alpha_empty, beta_empty = jnp.float32(alpha_empty), jnp.float32(beta_empty)
    parts, games = [], []
    i = full_moves = idle = 0
    wait = collect = 0.0
    t = time.time()
    state, records = chunk(variables, sp_state, key_of(0), alpha_empty, beta_empty)
    while True:
        n_finished = int(_finished_count(records.finished, records.active))  # waits for chunk i
        done = len(games) + n_finished >= target or (max_chunks is not None and i + 1 >= max_chunks)
        if not done:
            ahead = chunk(variables, state, key_of(i + 1), alpha_empty, beta_empty)
        now = time.time()
        wait += now - t
        rows, finished = collector.add_chunk(records, generation)
        full = np.asarray(records.full_search)
        full_moves += int(np.sum(full[:, 0]))
        idle += int(np.sum(~np.asarray(records.active) & ~full))
        if rows is not None:
            parts.append(rows)
        games.extend(finished)
        if on_games is not None:
            on_games(len(finished))
        i += 1
        t = time.time()
        collect += t - now
        if done:
            return ChunkLoop(state, parts, games, i, full_moves, idle, wait, collect)
        state, records = ahead


def _cheap_simulations(sp_cfg: selfplay.SelfPlayConfig, simulations: int) -> int:
    """Simulations of a cheap search under playout caps (0 without caps)."""
    return min(sp_cfg.fast_simulations, simulations) if sp_cfg.full_search_prob < 1 else 0


def selfplay_evaluations(sp_cfg: selfplay.SelfPlayConfig, simulations: int, chunks: int, full_moves: int) -> int:
    """Self-play compute of ``chunks`` chunks: every chunk searches all slots
    of every process for ``chunk_moves`` plies, S simulations plus the root;
    with playout caps a cheap search's moves cost its own simulations (the
    batch flips one coin per move)."""
    fast = _cheap_simulations(sp_cfg, simulations)
    moves = chunks * sp_cfg.chunk_moves
    evaluations = full_moves * (simulations + 1) + (moves - full_moves) * (fast + 1)
    return evaluations * sp_cfg.batch_size * jax.process_count()


class _Run:
    """One call of :func:`train_and_evaluate`: what lasts across its
    generations, and each generation's phases as methods, in the paper's
    order (start or resume, grow, self-play, train (and gate), checkpoint and
    metrics, the leg's time limit)."""

    def __init__(self, config, workdir, *, progress, log, clock, started, ckpt, cache_dir, primary):
        self.config, self.workdir, self.progress, self.log = config, workdir, progress, log
        self.clock, self.started, self.ckpt, self.cache_dir, self.primary = clock, started, ckpt, cache_dir, primary
        self.limit_seconds = 60.0 * float(config.get("time_limit_minutes", 0) or 0)
        n = config.board_size
        self.rules = styles.style_rules(
            go.GoRules(n, config_lib.effective_max_moves(config)), config.style.centre_bonus
        )
        self.mesh = training.make_mesh()
        # Self-play stays on this process's devices; training spans all of them.
        self.selfplay_mesh = distributed.local_mesh() if jax.process_count() > 1 else self.mesh
        self.sp_cfg = selfplay_config(config)
        # Each process samples its slice of the global training batch.
        self.local_batch_size = config.training.batch_size // jax.process_count()
        self.buffer = replay.ReplayBuffer(os.path.join(workdir, "replay"), n)
        self.sgf_dir = os.path.join(workdir, "sgf")
        self.writer = MetricsWriter(workdir) if primary else None
        self.base_key = jax.random.PRNGKey(config.seed)
        self.value_head = config.network.value_head
        # Weight averaging (training.ema_decay > 0): the average plays.
        self.ema = float(config.training.get("ema_decay", 0.0) or 0.0) > 0
        # Steps from the new rows (training.samples_per_new_row > 0): the
        # learning rate is set per generation, from the schedule at its start.
        self.by_generation = _ratio(config) > 0
        self.schedule = training.learning_rate_schedule(config.training)
        self.built = self.state = self.selfplay_variables = None
        self._reset_selfplay()
        self.compiled_before = compile_seconds()
        # The most a generation of this process has spent compiling: what a
        # generation that compiles something new is expected to add.
        self.compile_estimate = 0.0
        self.summary: dict[str, Any] = {}

    def _reset_selfplay(self):
        """Self-play's slots, collector and compiled functions, for a new network."""
        self.sp_state = None
        self.collector = selfplay.GameCollector(
            self.rules, opponent_policy=config_lib.records_opponent_policy(self.config)
        )
        self.chunk_fns: dict[tuple, Any] = {}
        self.refresh_fn = None  # built once per network, like the chunks

    # Start or resume.

    def start_or_resume(self) -> int:
        """Builds the net of generation 0, or restores the latest checkpoint;
        returns the first generation to play."""
        config, ckpt, log = self.config, self.ckpt, self.log
        latest = ckpt.latest_generation()
        metrics_path = os.path.join(self.workdir, "metrics.jsonl")  # every process checks (a shared workdir)
        done = sorted(logged_generations(metrics_path)) if latest is None else []
        if done:
            raise checkpoints.CheckpointError(
                f"{metrics_path} has lines for generations {done[0]}-{done[-1]} but {ckpt.directory} has no "
                "checkpoint: starting again from generation 0 would mix two runs' metrics. Restore the "
                "checkpoint (checkpoints/<generation>/), or move metrics.jsonl aside to start afresh"
            )
        if latest is None:
            self.built = _build(training.network_spec(config, 0), config, self.rules, self.mesh)
            self.state = training.create_train_state(
                self.built.net,
                self.built.optimizer,
                jax.random.fold_in(self.base_key, 10**6),
                mesh=self.mesh,
                variables=_initial_variables(config, self.built.spec, log),
                ema=self.ema,
            )
            return 0
        spec = _resume_spec(config, ckpt.read_metadata(latest), ckpt.step_directory(latest))
        self.built = _build(spec, config, self.rules, self.mesh)
        template = training.abstract_train_state(self.built.net, self.built.optimizer, mesh=self.mesh)
        payload = ckpt.restore(latest, template, expected_shape=(spec.blocks, spec.filters))
        self.state = payload.state
        self.selfplay_variables = payload.selfplay_variables
        log(f"resuming from {payload.directory}: generation {latest} done, continuing at {latest + 1}")
        if not payload.optimizer_state:
            self.state = training.restart_optimizer(self.state, self.built.optimizer, self.mesh)
            log(
                f"compact leg (weights stored in {payload.weights_dtype}): the optimizer's state "
                f"({config.training.optimizer}'s moments) restarted from zero; step, schedule and weights kept"
            )
        if self.ema:
            if payload.ema is None:
                log(
                    "training.ema_decay > 0 but the checkpoint has no weight average: starting it from the live weights"
                )
            self.state = training.start_ema(self.state, payload.ema)
        elif payload.ema is not None:
            log(
                "training.ema_decay is 0 but the checkpoint has a weight average: dropping it; "
                "self-play and training continue from the live weights"
            )
        # A kill while the metrics line was appended (a torn last line) or
        # between the checkpoint and the line: drop the torn line, restore the line.
        if self.primary:
            self.writer.repair(log)
        if self.primary and latest not in self.writer.generations() and "metrics" in payload.extra:
            self.writer.write(latest, payload.extra["metrics"])
        return latest + 1

    # Growth.

    def grow(self, gen: int, gen_key, metrics: dict[str, Any]):
        """The network the schedule asks for at ``gen``, grown from the last
        one on the replay window (docs/design.md §7)."""
        config, buffer = self.config, self.buffer
        want = training.network_spec(config, gen)
        if want == self.built.spec:
            return
        have = [g for g in buffer.available_generations() if g < gen]
        self.log(
            f"growing the network {self.built.spec.blocks}x{self.built.spec.filters} -> {want.blocks}x{want.filters}"
        )
        if have:
            buffer.load_window(have[-1], config_lib.window_size(config, gen))
        self.built = _build(want, config, self.rules, self.mesh)
        # Without replay data (e.g. a moved replay directory) the new net starts untrained.
        grown = training.grow_network(
            self.built.net,
            self.built.optimizer,
            self.built.train_step,
            key=jax.random.fold_in(gen_key, 1),
            sample_batch=lambda k: buffer.sample(
                distributed.process_key(k), self.local_batch_size, value_head=self.value_head
            ),
            num_steps=int(config.training.steps_per_generation) if have else 0,
            start_step=int(jax.device_get(self.state.step)),
            mesh=self.mesh,
            ema=self.ema,
            learning_rate=self.schedule(gen * config.training.steps_per_generation) if self.by_generation else None,
        )
        self.state = grown.state
        self.selfplay_variables = None  # the grown net takes over self-play
        metrics.update({f"growth_{k}": v for k, v in grown.metrics.items()})
        self._reset_selfplay()

    def playing_variables(self):
        """The net that plays: the last trained one, or in a gated run the
        last promoted one (the training chain goes on from its own weights
        whatever the gate decides); with weight averaging, the average."""
        return self.state.playing_variables if self.selfplay_variables is None else self.selfplay_variables

    # Self-play.

    def selfplay(self, gen: int, gen_key, variables, alpha0, beta0, times: dict[str, float]):
        """One generation's self-play. Returns (its statistics, the
        generation's new rows, a writer to join before the checkpoint: the
        rows and SGFs are written while training runs)."""
        config, sp_cfg, buffer = self.config, self.sp_cfg, self.buffer
        if distributed.agree(gen in buffer.available_generations()):
            self.log(f"generation {gen}: self-play data found, retraining only")
            return {"reused_selfplay": True}, buffer.read_generation(gen), None
        s_cfg = search_config(config, gen)
        fn_key = (s_cfg.num_simulations,)
        if fn_key not in self.chunk_fns:
            self.chunk_fns[fn_key] = selfplay.make_chunk_fn(
                self.built.evaluator,
                self.rules,
                s_cfg,
                sp_cfg,
                agent=selfplay_agent(config),
                ownership=config_lib.records_ownership(config),
            )
        if self.sp_state is None:
            sp_key = distributed.process_key(jax.random.fold_in(gen_key, 2))
            self.sp_state = _shard_selfplay(
                selfplay.init_selfplay(self.rules, sp_cfg, sp_key, alpha0, beta0), self.selfplay_mesh
            )
        else:
            # Branches queued by the previous net start at this net's fair komi.
            if self.refresh_fn is None:
                self.refresh_fn = selfplay.make_refresh_fn(self.built.evaluator)
            self.sp_state = self.refresh_fn(variables, self.sp_state)
        dropped_before = int(self.sp_state.queue_dropped)
        target = distributed.process_share(config.selfplay.games_per_generation)
        bar = _progress(target, f"gen {gen} self-play", self.progress)
        loop = play_chunks(
            self.chunk_fns[fn_key],
            variables,
            self.sp_state,
            self.collector,
            target=target,
            generation=gen,
            key_of=lambda i: distributed.process_key(jax.random.fold_in(gen_key, 100 + i)),
            alpha_empty=alpha0,
            beta_empty=beta0,
            on_games=None if bar is None else (lambda k: bar.update(min(k, target - bar.n))),
        )
        if bar is not None:
            bar.close()
        self.sp_state = loop.state
        times["collect_seconds"] += loop.collect_seconds
        times["selfplay_wait_seconds"] += loop.wait_seconds
        evaluations = selfplay_evaluations(sp_cfg, s_cfg.num_simulations, loop.chunks, loop.full_moves)
        if not loop.parts:
            raise RuntimeError(f"generation {gen}: self-play produced no training rows")
        rows, games = replay.concatenate_rows(loop.parts), loop.games
        queue = {
            "branches_dropped": int(self.sp_state.queue_dropped) - dropped_before,
            "branch_queue_size": int(self.sp_state.queue_size),
        }
        if jax.process_count() > 1:
            rows, games, queue, per_process = _gather_selfplay(rows, games, queue)
            self.log(f"generation {gen}: self-play rows per process {per_process}, {rows.num_rows} in all")
        stats = selfplay.generation_stats(games, alpha0, beta0)
        stats.update(queue)
        stats["selfplay_evaluations"] = evaluations
        stats["selfplay_full_search_fraction"] = loop.full_moves / (loop.chunks * sp_cfg.chunk_moves)
        # Cheap searches of slots that did not move (waiting in their opening
        # for a full search, selfplay.random_full_search_only): spent, and
        # counted in selfplay_evaluations.
        fast = _cheap_simulations(sp_cfg, s_cfg.num_simulations)
        stats["selfplay_waiting_evaluations"] = loop.idle_cheap_slot_moves * (fast + 1) * jax.process_count()
        if jax.process_count() > 1:
            stats["rows_per_process"] = per_process
        return stats, rows, self._write_behind(gen, rows, games)

    def _write_behind(self, gen, rows, games):
        """Writes the generation's rows and SGFs (process 0) on a thread, off
        self-play's critical path; returns a function that waits for them
        and returns the seconds they took."""
        if not self.primary:
            return lambda: 0.0
        result: dict[str, Any] = {}

        def write():
            t = time.time()
            try:
                self.buffer.write_generation(gen, rows)
                _write_sgfs(self.rules, games, self.sgf_dir, gen, self.config.selfplay.sgf_games_per_generation)
            except BaseException as e:  # raised again on join
                result["error"] = e
            result["seconds"] = time.time() - t

        thread = threading.Thread(target=write, name=f"saijax-replay-{gen}", daemon=False)
        thread.start()

        def join():
            thread.join()
            if "error" in result:
                raise result["error"]
            return result["seconds"]

        return join

    # Training (and the gate).

    def train(self, gen: int, gen_key, variables, alpha0, new_rows, metrics: dict[str, Any], times):
        """Trains on the window ending with this generation's rows (given in
        memory: the file may still be being written)."""
        config, buffer = self.config, self.buffer
        t_tr = time.time()
        buffer.load_window(gen, config_lib.window_size(config, gen), fresh={gen: new_rows})
        times["replay_seconds"] += time.time() - t_tr
        steps = _training_steps(config, new_rows.num_rows)
        if self.by_generation:
            self.state = training.set_learning_rate(
                self.state, self.schedule(gen * config.training.steps_per_generation)
            )
        bar = _progress(steps, f"gen {gen} training", self.progress)

        sample = buffer.sampler(self.local_batch_size, self.value_head, key_fn=distributed.process_key)
        fuse = dict(steps_per_call=config_lib.steps_per_call(config), on_steps=bar.update if bar is not None else None)
        train_key = jax.random.fold_in(gen_key, 3)
        if config.gating.enabled:
            self.state, train_metrics, gate, self.selfplay_variables = _train_with_gating(
                config,
                self.rules,
                self.built.net,
                self.state,
                variables,
                self.built.train_step,
                sample,
                steps,
                train_key,
                alpha0,
                gen,
                **fuse,
            )
            times["gate_seconds"] = gate.pop("gate_seconds")
            metrics.update(gate)
        else:
            self.state, train_metrics = training.train_on_window(
                self.state, self.built.train_step, sample, steps, train_key, **fuse
            )
            self.selfplay_variables = None
        if bar is not None:
            bar.close()
        metrics.update({f"train_{k}": v for k, v in train_metrics.items()})
        metrics["window_rows"] = int(buffer.num_rows)
        metrics["train_steps"] = steps
        metrics["train_samples_per_new_row"] = training.samples_per_new_row(
            steps, config.training.batch_size, new_rows.num_rows
        )
        # Training's own time: the window's loading and the gate's matches apart.
        metrics["train_seconds"] = time.time() - t_tr - times["gate_seconds"]

    # Checkpoint and metrics.

    def checkpoint_and_metrics(self, gen: int, t0: float, metrics: dict[str, Any], times):
        """The generation's checkpoint and metrics line; returns its checkpoint folder."""
        config, built = self.config, self.built
        metrics["network"] = f"{built.spec.blocks}x{built.spec.filters}"
        metrics["network_params"] = networks.param_count(self.state.params)
        metrics["games_in_flight"] = sum(distributed.allgather(self.collector.pending_games))
        metrics["simulations"] = config_lib.num_simulations(config, gen)
        # This generation's net (the one checkpoint `gen` holds for play):
        # its own fair-komi estimate and preferred first move.
        alpha_new, beta_new, logits_new = _empty_board_eval(built.evaluator, self.playing_variables(), self.rules)
        metrics.update(
            alpha_empty=alpha_new,
            beta_empty=beta_new,
            **_first_move(self.rules, logits_new),
        )
        # Where the generation's wall time went (seconds): compile_seconds is
        # JAX's tracing and compiling (inside the phases below, mostly
        # self-play's and training's first call); collect_seconds is the
        # host's share of self-play (joining records into rows and games),
        # selfplay_wait_seconds the host waiting for the device in it;
        # replay_seconds is the window's loading plus any wait for the rows
        # and SGFs, which are written while training runs
        # (replay_write_seconds); gate_seconds is the gate's matches.
        compiled_now = compile_seconds()
        metrics["compile_seconds"] = compiled_now - self.compiled_before
        self.compiled_before = compiled_now
        metrics.update(times)
        if self.cache_dir is not None:
            metrics["compilation_cache_bytes"] = _dir_bytes(self.cache_dir)
        t_ckpt = time.time()
        ckpt_dir = self.ckpt.save(
            gen,
            state=self.state,
            rng_key=jax.random.fold_in(self.base_key, gen + 1),
            network=built.spec,
            replay_dir=self.buffer.directory,
            extra={"alpha_empty": alpha_new, "beta_empty": beta_new, "metrics": _jsonable(metrics)},
            selfplay_variables=self.selfplay_variables,
        )
        metrics["checkpoint_seconds"] = time.time() - t_ckpt
        metrics["seconds"] = self.clock() - t0
        if self.primary:
            self.writer.write(gen, metrics)
        self.log(_generation_line(gen, metrics))
        warning = collapse_warning(config.board_size, metrics)
        if warning:
            self.log(f"warning: generation {gen}: {warning}")
        self.compile_estimate = max(self.compile_estimate, metrics["compile_seconds"])
        return ckpt_dir

    # The leg's time limit.

    def out_of_time(self, gen: int, metrics: dict[str, Any]) -> bool:
        """A time-limited leg: whether the next generation would end past the limit (process 0 decides)."""
        config = self.config
        if self.limit_seconds <= 0 or gen + 1 >= config.generations:
            return False
        nxt = gen + 1
        recompiles = (
            training.network_spec(config, nxt) != self.built.spec
            or (config_lib.num_simulations(config, nxt),) not in self.chunk_fns
        )
        elapsed = self.clock() - self.started
        need = predicted_generation_seconds(metrics, recompiles=recompiles, compile_estimate=self.compile_estimate)
        if not distributed.agree(elapsed + need > self.limit_seconds):
            return False
        reason = (
            f"time limit: {elapsed / 60:.2f} of {self.limit_seconds / 60:g} minutes used after generation "
            f"{gen}; generation {nxt} is predicted to take {need / 60:.2f} more, so this leg stops here"
        )
        self.log(_leg_message(self.workdir, gen, reason))
        self.summary.update(stopped_by_time_limit=True, leg_files=leg_files(self.workdir, gen))
        return True

    # One generation, and the run.

    def generation(self, gen: int) -> bool:
        """Plays, trains and saves generation ``gen``; False when the leg's time is up."""
        t0 = self.clock()
        gen_key = jax.random.fold_in(self.base_key, gen)
        metrics: dict[str, Any] = {}
        times = dict.fromkeys(
            ("collect_seconds", "selfplay_wait_seconds", "replay_seconds", "replay_write_seconds", "gate_seconds"),
            0.0,
        )
        self.grow(gen, gen_key, metrics)
        variables = distributed.to_local(self.playing_variables(), self.selfplay_mesh)
        alpha0, beta0, _ = _empty_board_eval(self.built.evaluator, variables, self.rules)

        t_sp = time.time()
        stats, new_rows, written = self.selfplay(gen, gen_key, variables, alpha0, beta0, times)
        # The self-play komi distribution's centre and scale (the playing net's α_∅, β_∅).
        stats.update(selfplay_alpha_empty=alpha0, selfplay_beta_empty=beta0)
        metrics.update(stats)
        metrics["selfplay_seconds"] = time.time() - t_sp

        self.train(gen, gen_key, variables, alpha0, new_rows, metrics, times)
        if written is not None:
            t_join = time.time()
            times["replay_write_seconds"] = written()
            times["replay_seconds"] += time.time() - t_join
            # The rows are on disk before the checkpoint that says the generation is done.
            distributed.barrier(f"replay generation {gen} written")
        ckpt_dir = self.checkpoint_and_metrics(gen, t0, metrics, times)
        self.summary.update(checkpoint=ckpt_dir, generation=gen)
        return not self.out_of_time(gen, metrics)

    def final_report(self) -> dict[str, Any]:
        """The summary, from the latest net."""
        alpha0, beta0, logits0 = _empty_board_eval(self.built.evaluator, self.playing_variables(), self.rules)
        self.summary.update(
            fair_komi=alpha0,
            beta_empty=beta0,
            **_first_move(self.rules, logits0),
            checkpoints=self.ckpt.directory,
            sgf_dir=self.sgf_dir,
            metrics=os.path.join(self.workdir, "metrics.jsonl"),
            workdir=self.workdir,
        )
        return self.summary


def train_and_evaluate(
    config, workdir: str, *, progress: bool = True, log=print, clock=time.time, started: float | None = None
) -> dict[str, Any]:
    """Runs (or resumes) a whole training run. Returns a final summary dict.

    With ``config.multihost``, joins the other processes first
    (`distributed.initialize`, unless the caller already has, as
    ``python -m saijax.train`` does with its flags); every process then
    calls this with the same config and workdir, which must be on a file
    system all of them see. Only process 0 logs and shows progress.

    With ``config.time_limit_minutes`` > 0 the run is one *leg*: after each
    generation it predicts the next one's wall time
    (:func:`predicted_generation_seconds`) and stops, its checkpoint written,
    when that would end past the limit, counted on ``clock`` from
    ``started`` (default: this process's start, so imports, compilation and
    restoring count). The summary then has ``stopped_by_time_limit`` and
    ``leg_files``, what the next leg needs (:func:`leg_files`). Every
    process stops at the same generation (process 0 decides).

    The generations' phases are :class:`_Run`'s methods: start or resume,
    grow, self-play (:func:`play_chunks`), train (and gate), checkpoint and
    metrics, the time limit.
    """
    started = process_start_time() if started is None else started
    if config.multihost:
        config_lib.validate(config, device_count=1)  # every field but the device count, before connecting
        distributed.initialize()
    config_lib.validate(config)
    primary = distributed.is_primary()
    if not primary:
        log, progress = (lambda *args, **kwargs: None), False
    workdir = os.path.abspath(workdir)
    os.makedirs(workdir, exist_ok=True)
    if primary:
        with open(os.path.join(workdir, "config.json"), "w") as f:
            f.write(config.to_json_best_effort(indent=2))
    cache_dir = use_compilation_cache(config, workdir)

    with checkpoints.Checkpointer(workdir, keep_every=config.keep_checkpoint_every) as ckpt:
        run = _Run(
            config,
            workdir,
            progress=progress,
            log=log,
            clock=clock,
            started=started,
            ckpt=ckpt,
            cache_dir=cache_dir,
            primary=primary,
        )
        try:
            for gen in range(run.start_or_resume(), config.generations):
                if not run.generation(gen):
                    break
            summary = run.final_report()
        finally:
            if run.writer is not None:
                run.writer.close()
    return summary


def _gather_selfplay(rows, games, queue):
    """Every process's self-play of one generation, joined (a collective).

    Game ids are made unique across processes (process p's game g becomes
    g · P + p), so rows and SGF names never collide.

    Returns:
      (all rows, all games, summed queue counts, rows per process).
    """
    count = jax.process_count()
    joined_rows, joined_games, joined_queue, per_process = [], [], {}, []
    for p, (r, g, q) in enumerate(distributed.allgather((rows, games, queue))):
        joined_rows.append(r.replace(game_id=r.game_id * count + p))
        joined_games.extend(dataclasses.replace(game, game_id=game.game_id * count + p) for game in g)
        for name, value in q.items():
            joined_queue[name] = joined_queue.get(name, 0) + value
        per_process.append(r.num_rows)
    return replay.concatenate_rows(joined_rows), joined_games, joined_queue, per_process


def _train_with_gating(
    config, rules, net, state, previous, train_step, sample, steps, key, alpha_empty, generation, **train_kwargs
):
    """Weak gating (docs/design.md §7): export c candidates while training, match
    each against the net that played this generation, promote the best.

    The training chain goes on from its own weights whatever the gate decides:
    the returned state is the last candidate's. With weight averaging
    (``training.ema_decay`` > 0) the candidates are the averaged nets. Only the net that plays
    self-play changes: the best candidate (by score, wins + draws/2) if its
    score reaches ``gating.threshold``, otherwise ``previous``. Matches are
    lockstep arena games at the playing net's fair komi α_∅ (rounded to ½ℤ,
    or the fixed komi), colours alternating, without root noise (no
    Dirichlet noise, no Gumbel noise, temperature 0); each colour pair starts
    from ``gating.opening_moves`` random moves so that games differ.

    Returns:
      (state, training metrics, gating metrics with ``gate_seconds``, the
      self-play net's variables).
    """
    c = int(config.gating.candidates)
    shardings = jax.tree_util.tree_map(lambda x: x.sharding, state.variables)
    previous = jax.tree_util.tree_map(np.asarray, jax.device_get(previous))
    bounds = [round(steps * (i + 1) / c) for i in range(c)]
    candidates, summaries, done = [], [], 0
    for i, end in enumerate(bounds):
        if end > done:
            state, m = training.train_on_window(
                state, train_step, sample, end - done, jax.random.fold_in(key, i), **train_kwargs
            )
            summaries.append((end - done, m))
            done = end
        candidates.append(jax.tree_util.tree_map(np.asarray, jax.device_get(state.playing_variables)))
    train_metrics = {
        k: sum(n * m[k] for n, m in summaries) / max(sum(n for n, _ in summaries), 1) for k in summaries[-1][1]
    }
    komi = config.selfplay.komi if config.selfplay.komi_mode == "fixed" else float(np.round(alpha_empty * 2) / 2)
    quiet = dataclasses.replace(
        search_config(config, generation), dirichlet_fraction=0.0, gumbel_scale=0.0, temperature=0.0
    )
    previous_player = players.Player.from_network("previous", net, previous, config=quiet, precision=config.precision)
    t_gate = time.time()
    scores = []
    for i, cand in enumerate(candidates):
        player = previous_player.replace(name=f"candidate{i}", variables=cand)
        settings = match.MatchSettings(
            games=int(config.gating.games),
            komi=komi,
            seed=generation * 1000 + i,
            max_moves=rules.max_moves,
            score_visits=None,
            opening_moves=int(config.gating.opening_moves),
        )
        games = arena.play_match(player, previous_player, settings)
        wins = sum((r.winner == "black") == (r.black == player.name) and r.winner != "draw" for r in games)
        draws = sum(r.winner == "draw" for r in games)
        scores.append((wins + 0.5 * draws) / max(len(games), 1))
    # Every process plays the same matches; process 0's scores decide for all.
    scores = distributed.agree(scores)
    best = int(np.argmax(scores))
    promoted = scores[best] >= float(config.gating.threshold)
    chosen = candidates[best] if promoted else previous
    selfplay_variables = jax.device_put(chosen, shardings)
    gate = {
        "gating_scores": scores,
        "gating_best": best,
        "gating_promoted": bool(promoted),
        "gate_seconds": time.time() - t_gate,  # the matches' wall time
    }
    return state, train_metrics, gate, selfplay_variables


# Complete self-play games shorter than this fraction of N² on average mean
# self-play has collapsed: healthy runs play 0.8–1.2·N² moves on 9×9 and
# 5×5 and 0.65–0.75·N² on 7×7; collapsed PUCT runs fell to 0.16·N² on 9×9
# and 0.5·N² on 5×5 (docs/design.md §6).
SHORT_GAME_FRACTION = 1 / 2
# Self-play itself passes at the empty board when more complete games open
# with a pass than a uniform first move would, 1/(N² + 1), by a one-sided
# exact binomial test at this level: a random 5×5 net opens 6% of its games
# with a pass (1/26 = 3.8%: not a preference), a collapsing 5×5 run 13%;
# healthy 9×9 runs open with a pass in 0–1% of their games (docs/design.md §6).
OPENING_PASS_P = 0.01
# The net's prior for a pass at the empty board above this is a preference
# for passing, not the largest entry of a near-uniform prior: issue 32's
# 32-simulation run had pass as its argmax at 0.020 (1/82 = 0.012) while no
# search chose it there (docs/design.md §6).
PASS_PRIOR_FRACTION = 0.1


def collapse_warning(board_size: int, m: dict[str, Any]) -> str | None:
    """A warning when self-play looks collapsed into short pass-ended games:
    the complete games' mean length below ``SHORT_GAME_FRACTION``·N², more
    of them opening with a pass than a uniform first move would (one-sided
    exact binomial test against 1/(N² + 1) at ``OPENING_PASS_P``), or the net's
    preferred first move a pass with a prior above ``PASS_PRIOR_FRACTION``
    (``first_move_pass_prior``; without it, any preferred pass). None
    otherwise."""
    problems = []
    length = m.get("avg_game_length", float("nan"))
    if length == length and length < SHORT_GAME_FRACTION * board_size**2:
        ended = m.get("pass_ended_games", float("nan"))
        problems.append(
            f"complete games last {length:.1f} moves on average, under N²/2 = {board_size**2 / 2:g}"
            + (f" ({ended:.0%} ended by two passes)" if ended == ended else "")
        )
    opened = m.get("opening_pass_share", float("nan"))
    games = int(m.get("complete_games", 0) or 0)
    if opened == opened and games > 0:
        uniform = 1.0 / (board_size**2 + 1)
        count = int(m.get("opening_pass_games", round(opened * games)))
        p = stats.binomial_test(count, games, uniform, alternative="greater")
        if p < OPENING_PASS_P:
            problems.append(
                f"{opened:.0%} of the complete games opened with a pass ({count} of {games}; a uniform "
                f"first move: {uniform:.1%}, binomial p = {p:.2g})"
            )
    prior = m.get("first_move_pass_prior", float("nan"))
    if m.get("first_move") == "pass" and not prior <= PASS_PRIOR_FRACTION:
        problems.append(
            "the net's preferred first move is pass"
            + (f" (prior {prior:.2f})" if prior == prior else "")
            + (f"; self-play opened with a pass in {opened:.0%} of its complete games" if opened == opened else "")
        )
    if not problems:
        return None
    return "; ".join(problems) + ": self-play may be collapsing into pass-ended games (docs/design.md §6)"


def _generation_line(gen: int, m: dict[str, Any]) -> str:
    if m.get("reused_selfplay"):
        sp = "self-play reused"
    else:
        sp = (
            f"games {m['games']} ({m['branch_games']} branches) moves {m['moves']} "
            f"B-win {m['black_winrate']:.2f} resign {m['resignations']} "
            f"(false {m['false_resignations']}/{m['no_resign_games']}) len {m['avg_game_length']:.1f} "
            f"(pass-ended {m.get('pass_ended_games', float('nan')):.0%}, "
            f"pass-opened {m.get('opening_pass_share', float('nan')):.0%}) "
            f"komi {m['avg_komi']:+.1f} score err {m['score_error']:.1f}"
            f" (late {m.get('score_error_late', float('nan')):.1f}, β {m.get('beta_late', float('nan')):.2f})"
            f" data α {m.get('data_alpha', float('nan')):+.1f} β {m.get('data_beta', float('nan')):.2f}"
            f" opened {m.get('first_move_top') or '-'} {m.get('first_move_top_share', float('nan')):.0%}"
        )
    gate = ""
    if "gating_scores" in m:
        gate = f" | gate {max(m['gating_scores']):.2f} {'promoted' if m['gating_promoted'] else 'kept'}"
    return (
        f"gen {gen:4d} | net {m['network']} sims {m['simulations']} | {sp}{gate} | "
        f"α∅ {m['alpha_empty']:+.2f} β∅ {m['beta_empty']:.3f} first {m['first_move']} "
        f"(pass prior {m.get('first_move_pass_prior', float('nan')):.3f}) | "
        f"loss {m.get('train_total_loss', float('nan')):.3f} (policy {m.get('train_policy_loss', float('nan')):.3f}, "
        f"value {m.get('train_value_loss', float('nan')):.4f}"
        + (f", ownership {m['train_ownership_loss']:.4f}" if "train_ownership_loss" in m else "")
        + f") | {m['seconds']:.0f}s"
    )
