"""Command-line helpers the experiment scripts share: comma lists and nets given as ``[NAME=]SPEC``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from saijax import players, search


def parse_list(text: str, kind: Callable = float) -> list:
    """A comma list (``"0,1,2"``) as values; "" is the empty list."""
    return [kind(x) for x in text.split(",") if x.strip()]


def parse_nets(text: str) -> list[tuple[str | None, str]]:
    """``"[NAME=]SPEC,..."`` as (name or None, spec) pairs."""
    nets = []
    for item in parse_list(text, str):
        name, sep, spec = item.strip().partition("=")
        nets.append((name.strip(), spec.strip()) if sep else (None, item.strip()))
    return nets


def load_nets(
    specs: Sequence[tuple[str | None, str]], *, board_size: int, visits: int, gumbel_scale: float = 1.0
) -> list[players.Player]:
    """The players of ``specs`` (from :func:`parse_nets`), each searching ``visits`` simulations, λ = μ = 0.

    A net without a name is named after its zoo entry (``zoo:go7-S1`` →
    ``go7-S1``), ``random`` for a random net, else ``gen<generation>``.
    """
    config = search.SearchConfig(num_simulations=int(visits), gumbel_scale=float(gumbel_scale))
    out = []
    for name, spec in specs:
        if spec == "random":
            player = players.random_player(board_size, name=name or "random", config=config)
        else:
            default = spec[4:] if spec.startswith("zoo:") else None
            player = players.load_player(spec, board_size=board_size, name=name or default, config=config)
        out.append(player)
    return out
