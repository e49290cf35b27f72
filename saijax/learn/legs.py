"""A run's legs (README, "Long runs in legs"): the time limit, what a leg keeps for
the next, and the compilation cache and compile time the limit counts.

A run with ``time_limit_minutes`` > 0 is one leg: after each generation
:class:`TimeLimit` predicts the next one's wall time
(:func:`predicted_generation_seconds`: the last one's without its
compilation, plus the most a generation has spent compiling when the next
compiles something new) and the leg stops when that would end past the
limit. :func:`leg_files` is what the next leg needs. ``saijax.learn.pipeline``
re-exports the public names.
"""

from __future__ import annotations

import os
import time
from typing import Any

import jax

from saijax.learn import distributed

__all__ = [
    "TimeLimit",
    "compile_seconds",
    "process_start_time",
    "use_compilation_cache",
    "dir_bytes",
    "predicted_generation_seconds",
    "leg_files",
    "leg_message",
]


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


def dir_bytes(path: str | None) -> int:
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


def leg_message(workdir: str, generation: int, reason: str) -> str:
    """The log's word on a leg that stops after ``generation``: ``reason``, what to keep, how to go on."""
    files = leg_files(workdir, generation)
    size = dir_bytes(files[0]) + sum(os.path.getsize(f) for f in files[1:] if os.path.exists(f))
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


class TimeLimit:
    """A leg's time limit: ``minutes`` (0: none) on ``clock``, counted from ``started``.

    :meth:`record` takes each generation's metrics (its ``compile_seconds``);
    :meth:`stop_reason` says whether the leg stops after a generation.
    """

    def __init__(self, minutes: float, *, clock, started: float):
        self.seconds = 60.0 * float(minutes or 0)
        self.clock, self.started = clock, started
        # The most a generation of this process has spent compiling: what a
        # generation that compiles something new is expected to add.
        self.compile_estimate = 0.0

    @property
    def enabled(self) -> bool:
        return self.seconds > 0

    def record(self, metrics: dict[str, Any]) -> None:
        """A generation's metrics line, written."""
        self.compile_estimate = max(self.compile_estimate, metrics["compile_seconds"])

    def stop_reason(self, gen: int, last: dict[str, Any], *, recompiles: bool) -> str | None:
        """Why the leg stops after generation ``gen`` (whose metrics are ``last``), or None to go on.

        It stops when generation ``gen`` + 1, predicted from ``last`` (and
        ``recompiles``: whether it compiles something new), would end past the
        limit; every process stops at the same generation (process 0 decides).
        """
        if not self.enabled:
            return None
        elapsed = self.clock() - self.started
        need = predicted_generation_seconds(last, recompiles=recompiles, compile_estimate=self.compile_estimate)
        if not distributed.agree(elapsed + need > self.seconds):
            return None
        return (
            f"time limit: {elapsed / 60:.2f} of {self.seconds / 60:g} minutes used after generation "
            f"{gen}; generation {gen + 1} is predicted to take {need / 60:.2f} more, so this leg stops here"
        )
