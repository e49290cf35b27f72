"""The main job: generations of self-play, training and checkpoints (docs/design.md §6, §7, §9).

``train_and_evaluate(config, workdir)`` is what ``python -m saijax.train``
runs; notebooks and tests call it directly. This module is the run's loop;
each of its phases is another module's one job:

* `saijax.learn.run_setup`: the config read once into typed settings, and what
  the run builds from them (rules, meshes, keys, a network's optimizer,
  train step and evaluator, the start or resumed state, the empty-board
  evaluation);
* `saijax.learn.run_selfplay`: a generation's self-play;
* `saijax.learn.gating`: training with weak gating;
* `saijax.learn.run_metrics`: the metrics line, the log line, the collapse warning;
* `saijax.learn.legs`: the time limit, what a leg keeps, the compilation cache.

Each generation, as in SAI's loop:

1. grows the network if the schedule asks for a larger one,
2. *self-play*: plays until ``games_per_generation`` games have finished, in
   jitted lockstep chunks (:func:`play_chunks`: each chunk dispatched before
   the last one's records are collected), with the net that plays,
3. *replay*: writes the generation's training rows to
   ``<workdir>/replay/gen_<generation>.npz`` and a few SGFs to
   ``<workdir>/sgf``, on a thread while step 4 trains on the rows in memory,
4. *training*: ``steps_per_generation`` steps on the window of the last w
   generations (or, with ``training.samples_per_new_row`` r > 0,
   round(r · new rows / batch size) steps); metrics.jsonl's
   ``train_samples_per_new_row`` is steps · batch size / the generation's
   new rows, how often each new row is trained on (KataGo: about 4),
5. *gate* (only with ``gating.enabled``; SAI promotes every trained net):
   candidates exported during step 4 play the net that played step 2, and
   the best takes over self-play if it scores enough,
6. *checkpoint*: saves an orbax checkpoint under ``<workdir>/checkpoints``
   (the trained state, and a gated run's playing net) and appends a metrics
   line to ``<workdir>/metrics.jsonl`` (and TensorBoard events).

With several processes (``config.multihost``, `saijax.learn.distributed`), each
plays its share of the games on its own devices, the rows of all of them go
into the one replay file, training is data-parallel over every device, and
only process 0 writes files and logs (docs/design.md §9).

Re-running the same command resumes after the last checkpoint. A run killed
during step 4 finds its generation's self-play file, if its writing had
finished (it is written atomically), and only retrains; otherwise, or killed
during step 2, it replays that generation. Nothing in the workdir is ever
deleted. Self-play games in flight at the end of a generation carry on with
the next net (their rows are tagged with the generation of the net that
played each move), except across a restart, where they are lost.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import jax

from saijax.core import checkpoints, networks
from saijax.learn import config as config_lib
from saijax.learn import distributed, gating, legs, replay, run_metrics, run_selfplay, run_setup, training
from saijax.learn.legs import (
    compile_seconds,
    leg_files,
    predicted_generation_seconds,
    process_start_time,
    use_compilation_cache,
)
from saijax.learn.run_metrics import (
    OPENING_PASS_P,
    PASS_PRIOR_FRACTION,
    SHORT_GAME_FRACTION,
    MetricsWriter,
    collapse_warning,
    logged_generations,
)
from saijax.learn.run_selfplay import ChunkLoop, play_chunks, selfplay_evaluations
from saijax.learn.run_setup import search_config, selfplay_agent, selfplay_config

__all__ = [
    "train_and_evaluate",
    "validate_and_connect",
    "play_chunks",
    "ChunkLoop",
    "selfplay_evaluations",
    "search_config",
    "selfplay_agent",
    "selfplay_config",
    "MetricsWriter",
    "logged_generations",
    "collapse_warning",
    "SHORT_GAME_FRACTION",
    "OPENING_PASS_P",
    "PASS_PRIOR_FRACTION",
    "leg_files",
    "predicted_generation_seconds",
    "process_start_time",
    "use_compilation_cache",
    "compile_seconds",
]


class _Run:
    """One call of :func:`train_and_evaluate`: what lasts across its
    generations (the state, the replay window, self-play's slots), and each
    generation's phases as methods, in the paper's order."""

    def __init__(self, run: run_setup.RunSetup, workdir, *, progress, log, ckpt, cache_dir, primary, limit):
        self.run, self.settings = run, run.settings
        self.workdir, self.progress, self.log, self.primary = workdir, progress, log, primary
        self.ckpt, self.cache_dir, self.limit = ckpt, cache_dir, limit
        self.buffer = replay.ReplayBuffer(os.path.join(workdir, "replay"), self.settings.board_size)
        self.writer = MetricsWriter(workdir) if primary else None
        self.selfplay = run_selfplay.SelfPlay(
            run, self.buffer, os.path.join(workdir, "sgf"), primary=primary, progress=progress, log=log
        )
        self.built = self.state = self.selfplay_variables = None
        self.compiled_before = compile_seconds()
        self.summary: dict[str, Any] = {}

    # Start or resume.

    def start_or_resume(self) -> int:
        """Builds the net of generation 0, or restores the latest checkpoint;
        returns the first generation to play."""
        ckpt, log = self.ckpt, self.log
        latest = ckpt.latest_generation()
        metrics_path = os.path.join(self.workdir, "metrics.jsonl")  # every process checks (a shared workdir)
        done = sorted(logged_generations(metrics_path)) if latest is None else []
        if done:
            raise checkpoints.CheckpointError(
                f"{metrics_path} has lines for generations {done[0]}-{done[-1]} but {ckpt.directory} has no "
                "checkpoint: starting again from generation 0 would mix two runs' metrics. Restore the "
                "checkpoint (checkpoints/<generation>/), or move metrics.jsonl aside to start afresh"
            )
        start = self.run.fresh_start(log) if latest is None else self.run.resume(ckpt, latest, log)
        self.built, self.state, self.selfplay_variables = start.built, start.state, start.selfplay_variables
        # A kill while the metrics line was appended (a torn last line) or
        # between the checkpoint and the line: drop the torn line, restore the line.
        if latest is not None and self.primary:
            self.writer.repair(log)
            if latest not in self.writer.generations() and "metrics" in start.extra:
                self.writer.write(latest, start.extra["metrics"])
        return start.generation

    # Growth.

    def grow(self, gen: int, keys: run_setup.GenerationKeys, metrics: dict[str, Any]):
        """The network the schedule asks for at ``gen``, grown from the last
        one on the replay window (docs/design.md §7)."""
        settings, train, buffer = self.settings, self.settings.training, self.buffer
        want = settings.network_spec(gen)
        if want == self.built.spec:
            return
        old_spec = self.built.spec
        self.log(
            f"growing the network {old_spec.blocks}x{old_spec.filters} -> {want.blocks}x{want.filters} "
            f"(training.growth {train.growth})"
        )
        metrics.update(growth_from=f"{old_spec.blocks}x{old_spec.filters}", growth_mode=train.growth)
        if train.growth == "widen":
            self.built = self.run.build(want)
            self.state = training.widen_network(
                self.state, old_spec, self.built.net, self.built.optimizer, keys.growth, mesh=self.run.mesh
            )
            self.selfplay_variables = None
            self.selfplay.reset()
            return
        have = [g for g in buffer.available_generations() if g < gen]
        if have:
            buffer.load_window(have[-1], settings.schedules.window_size(gen))
        self.built = self.run.build(want)
        # Without replay data (e.g. a moved replay directory) the new net starts untrained.
        grown = training.grow_network(
            self.built.net,
            self.built.optimizer,
            self.built.train_step,
            key=keys.growth,
            sample_batch=lambda k: buffer.sample(
                distributed.process_key(k), train.local_batch_size, value_head=settings.network.value_head
            ),
            num_steps=train.steps_per_generation if have else 0,
            start_step=int(jax.device_get(self.state.step)),
            mesh=self.run.mesh,
            ema=train.ema,
            learning_rate=self.run.learning_rate(gen * train.steps_per_generation) if train.by_generation else None,
        )
        self.state = grown.state
        self.selfplay_variables = None  # the grown net takes over self-play
        metrics.update({f"growth_{k}": v for k, v in grown.metrics.items()})
        self.selfplay.reset()

    def playing_variables(self):
        """The net that plays: the last trained one, or in a gated run the
        last promoted one (the training chain goes on from its own weights
        whatever the gate decides); with weight averaging, the average."""
        return self.state.playing_variables if self.selfplay_variables is None else self.selfplay_variables

    # Training (and the gate).

    def train(self, gen: int, keys, variables, alpha0, new_rows, metrics: dict[str, Any], times):
        """Trains on the window ending with this generation's rows (given in
        memory: the file may still be being written); in a gated run, the
        candidates exported meanwhile play ``variables``, the net that played."""
        settings, train, buffer = self.settings, self.settings.training, self.buffer
        t_tr = time.time()
        buffer.load_window(gen, settings.schedules.window_size(gen), fresh={gen: new_rows})
        times["replay_seconds"] += time.time() - t_tr
        steps = train.steps(new_rows.num_rows)
        if train.by_generation:
            self.state = training.set_learning_rate(
                self.state, self.run.learning_rate(gen * train.steps_per_generation)
            )
        bar = run_metrics.progress_bar(steps, f"gen {gen} training", self.progress)

        sample = buffer.sampler(train.local_batch_size, settings.network.value_head, key_fn=distributed.process_key)
        fuse = dict(steps_per_call=train.steps_per_call, on_steps=bar.update if bar is not None else None)
        if settings.gating.enabled:
            self.state, train_metrics, gate, self.selfplay_variables = gating.train_with_gating(
                settings.gating,
                self.run.rules,
                self.built.net,
                self.state,
                variables,
                self.built.train_step,
                sample,
                steps,
                keys.train,
                alpha0,
                gen,
                settings.search_config(gen),
                **fuse,
            )
            times["gate_seconds"] = gate.pop("gate_seconds")
            metrics.update(gate)
        else:
            self.state, train_metrics = training.train_on_window(
                self.state, self.built.train_step, sample, steps, keys.train, **fuse
            )
            self.selfplay_variables = None
        if bar is not None:
            bar.close()
        metrics.update({f"train_{k}": v for k, v in train_metrics.items()})
        metrics["window_rows"] = int(buffer.num_rows)
        metrics["train_steps"] = steps
        metrics["train_samples_per_new_row"] = training.samples_per_new_row(steps, train.batch_size, new_rows.num_rows)
        # Training's own time: the window's loading and the gate's matches apart.
        metrics["train_seconds"] = time.time() - t_tr - times["gate_seconds"]

    # Checkpoint and metrics.

    def checkpoint_and_metrics(self, gen: int, t0: float, metrics: dict[str, Any], times):
        """The generation's checkpoint and metrics line; returns its checkpoint folder."""
        settings, built = self.settings, self.built
        metrics["network"] = f"{built.spec.blocks}x{built.spec.filters}"
        metrics["network_params"] = networks.param_count(self.state.params)
        metrics["games_in_flight"] = sum(distributed.allgather(self.selfplay.collector.pending_games))
        metrics["simulations"] = settings.schedules.simulations(gen)
        # This generation's net (the one checkpoint `gen` holds for play):
        # its own fair-komi estimate and preferred first move.
        alpha_new, beta_new, logits_new = run_setup.empty_board_eval(
            built.evaluator, self.playing_variables(), self.run.rules
        )
        metrics.update(
            alpha_empty=alpha_new,
            beta_empty=beta_new,
            **run_setup.first_move(self.run.rules, logits_new),
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
            metrics["compilation_cache_bytes"] = legs.dir_bytes(self.cache_dir)
        t_ckpt = time.time()
        ckpt_dir = self.ckpt.save(
            gen,
            state=self.state,
            rng_key=self.run.keys.checkpoint(gen),
            network=built.spec,
            replay_dir=self.buffer.directory,
            extra={"alpha_empty": alpha_new, "beta_empty": beta_new, "metrics": run_metrics.jsonable(metrics)},
            selfplay_variables=self.selfplay_variables,
        )
        metrics["checkpoint_seconds"] = time.time() - t_ckpt
        metrics["seconds"] = self.limit.clock() - t0
        if self.primary:
            self.writer.write(gen, metrics)
        self.log(run_metrics.generation_line(gen, metrics))
        warning = collapse_warning(settings.board_size, metrics)
        if warning:
            self.log(f"warning: generation {gen}: {warning}")
        self.limit.record(metrics)
        return ckpt_dir

    # The leg's time limit.

    def out_of_time(self, gen: int, metrics: dict[str, Any]) -> bool:
        """A time-limited leg: whether the next generation would end past the limit (process 0 decides)."""
        settings, nxt = self.settings, gen + 1
        if not self.limit.enabled or nxt >= settings.generations:
            return False
        recompiles = settings.network_spec(nxt) != self.built.spec or not self.selfplay.compiled(
            settings.schedules.simulations(nxt)
        )
        reason = self.limit.stop_reason(gen, metrics, recompiles=recompiles)
        if reason is None:
            return False
        self.log(legs.leg_message(self.workdir, gen, reason))
        self.summary.update(stopped_by_time_limit=True, leg_files=leg_files(self.workdir, gen))
        return True

    # One generation, and the run.

    def generation(self, gen: int) -> bool:
        """Generation ``gen``: self-play, replay, training (and the gate), the
        checkpoint; False when the leg's time is up."""
        t0 = self.limit.clock()
        keys = self.run.keys.generation(gen)
        metrics: dict[str, Any] = {}
        times = dict.fromkeys(
            ("collect_seconds", "selfplay_wait_seconds", "replay_seconds", "replay_write_seconds", "gate_seconds"),
            0.0,
        )
        self.grow(gen, keys, metrics)

        # Self-play, with the playing net at its own empty-board α_∅, β_∅.
        variables = distributed.to_local(self.playing_variables(), self.run.selfplay_mesh)
        alpha0, beta0, _ = run_setup.empty_board_eval(self.built.evaluator, variables, self.run.rules)
        t_sp = time.time()
        stats, new_rows, written = self.selfplay.play(gen, keys, self.built, variables, alpha0, beta0, times)
        # The self-play komi distribution's centre and scale (the playing net's α_∅, β_∅).
        stats.update(selfplay_alpha_empty=alpha0, selfplay_beta_empty=beta0)
        metrics.update(stats)
        metrics["selfplay_seconds"] = time.time() - t_sp

        # Training on the replay window (its new rows from memory), and the gate.
        self.train(gen, keys, variables, alpha0, new_rows, metrics, times)
        if written is not None:
            t_join = time.time()
            times["replay_write_seconds"] = written()
            times["replay_seconds"] += time.time() - t_join
            # The rows are on disk before the checkpoint that says the generation is done.
            distributed.barrier(f"replay generation {gen} written")

        # The checkpoint, and the leg's time limit.
        ckpt_dir = self.checkpoint_and_metrics(gen, t0, metrics, times)
        self.summary.update(checkpoint=ckpt_dir, generation=gen)
        return not self.out_of_time(gen, metrics)

    def final_report(self) -> dict[str, Any]:
        """The summary, from the latest net."""
        alpha0, beta0, logits0 = run_setup.empty_board_eval(
            self.built.evaluator, self.playing_variables(), self.run.rules
        )
        self.summary.update(
            fair_komi=alpha0,
            beta_empty=beta0,
            **run_setup.first_move(self.run.rules, logits0),
            checkpoints=self.ckpt.directory,
            sgf_dir=self.selfplay.sgf_dir,
            metrics=os.path.join(self.workdir, "metrics.jsonl"),
            workdir=self.workdir,
        )
        return self.summary


def validate_and_connect(config, connect: Callable[[], None] | None = None) -> None:
    """Validates a run's config once, before anything compiles (`config_lib.validate`).

    With ``config.multihost``, every field is checked before ``connect``
    joins the other processes (so a bad field fails at once, not after the
    wait for them), and the batches are checked against all processes'
    devices after it (`config_lib.validate_sharding`). ``connect`` defaults
    to `distributed.initialize`, which reads the processes from the
    environment and does nothing when this process has already joined.

    Raises:
        ValueError: naming the bad field, or a bad flag of ``connect``'s.
    """
    if not config.multihost:
        config_lib.validate(config)
        return
    config_lib.validate(config, device_count=1)  # every field but the batches' divisibility, before connecting
    (distributed.initialize if connect is None else connect)()
    config_lib.validate_sharding(config)


def train_and_evaluate(
    config,
    workdir: str,
    *,
    progress: bool = True,
    log=print,
    clock=time.time,
    started: float | None = None,
    connect: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Runs (or resumes) a whole training run. Returns a final summary dict.

    The config is validated first, once (:func:`validate_and_connect`). With
    ``config.multihost``, ``connect`` then joins the other processes
    (default `distributed.initialize`, which reads them from the
    environment; ``python -m saijax.train`` passes it its flags); every process then calls this
    with the same config and workdir, which must be on a file system all of
    them see. Only process 0 logs and shows progress.

    With ``config.time_limit_minutes`` > 0 the run is one *leg*: after each
    generation it predicts the next one's wall time
    (:func:`predicted_generation_seconds`) and stops, its checkpoint written,
    when that would end past the limit, counted on ``clock`` from
    ``started`` (default: this process's start, so imports, compilation and
    restoring count). The summary then has ``stopped_by_time_limit`` and
    ``leg_files``, what the next leg needs (:func:`leg_files`). Every
    process stops at the same generation (process 0 decides).

    The config is read once (`run_setup.setup`); the generations' phases are
    :class:`_Run`'s methods: start or resume, grow, self-play
    (`run_selfplay.SelfPlay`), train (and gate, `gating`), checkpoint and
    metrics, the time limit (`legs.TimeLimit`).
    """
    started = process_start_time() if started is None else started
    validate_and_connect(config, connect)
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
        run = run_setup.setup(config)
        loop = _Run(
            run,
            workdir,
            progress=progress,
            log=log,
            ckpt=ckpt,
            cache_dir=cache_dir,
            primary=primary,
            limit=legs.TimeLimit(run.settings.time_limit_minutes, clock=clock, started=started),
        )
        try:
            for gen in range(loop.start_or_resume(), run.settings.generations):
                if not loop.generation(gen):
                    break
            summary = loop.final_report()
        finally:
            if loop.writer is not None:
                loop.writer.close()
    return summary
