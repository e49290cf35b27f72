"""saijax: SAI (Sensible Artificial Intelligence) for Go in JAX."""

__version__ = "0.1.0"

from saijax import _moved

_moved.install()
