"""Elementary value checks, shared by everything that validates settings.

The rules of a setting live with the class that uses it (``search.Agent``
validates the λ/μ agent, ``search.SearchConfig`` the search settings, ...);
code that reads settings from elsewhere (a run config, command-line flags)
checks them by building that class, and names its own field or flag in the
error (:func:`build`, :func:`naming`). What is left here is what every
validator needs: is this an int, a finite number?
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

__all__ = ["build", "is_int", "is_number", "naming"]

T = TypeVar("T")


def is_int(x: Any) -> bool:
    """Whether ``x`` is an int, Python's or NumPy's (a bool is not)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_number(x: Any) -> bool:
    """Whether ``x`` is a finite int or float, Python's or NumPy's (a bool is not)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer, np.floating)):
        return False
    return is_int(x) or math.isfinite(x)


@contextlib.contextmanager
def naming(label: str) -> Iterator[None]:
    """Re-raises a ValueError of the block as ``"{label}: {message}"`` (e.g. ``--control='E': ...``)."""
    try:
        yield
    except ValueError as e:
        raise ValueError(f"{label}: {e}") from None


def build(cls: Callable[..., T], values: Mapping[str, Any], name: Callable[[str], str] = str) -> T:
    """``cls(**values)`` for a dataclass that validates itself, naming the value it rejects.

    On a ValueError the values are given again one at a time, in the order of
    ``cls``'s fields (the rest at ``cls``'s defaults), and the first one whose
    addition fails is named in the message, with its value:
    ``"{name(field)}={value!r}: {message}"``, followed by ``(with ...)`` for
    the values given before it that are not ``cls``'s defaults (a rule may
    tie a field to earlier ones, e.g. the agent's ``mu <= lambda_``). A
    message that already starts with ``name(field)`` (e.g.
    ``search.SearchConfig``'s own ``search.walk must be ...``) is kept as it is.

    Args:
      cls: the dataclass; each field's rules may involve only the fields
        before it.
      values: some of its fields' values.
      name: what to call a field in the message (a flag, a config path).

    Raises:
      ValueError: the message names the rejected field and its value.
    """
    try:
        return cls(**values)
    except ValueError as error:
        failure = error
    fields = [f for f in dataclasses.fields(cls) if f.name in values]
    given: dict[str, Any] = {}
    for field in fields:
        given[field.name] = values[field.name]
        try:
            cls(**given)
        except ValueError as e:
            label = name(field.name)
            message = str(e)
            if not message.startswith(label):
                earlier = [
                    f"{name(f.name)}={values[f.name]!r}"
                    for f in fields[: fields.index(field)]
                    if f.default is dataclasses.MISSING or values[f.name] != f.default
                ]
                context = f" (with {', '.join(earlier)})" if earlier else ""
                message = f"{label}={values[field.name]!r}{context}: {message}"
            raise ValueError(message) from None
    raise failure  # not reached: cls(**values) failed above
