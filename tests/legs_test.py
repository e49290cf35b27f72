"""Time-limited legs (``--config.time_limit_minutes``), the phases' wall time
in ``metrics.jsonl`` and the persistent compilation cache, on configs/tiny.py.

The time limit is tested with a fake clock: every checkpoint written makes
50 seconds pass, and nothing else does, so a generation "takes" 50 seconds
and a one-minute limit leaves room for exactly one generation per leg.
"""

import copy
import json
import os
import shutil
import time

import jax
import pytest
from conftest import TINY

from saijax.cli import train
from saijax.core import checkpoints
from saijax.learn import config as config_lib
from saijax.learn import pipeline

PHASES = (
    "compile_seconds",
    "collect_seconds",
    "replay_seconds",
    "checkpoint_seconds",
    "gate_seconds",
    "selfplay_seconds",
    "train_seconds",
    "seconds",
)


class _FakeClock:
    """A clock that only moves when a checkpoint is written."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        return self.now


def _metrics(workdir):
    with open(os.path.join(workdir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f]


def _leg(config, workdir, clock, monkeypatch):
    """One leg on the fake clock: each checkpoint takes clock.step seconds
    and compiling takes none (the clock is fake, compile time is real)."""
    save = checkpoints.Checkpointer.save

    def slow_save(ckpt, generation, **kwargs):
        clock.now += clock.step
        return save(ckpt, generation, **kwargs)

    monkeypatch.setattr(checkpoints.Checkpointer, "save", slow_save)
    monkeypatch.setattr(pipeline, "compile_seconds", lambda: 0.0)
    log = []
    summary = pipeline.train_and_evaluate(config, workdir, progress=False, log=log.append, clock=clock, started=0.0)
    monkeypatch.undo()
    return summary, "\n".join(str(line) for line in log)


@pytest.fixture(scope="module")
def legs(tmp_path_factory):
    """Leg 1 of a 3-generation tiny run under a one-minute limit, then leg 2
    from a copy of the files leg 1 said to keep, sharing its compilation cache."""
    base = tmp_path_factory.mktemp("legs")
    cache = str(base / "cache")
    config = config_lib.load_config(TINY)
    with config.unlocked():
        config.generations = 3
        config.time_limit_minutes = 1.0
        config.compilation_cache_dir = cache
    hits = []

    def listener(event, **kwargs):
        if event == "/jax/compilation_cache/cache_hits":
            hits.append(event)

    jax.monitoring.register_event_listener(listener)
    monkeypatch = pytest.MonkeyPatch()
    first, log1 = _leg(config, str(base / "leg1"), _FakeClock(50.0), monkeypatch)
    hits_first = len(hits)
    second_dir = base / "leg2"
    (second_dir / "checkpoints").mkdir(parents=True)
    kept = first["leg_files"]
    shutil.copytree(kept[0], second_dir / "checkpoints" / os.path.basename(kept[0]))
    for path in kept[1:]:
        shutil.copy(path, second_dir / os.path.basename(path))
    second, log2 = _leg(copy.deepcopy(config), str(second_dir), _FakeClock(50.0), monkeypatch)
    return dict(
        first=first,
        second=second,
        log1=log1,
        log2=log2,
        dir1=str(base / "leg1"),
        dir2=str(second_dir),
        cache=cache,
        hits_first=hits_first,
        hits_second=len(hits) - hits_first,
    )


def test_the_limit_stops_leg_1_after_its_first_generation_and_says_what_to_keep(legs):
    first = legs["first"]
    assert first["stopped_by_time_limit"] and first["generation"] == 0
    assert [m["generation"] for m in _metrics(legs["dir1"])] == [0]
    assert sorted(os.listdir(os.path.join(legs["dir1"], "checkpoints"))) == ["0"]
    assert first["leg_files"] == pipeline.leg_files(legs["dir1"], 0)
    assert "time limit: 0.83 of 1 minutes used after generation 0" in legs["log1"]
    for path in first["leg_files"]:
        assert path in legs["log1"]
    assert "resumes at generation 1" in legs["log1"]


def test_leg_2_resumes_from_the_kept_files_alone_to_the_next_generation(legs):
    second = legs["second"]
    assert os.listdir(os.path.join(legs["dir2"], "replay")) == ["gen_000001.npz"]  # its own self-play only
    assert second["stopped_by_time_limit"] and second["generation"] == 1
    metrics = _metrics(legs["dir2"])
    assert [m["generation"] for m in metrics] == [0, 1]
    assert metrics[0] == _metrics(legs["dir1"])[0]
    assert metrics[1]["selfplay_evaluations"] > 0
    assert "resuming from" in legs["log2"] and "resumes at generation 2" in legs["log2"]


def test_every_generation_logs_the_wall_time_of_its_phases(legs):
    for m in _metrics(legs["dir2"]):
        for name in PHASES:
            assert m[name] >= 0.0, name
        assert m["seconds"] == pytest.approx(50.0)  # the fake clock's generation


def test_the_compilation_cache_is_written_and_read_back_by_the_next_leg(legs):
    names = os.listdir(legs["cache"])
    assert any(name.startswith("jit_chunk-") for name in names), names  # the self-play chunk
    assert _metrics(legs["dir1"])[0]["compilation_cache_bytes"] > 0
    # Leg 2 builds its jitted functions anew: what it does not compile, it loads.
    assert legs["hits_second"] > 0


def test_the_prediction_adds_compilation_only_when_something_new_compiles():
    last = {"seconds": 100.0, "compile_seconds": 40.0}
    assert pipeline.predicted_generation_seconds(last, recompiles=False, compile_estimate=40.0) == pytest.approx(66.0)
    assert pipeline.predicted_generation_seconds(last, recompiles=True, compile_estimate=40.0) == pytest.approx(106.0)


def test_process_start_is_before_now_and_the_limit_is_validated():
    assert time.time() - 86400 < pipeline.process_start_time() <= time.time()
    config = config_lib.load_config(TINY)
    with config.unlocked():
        config.time_limit_minutes = -1.0
    with pytest.raises(ValueError, match="time_limit_minutes must be >= 0"):
        config_lib.validate(config)


def test_the_final_report_of_a_stopped_leg_names_the_generation_it_reached():
    config = config_lib.load_config(TINY)
    with config.unlocked():
        config.generations = 3
        config.time_limit_minutes = 1.0
    summary = dict(fair_komi=1.0, beta_empty=0.5, first_move="C3", generation=0, stopped_by_time_limit=True)
    report = train._final_report(summary, config, TINY)
    assert "after generation 0:" in report
    assert "stopped at --config.time_limit_minutes=1 after generation 0 of 3" in report


def test_the_cache_can_be_turned_off(tmp_path):
    config = config_lib.load_config(TINY)
    with config.unlocked():
        config.compilation_cache = False
    assert pipeline.use_compilation_cache(config, str(tmp_path)) is None
    assert not jax.config.jax_enable_compilation_cache
    with config.unlocked():
        config.compilation_cache = True
    assert pipeline.use_compilation_cache(config, str(tmp_path)) == str(tmp_path / "compilation_cache")
    assert jax.config.jax_compilation_cache_dir == str(tmp_path / "compilation_cache")
