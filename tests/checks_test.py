"""The shared elementary checks (saijax.core.checks) and the naming of a rejected value."""

import dataclasses

import pytest

from saijax.core import checks, search


def test_is_int_and_is_number():
    assert checks.is_int(3) and checks.is_int(-1) and checks.is_int(0)
    for x in (True, False, 3.0, "3", None):
        assert not checks.is_int(x), x
    assert checks.is_number(3) and checks.is_number(-2.5) and checks.is_number(10**400)
    for x in (True, float("nan"), float("inf"), -float("inf"), "1", None):
        assert not checks.is_number(x), x


def test_naming_prefixes_a_value_error():
    with pytest.raises(ValueError, match=r"^--style='x': bad$"):
        with checks.naming("--style='x'"):
            raise ValueError("bad")
    with pytest.raises(KeyError):  # other errors pass as they are
        with checks.naming("--style='x'"):
            raise KeyError("k")


@dataclasses.dataclass(frozen=True)
class _Pair:
    low: float = 0.0
    high: float = 1.0

    def __post_init__(self):
        if self.low < 0:
            raise ValueError(f"low must be >= 0, got {self.low}")
        if self.high < self.low:
            raise ValueError(f"needs low <= high, got low={self.low}, high={self.high}")


def test_build_names_the_first_value_it_rejects():
    assert checks.build(_Pair, {"high": 2.0}) == _Pair(0.0, 2.0)
    flag = lambda field: f"--{field}"  # noqa: E731
    with pytest.raises(ValueError, match=r"^--low=-1: low must be >= 0"):
        checks.build(_Pair, {"high": 5.0, "low": -1}, flag)
    # A rule tying a field to an earlier one: the later field, with the earlier
    # values that are not the defaults.
    with pytest.raises(ValueError, match=r"^--high=0.5 \(with --low=0.7\): needs low <= high"):
        checks.build(_Pair, {"low": 0.7, "high": 0.5}, flag)
    with pytest.raises(ValueError, match=r"^--high=-0.5: needs low <= high"):
        checks.build(_Pair, {"low": 0.0, "high": -0.5}, flag)


def test_build_keeps_a_message_that_names_the_field():
    name = lambda field: f"search.{field}"  # noqa: E731
    with pytest.raises(ValueError, match=r"^search.walk must be one of"):
        checks.build(search.SearchConfig, {"walk": "up"}, name)
    with pytest.raises(ValueError, match=r"^search.lambda_=1.5: the λ/μ agent needs"):
        checks.build(search.Agent, {"lambda_": 1.5, "mu": 0.0, "threshold": 0.0}, name)
    with pytest.raises(ValueError, match=r"^search.mu=0.5 \(with search.lambda_=0.2\): "):
        checks.build(search.Agent, {"lambda_": 0.2, "mu": 0.5, "threshold": 0.0}, name)
