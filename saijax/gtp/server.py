"""The GTP engine's stdin/stdout loop (its command line is :mod:`saijax.cli.gtp`).

``python -m saijax.gtp`` streams analysis until the next input line arrives:
a reader thread queues stdin lines, and the engine checks the queue between
rounds. In process, :meth:`saijax.gtp.GtpEngine.analysis_rounds` runs a fixed
number of rounds, so tests are deterministic.

The command line (``python -m saijax.gtp``: the net, the player flags,
the engine's komi, resign threshold, seed and verbosity) is
:func:`saijax.cli.gtp.main`.
"""

from __future__ import annotations

import queue
import threading

from saijax.gtp.engine import GtpEngine

__all__ = ["read_lines", "serve"]


def read_lines(stdin, name: str) -> queue.Queue:
    """A queue that a daemon thread named ``name`` fills with ``stdin``'s lines (bytes), then None at end
    of input, so that a server can look for the next line between rounds of a search without blocking."""
    inbox: queue.Queue = queue.Queue()

    def reader():
        try:
            for raw in iter(stdin.readline, b""):
                inbox.put(raw)
        finally:
            inbox.put(None)

    threading.Thread(target=reader, name=name, daemon=True).start()
    return inbox


def serve(engine: GtpEngine, stdin, stdout) -> None:
    """Runs the engine over binary streams until ``quit`` or end of input.

    A reader thread queues input lines (:func:`read_lines`), so streaming
    analysis can check for the next command between rounds and stop as soon
    as one arrives.
    """
    inbox = read_lines(stdin, "gtp-stdin")

    def write(text: str) -> None:
        if text:
            stdout.write(text.encode("utf-8", errors="replace"))
            stdout.flush()

    while not engine.quit_requested:
        raw = inbox.get()
        if raw is None:
            break
        result = engine.begin(raw.decode("utf-8", errors="replace").rstrip("\n"))
        if result is None:
            continue
        if isinstance(result, str):
            write(result)
            continue
        write(result.head)
        for text in result.rounds(throttle=True):
            write(text)
            if not inbox.empty():
                break
        write(result.finish())
