"""GTP v2 parsing and formatting (§2.2 and §3 of the specification).

Each input line has its control characters removed except HT and LF, HT
becomes a space, and everything from ``#`` on is a comment; empty lines get
no response. Every other line gets exactly one response: ``=`` or ``?``, the
command's id if it had one, the text, and an empty line.

Arguments are ASCII only: Python's int()/float() accept other digits,
underscores, "nan" and "inf", none of which GTP allows. A command signals a
failure by raising :class:`Failure`, whose message is the text after ``?``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from saijax.core import go

__all__ = [
    "BOOLS",
    "COLOURS",
    "Failure",
    "clean_input",
    "expect",
    "format_response",
    "is_id",
    "number_or_text",
    "parse_colour",
    "parse_float",
    "parse_int",
    "parse_vertex",
    "syntax_error",
]

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # C0 and DEL except HT (LF is replaced first)
_OUTPUT_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # the same, but keeping LF
_ID = re.compile(r"[0-9]+")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_VERTEX = re.compile(r"[A-HJ-Za-hj-z][0-9]{1,2}")
COLOURS = {"b": 1, "black": 1, "w": -1, "white": -1}
BOOLS = {"true": True, "false": False}


class Failure(Exception):
    """A command failed; the message is the text after ``?``."""


def syntax_error() -> Failure:
    return Failure("syntax error")


def is_id(token: str) -> bool:
    """Whether ``token`` is a command id (digits only; also lz-analyze's bare interval)."""
    return bool(_ID.fullmatch(token))


def parse_int(text: str, lo: int | None = None, hi: int | None = None) -> int:
    if not _INT.fullmatch(text):
        raise syntax_error()
    value = int(text)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise syntax_error()
    return value


def parse_float(text: str) -> float:
    if not _FLOAT.fullmatch(text):
        raise syntax_error()
    value = float(text)
    if not math.isfinite(value):
        raise syntax_error()
    return value


def number_or_text(text: str) -> float | str:
    """``text`` as a float if it is a GTP float, else the text itself (for a
    validator whose error then names the value as given)."""
    return float(text) if _FLOAT.fullmatch(text) else text


def parse_colour(text: str) -> int:
    colour = COLOURS.get(text.lower())
    if colour is None:
        raise syntax_error()
    return colour


def parse_vertex(rules: go.GoRules, text: str) -> int:
    """A GTP vertex ("D4", "pass"); malformed is a syntax error, off-board illegal."""
    if text.lower() == "pass":
        return rules.pass_action
    if not _VERTEX.fullmatch(text):
        raise syntax_error()
    try:
        return go.from_gtp(rules, text)
    except ValueError:
        raise Failure("illegal move") from None


def expect(args: Sequence[str], count: int) -> None:
    if len(args) != count:
        raise syntax_error()


def clean_input(line: str) -> str:
    """GTP §2.2 preprocessing of one line (without its newline)."""
    line = line.replace("\n", " ")
    line = _CONTROL.sub("", line)
    line = line.split("#", 1)[0]
    return line.replace("\t", " ")


def format_response(cmd_id: str, ok: bool, text: str = "") -> str:
    """One complete response, ending with the empty line."""
    text = _OUTPUT_CONTROL.sub("", text.replace("\t", " "))
    if not ok:
        text = " ".join(text.split())
    # An empty line would end the response early.
    text = re.sub(r"\n\s*\n", "\n", text.rstrip())
    head = ("=" if ok else "?") + cmd_id
    return f"{head} {text}\n\n" if text else f"{head}\n\n"
