"""Shared pytest setup: CPU-friendly JAX defaults, GNU Go fixtures, and the
helpers several test modules share.

Helpers (plain functions, importable as ``from conftest import ...``: pytest
puts this folder on ``sys.path``, and so do the scripts the tests run in
subprocesses):

- :func:`training_config`: a hand-built ``training`` config section, small
  and fast, for tests that build a train step or an optimizer directly.
- :func:`train_command`: the ``python -m saijax.train`` command line for
  ``configs/tiny.py`` (or another config) and a workdir.
- :func:`as_format_1`: rewrites a checkpoint's metadata as format 1.
- :func:`fake_device_env` and the ``fake_devices`` fixture: a Python script
  in a subprocess whose JAX sees several fake CPU devices
  (``XLA_FLAGS=--xla_force_host_platform_device_count=N``), for sharding tests.

GNU Go is an external program. Tests that need it take the ``gnugo_path``
fixture (or ``gnugo``, a running GTP client), which skips the test when
GNU Go is missing, unless ``SAIJAX_REQUIRE_GNUGO=1`` is set (CI sets it): then
a missing GNU Go is a failure, so the differential tests cannot be skipped
silently.
"""

import os

# Default to the CPU backend so the suite behaves the same on machines with an
# accelerator. setdefault keeps an explicit JAX_PLATFORMS from the caller:
# `make test-gpu` sets JAX_PLATFORMS=cuda,cpu, and its pytest-xdist workers inherit
# it. The device count is deliberately left alone: sharding tests start their
# own subprocess with fake CPU devices (the ``fake_devices`` fixture below),
# also under `make test-gpu`.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import ml_collections  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from saijax.play import gtp_client  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, "tests")
TINY = os.path.join(REPO, "configs", "tiny.py")


def training_config(**overrides) -> ml_collections.ConfigDict:
    """A hand-built ``training`` section: Adam at 3e-3, batch 32, constant
    rate, 10 steps a generation; keyword arguments override fields."""
    config = ml_collections.ConfigDict(
        dict(
            steps_per_generation=10,
            batch_size=32,
            optimizer="adam",
            learning_rate=3e-3,
            lr_schedule="constant",
            lr_boundaries=[],
            lr_values=[],
            momentum=0.9,
            nesterov=True,
            l2=1e-4,
            value_weight=2.8,
            score_weight=20.0,
        )
    )
    config.update(overrides)
    return config


def train_command(workdir, *flags, config: str = TINY) -> list[str]:
    """``python -m saijax.train --config=CONFIG --workdir=WORKDIR --noprogress
    FLAGS...`` as an argv list (run it with ``cwd=REPO``)."""
    return [
        sys.executable,
        "-m",
        "saijax.train",
        f"--config={config}",
        f"--workdir={workdir}",
        "--noprogress",
        *flags,
    ]


def as_format_1(workdir, generation: int) -> None:
    """Rewrites the metadata of ``<workdir>/checkpoints/<generation>`` as
    format 1 wrote it, before the network spec recorded ``beta_scale``."""
    path = os.path.join(str(workdir), "checkpoints", str(generation), "meta", "metadata")
    with open(path) as f:
        meta = json.load(f)
    del meta["beta_scale"]
    meta["format_version"] = 1
    with open(path, "w") as f:
        json.dump(meta, f)


def fake_device_env(devices: int = 8, *xla_flags: str) -> dict[str, str]:
    """This process's environment for a child whose JAX sees `devices` fake
    CPU devices; `xla_flags` are added to XLA_FLAGS."""
    flags = " ".join([f"--xla_force_host_platform_device_count={devices}", *xla_flags])
    return dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")


class FakeDeviceRun:
    """A Python script running in a subprocess with fake CPU devices."""

    def __init__(self, script: str, devices: int = 8, xla_flags=()):
        self.process = subprocess.Popen(
            [sys.executable, "-c", script],
            env=fake_device_env(devices, *xla_flags),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._output = None

    def wait(self, timeout: float = 300) -> str:
        """Waits for the script (once; later calls return at once) and
        returns its stdout; fails the test with its stderr if it failed."""
        if self._output is None:
            self._output = self.process.communicate(timeout=timeout)
        stdout, stderr = self._output
        assert self.process.returncode == 0, stderr[-3000:]
        return stdout

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


@pytest.fixture(scope="module")
def fake_devices():
    """``start(script, devices=8, xla_flags=())`` starts `script` (Python
    source) in a subprocess with `devices` fake CPU devices and returns a
    :class:`FakeDeviceRun` at once, so the run overlaps the module's other
    tests. The scripts can ``sys.path.insert(0, conftest.TESTS)`` to import
    the test modules. Runs still going at the module's end are killed."""
    runs = []

    def start(script: str, devices: int = 8, xla_flags=()) -> FakeDeviceRun:
        runs.append(FakeDeviceRun(script, devices, xla_flags))
        return runs[-1]

    yield start
    for run in runs:
        run.kill()


_INSTALL_HINT = "apt-get install -y gnugo"


def _require_gnugo() -> str:
    path = gtp_client.find_gnugo()
    if path is not None:
        return path
    if os.environ.get("SAIJAX_REQUIRE_GNUGO") == "1":
        pytest.fail(
            "GNU Go is required (SAIJAX_REQUIRE_GNUGO=1) but was not found on "
            f"PATH or at /usr/games/gnugo: {_INSTALL_HINT}",
            pytrace=False,
        )
    pytest.skip(f"GNU Go not installed: {_INSTALL_HINT}")


@pytest.fixture(scope="session")
def gnugo_path() -> str:
    """Path of the GNU Go executable; skips (or fails under CI) if missing."""
    return _require_gnugo()


@pytest.fixture(scope="module")
def gnugo(gnugo_path):
    """A GNU Go GTP engine under saijax's rules, shared by one test module.

    Started with :func:`saijax.play.gtp_client.gnugo_argv` (Chinese rules,
    positional superko, no suicide, level 1) and closed after the module.
    Tests should set ``boardsize``/``clear_board`` themselves.
    """
    del gnugo_path  # only for the skip/fail
    with gtp_client.GtpClient(gtp_client.gnugo_argv(level=1), timeout=60.0) as engine:
        yield engine


def empty_step_fields(t_len: int, batch: int, board_size: int, *, ownership: bool = False) -> dict:
    """Zero arrays for every field of a [t_len, batch] ``selfplay.StepRecord``
    (all slots inactive), for tests that hand-make records for the GameCollector;
    with ``ownership`` also ``final_ownership``."""

    def z(dtype, *extra):
        return np.zeros((t_len, batch) + extra, dtype)

    n = board_size
    fields = dict(
        planes=z(np.uint8, n, n, 2),
        to_play=z(np.int8),
        signed_komi=z(np.float32),
        policy=z(np.float32, n * n + 1),
        game_id=z(np.int32),
        move_number=z(np.int32),
        is_branch=z(bool),
        active=z(bool),
        action=z(np.int32),
        blunder=z(bool),
        root_alpha=z(np.float32),
        branched=z(bool),
        finished=z(bool),
        winner=z(np.int8),
        margin=z(np.float32),
        resigned=z(bool),
        may_resign=z(bool),
        would_resign=z(np.int8),
        komi=z(np.float32),
        length=z(np.int32),
    )
    if ownership:
        fields["final_ownership"] = z(np.int8, n * n)
    return fields
