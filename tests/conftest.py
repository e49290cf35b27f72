"""Shared pytest setup: CPU-friendly JAX defaults and GNU Go fixtures.

GNU Go is an external program. Tests that need it take the ``gnugo_path``
fixture (or ``gnugo``, a running GTP client), which skips the test when
GNU Go is missing, unless ``SAIJAX_REQUIRE_GNUGO=1`` is set (CI sets it): then
a missing GNU Go is a failure, so the differential tests cannot be skipped
silently.
"""

import os

# Default to the CPU backend so the suite behaves the same on machines with an
# accelerator. setdefault keeps an explicit JAX_PLATFORMS from the caller. The
# device count is deliberately left alone: sharding tests start their own
# subprocess with XLA_FLAGS=--xla_force_host_platform_device_count=8.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import pytest  # noqa: E402

from saijax import gtp_client  # noqa: E402

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

    Started with :func:`saijax.gtp_client.gnugo_argv` (Chinese rules,
    positional superko, no suicide, level 1) and closed after the module.
    Tests should set ``boardsize``/``clear_board`` themselves.
    """
    del gnugo_path  # only for the skip/fail
    with gtp_client.GtpClient(gtp_client.gnugo_argv(level=1), timeout=60.0) as engine:
        yield engine
