"""What a benchmark's figures were measured on: the device and the versions.

Every benchmark that writes JSON (benchmarks/selfplay.py and training.py with
``--json``, gpu.py's section files, gpu_leg.py's ``leg.json``) records
:func:`describe`'s dictionary under ``"provenance"``, so that no result names
its device only in prose.

It imports no JAX unless asked for the devices (gpu_leg.py's process imports
neither saijax nor JAX: its devices are nvidia-smi's).
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("jax", "jaxlib", "flax", "optax", "chex", "orbax-checkpoint", "mctx", "pgx", "numpy")


def versions(paths: list[str] | None = None) -> dict[str, str]:
    """Python, the platform and each of ``PACKAGES`` ("not installed" where it
    is not), and any JAX CUDA plugin that is installed, found on ``sys.path``
    and ``paths``."""
    search = [*(paths or []), *sys.path]
    found = {"python": sys.version.split()[0], "platform": platform.platform()}
    installed = {}
    for dist in importlib.metadata.distributions(path=search):
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        installed.setdefault(name, dist.version)  # the first on the path, as an import finds it
    for package in PACKAGES:
        found[package] = installed.get(package, "not installed")
    for name in sorted(installed):
        if name.startswith("jax-cuda"):
            found[name] = installed[name]
    return found


def _nvidia_smi() -> str | None:
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = smi.stdout.strip().splitlines() if smi.returncode == 0 else []
    return lines[0] if lines else None


def device(jax_devices: bool = True) -> dict[str, Any]:
    """The backend and devices as JAX sees them (with ``jax_devices``) and
    nvidia-smi's GPU, driver and memory line where there is one."""
    found: dict[str, Any] = {}
    if jax_devices:
        import jax

        devices = jax.devices()
        found["backend"] = jax.default_backend()
        found["devices"] = f"{len(devices)} x {devices[0].device_kind}"
    smi = _nvidia_smi()
    if smi is not None:
        found["nvidia-smi"] = smi
    return found


def commit() -> str | None:
    """The checkout's commit (short), with "+changes" when the tracked files differ from it."""
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10)  # fmt: skip
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", REPO, "diff", "--quiet", "HEAD"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+changes" if dirty.returncode == 1 else "")


def describe(jax_devices: bool = True, paths: list[str] | None = None) -> dict[str, Any]:
    """``{"device": ..., "versions": ..., "saijax_commit": ...}`` for a result file."""
    return {"device": device(jax_devices), "versions": versions(paths), "saijax_commit": commit()}
