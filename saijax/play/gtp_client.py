"""A small GTP v2 client that drives an engine subprocess over pipes.

The arena uses it to play against GNU Go and other GTP engines, and the tests
use it to cross-check the rules engine against GNU Go::

    with GtpClient(gnugo_argv(level=1)) as engine:
        engine.send("boardsize 9")
        engine.send("clear_board")
        engine.send("play black D4")
        reply = engine.send("genmove white")   # e.g. "E5"

Each :meth:`GtpClient.send` writes one command and reads exactly one
response. A response starts with ``=`` (success) or ``?`` (failure), may span
several lines, and ends with an empty line (GTP v2 §2.10). Carriage returns
are dropped, and anything the engine prints before a response starts (some
engines write banners to stdout) is skipped.

The engine's stdout is read by a daemon thread into a queue, so a silent or
hung engine becomes a :class:`GtpTimeout` after ``timeout`` seconds rather
than a blocked process. After a timeout, or if the engine exits, the client
is unusable (the response stream can no longer be trusted): the process is
killed and later calls raise :class:`GtpError`.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import IO

__all__ = [
    "GtpClient",
    "GtpError",
    "GtpTimeout",
    "find_gnugo",
    "gnugo_argv",
]

_EOF = object()  # the reader thread's end-of-stream marker
_DEFAULT = object()  # "use the client's timeout" in send()
_GNUGO_FALLBACK = "/usr/games/gnugo"  # Debian/Ubuntu install path, often off PATH


class GtpError(RuntimeError):
    """A GTP command failed: the engine answered ``?``, died, or is unusable.

    Attributes:
      command: the command that was sent (without the newline).
      message: the engine's error text, or a description of what went wrong.
    """

    def __init__(self, command: str, message: str):
        super().__init__(f"GTP command {command!r} failed: {message}")
        self.command = command
        self.message = message


class GtpTimeout(GtpError):
    """The engine did not finish a response within the client's timeout."""


def find_gnugo() -> str | None:
    """Path of the GNU Go executable, or None if it is not installed.

    Looks on PATH first, then at ``/usr/games/gnugo``, where Debian and Ubuntu
    install it without putting the directory on every user's PATH.
    """
    found = shutil.which("gnugo")
    if found:
        return found
    if os.path.isfile(_GNUGO_FALLBACK) and os.access(_GNUGO_FALLBACK, os.X_OK):
        return _GNUGO_FALLBACK
    return None


def gnugo_argv(level: int = 1, *, extra: Sequence[str] = ()) -> list[str]:
    """Command line for GNU Go in GTP mode under saijax's rules (docs/design.md §1).

    Chinese (area) rules, positional superko and no suicide. GNU Go's own
    scoring still removes dead stones, so game results should be scored by
    saijax (Tromp–Taylor), not by GNU Go's ``final_score``.

    Args:
      level: GNU Go's strength level, 0..10 (higher is stronger and slower).
      extra: further arguments appended as given (e.g. ``("--seed", "7")``).

    Returns:
      The argument list for :class:`GtpClient`.

    Raises:
      FileNotFoundError: GNU Go is not installed.
    """
    path = find_gnugo()
    if path is None:
        raise FileNotFoundError(
            "GNU Go not found on PATH or at /usr/games/gnugo; install it with `apt-get install -y gnugo`"
        )
    return [
        path,
        "--mode",
        "gtp",
        "--chinese-rules",
        "--positional-superko",
        "--forbid-suicide",
        "--level",
        str(int(level)),
        *extra,
    ]


class GtpClient:
    """A GTP engine running as a subprocess.

    Args:
      argv: the engine's command line.
      timeout: seconds to wait for each response before raising
        :class:`GtpTimeout`; None waits forever. ``send`` can override it.
      stderr: where the engine's stderr goes: None discards it, or an open
        file or a path (opened for appending) to keep it as a log.
      cwd: working directory for the engine.
      env: environment for the engine; None inherits this process's.

    Raises:
      OSError: the engine could not be started (e.g. FileNotFoundError).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = 60.0,
        stderr: str | os.PathLike | IO | None = None,
        cwd: str | os.PathLike | None = None,
        env: dict[str, str] | None = None,
    ):
        self.argv = [str(a) for a in argv]
        if not self.argv:
            raise ValueError("argv must name the engine executable")
        self.timeout = timeout
        self._log = None
        if stderr is None:
            err = subprocess.DEVNULL
        elif isinstance(stderr, (str, os.PathLike)):
            err = self._log = open(stderr, "ab")
        else:
            err = stderr
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=cwd,
                env=env,
            )
        except BaseException:
            if self._log is not None:
                self._log.close()
            raise
        self._lines: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read_stdout, name=f"gtp-reader-{self._proc.pid}", daemon=True)
        self._reader.start()
        self._broken: str | None = None  # why the client is unusable, if it is
        self._timeout_used = timeout
        self._commands: list[str] | None = None

    # -- plumbing -----------------------------------------------------------

    def _read_stdout(self):
        stream = self._proc.stdout
        try:
            for raw in iter(stream.readline, b""):
                self._lines.put(raw.decode("utf-8", errors="replace"))
        except (OSError, ValueError):
            pass  # the pipe was closed under us by close()/kill
        finally:
            self._lines.put(_EOF)

    def _next_line(self, command: str, deadline: float | None) -> str:
        if deadline is None:
            item = self._lines.get()
        else:
            try:
                item = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._fail(f"no complete response within {self._timeout_used:g} s")
                raise GtpTimeout(command, self._broken) from None
        if item is _EOF:
            code = self._proc.poll()
            if code is None:
                try:
                    code = self._proc.wait(timeout=1.0)
                except subprocess.TimeoutExpired:
                    code = None
            self._fail(f"engine closed its output (exit code {code})")
            raise GtpError(command, self._broken)
        return item.replace("\r", "").rstrip("\n")

    def _fail(self, reason: str):
        """Marks the client unusable and stops the engine."""
        self._broken = reason
        self._kill()

    def _kill(self):
        if self._proc.poll() is None:
            self._proc.kill()
        try:
            self._proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            pass

    # -- public API ---------------------------------------------------------

    @property
    def pid(self) -> int:
        """The engine's process id."""
        return self._proc.pid

    @property
    def alive(self) -> bool:
        """Whether the engine is running and the client still usable."""
        return self._broken is None and self._proc.poll() is None

    def send(self, command: str, *, timeout=_DEFAULT) -> str:
        """Sends one command and returns the text of its success response.

        Args:
          command: a single GTP command line, without the trailing newline.
          timeout: seconds for this command (None waits forever); by default
            the client's timeout.

        Returns:
          The response after ``=`` and the optional id, without trailing
          whitespace; lines of a multi-line response are joined by ``\\n``
          and keep their indentation (the first line is stripped, and dropped
          if empty). Empty for commands that answer with a bare ``=``.

        Raises:
          GtpError: the engine answered ``?`` (``message`` holds its text), the
            engine exited, or the client is unusable after an earlier failure.
          GtpTimeout: no complete response within the timeout.
          ValueError: the command is empty or spans several lines.
        """
        command = command.strip()
        if not command or "\n" in command or "\r" in command:
            raise ValueError(f"a GTP command must be one non-empty line, got {command!r}")
        if self._broken is not None:
            raise GtpError(command, f"client unusable: {self._broken}")
        self._timeout_used = self.timeout if timeout is _DEFAULT else timeout
        deadline = None if self._timeout_used is None else time.monotonic() + self._timeout_used
        try:
            self._proc.stdin.write(command.encode("utf-8") + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as e:
            self._fail(f"cannot write to the engine ({e})")
            raise GtpError(command, self._broken) from e

        # Skip anything before the response proper (blank lines, banners).
        while True:
            line = self._next_line(command, deadline)
            if line[:1] in ("=", "?"):
                break
        status, first = line[0], line[1:]
        # Drop an optional numeric id right after the status character.
        digits = len(first) - len(first.lstrip("0123456789"))
        body = [first[digits:].strip()]
        while True:
            line = self._next_line(command, deadline)
            if not line.strip():
                break
            body.append(line)
        if len(body) > 1 and not body[0]:
            body.pop(0)  # e.g. showboard: "= " then the diagram
        text = "\n".join(body).rstrip()
        if status == "?":
            raise GtpError(command, text)
        return text

    def list_commands(self) -> list[str]:
        """The engine's ``list_commands`` answer (cached after the first call)."""
        if self._commands is None:
            self._commands = [c.strip() for c in self.send("list_commands").splitlines() if c.strip()]
        return list(self._commands)

    def known_command(self, name: str) -> bool:
        """Whether the engine implements the command ``name``."""
        return name in self.list_commands()

    def close(self, timeout: float = 5.0):
        """Sends ``quit``, waits up to ``timeout`` seconds, then kills. Idempotent."""
        if self._proc.poll() is None and self._broken is None:
            try:
                self.send("quit", timeout=timeout)
            except GtpError:
                pass
        if self._proc.stdin and not self._proc.stdin.closed:
            try:
                self._proc.stdin.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._kill()
        if self._broken is None:
            self._broken = "closed"
        self._reader.join(timeout=1.0)
        if self._proc.stdout and not self._proc.stdout.closed:
            self._proc.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> GtpClient:
        return self

    def __exit__(self, *exc_info):
        self.close()

    def __del__(self):
        # Best effort: never leave an engine process behind.
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            try:
                proc.kill()
                proc.wait(timeout=1.0)
            except Exception:
                pass

    def __repr__(self) -> str:
        state = "alive" if self.alive else (self._broken or "exited")
        return f"GtpClient({self.argv[0]!r}, pid={self._proc.pid}, {state})"
