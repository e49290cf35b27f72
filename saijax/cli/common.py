"""What the command-line entry points share: ending with one clear error line."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

__all__ = ["exit_with_error", "report_error"]


def exit_with_error(message: str, code: int = 1) -> NoReturn:
    """Ends the process with ``message`` as the last line on stderr.

    The message is collapsed to one line. Background threads may still be
    writing to stderr at this point (orbax's readers of a corrupt checkpoint
    print "Event loop is closed" tracebacks as they shut down), so file
    descriptor 2 is first pointed at /dev/null and the line is written to a
    saved copy of it: nothing can follow it. The process then exits at once,
    without running the teardown of those threads. A thread may also have
    written part of a line before that (a traceback's indentation), so the
    message starts on a new line of its own.
    """
    line = "\n" + " ".join(str(message).split()) + "\n"
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.write(saved, line.encode("utf-8", "replace"))
    except OSError:
        sys.__stderr__.write(line)
        sys.__stderr__.flush()
    os._exit(code)


def report_error(message: str, code: int = 2, *, exit_now: bool = False) -> int:
    """Writes ``message`` as one line on stderr and returns ``code``, for a
    ``main`` that returns its exit code. With ``exit_now`` (the command line)
    it is `exit_with_error` instead."""
    if exit_now:
        exit_with_error(message, code)
    print(" ".join(str(message).split()), file=sys.stderr, flush=True)
    return code
