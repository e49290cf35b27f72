"""saijax: SAI (Sensible Artificial Intelligence) for Go in JAX."""

__version__ = "0.1.0"
