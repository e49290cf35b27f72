"""Weak gating (docs/design.md §7): a generation's training exports candidates,
each plays a match against the net that played the generation, and the best
is promoted to self-play if its score reaches the threshold.

SAI promotes every trained net (``gating.enabled`` False); the LZS baseline
gates. :func:`train_with_gating` is the generation's training when it is on.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax
import numpy as np

from saijax.core import go, search
from saijax.learn import distributed, training
from saijax.play import arena, match, players

__all__ = ["GatingSettings", "train_with_gating"]


@dataclasses.dataclass(frozen=True)
class GatingSettings:
    """``config.gating``, and the match settings it takes from the rest of the config."""

    enabled: bool
    candidates: int  # c: candidates exported over the generation's training
    games: int  # games of each candidate against the playing net
    threshold: float  # the score (wins + draws/2, a share) a candidate needs to be promoted
    opening_moves: int  # random moves that start each colour pair
    fixed_komi: Any  # the komi of the matches with selfplay.komi_mode "fixed", else None (the playing net's α_∅)
    precision: str  # the players' network precision

    @classmethod
    def from_config(cls, config) -> GatingSettings:
        fixed = config.selfplay.komi_mode == "fixed"
        return cls(
            enabled=bool(config.gating.enabled),
            candidates=int(config.gating.candidates),
            games=int(config.gating.games),
            threshold=float(config.gating.threshold),
            opening_moves=int(config.gating.opening_moves),
            fixed_komi=config.selfplay.komi if fixed else None,
            precision=config.precision,
        )

    def komi(self, alpha_empty: float):
        """The matches' komi: the fixed komi, or the playing net's fair komi α_∅ rounded to ½ℤ."""
        return self.fixed_komi if self.fixed_komi is not None else float(np.round(alpha_empty * 2) / 2)


def train_with_gating(
    gating: GatingSettings,
    rules: go.GoRules,
    net,
    state,
    previous,
    train_step,
    sample,
    steps: int,
    key,
    alpha_empty: float,
    generation: int,
    search_config: search.SearchConfig,
    **train_kwargs,
):
    """Trains ``steps`` steps exporting c candidates, matches each against
    ``previous`` (the net that played this generation), promotes the best.

    The training chain goes on from its own weights whatever the gate decides:
    the returned state is the last candidate's. With weight averaging
    (``training.ema_decay`` > 0) the candidates are the averaged nets. Only the net that plays
    self-play changes: the best candidate (by score, wins + draws/2) if its
    score reaches ``gating.threshold``, otherwise ``previous``. Matches are
    lockstep arena games at the playing net's fair komi α_∅ (rounded to ½ℤ,
    or the fixed komi), colours alternating, with the generation's
    ``search_config`` without root noise (no Dirichlet noise, no Gumbel
    noise, temperature 0); each colour pair starts from
    ``gating.opening_moves`` random moves so that games differ.

    Returns:
      (state, training metrics, gating metrics with ``gate_seconds``, the
      self-play net's variables).
    """
    c = gating.candidates
    shardings = jax.tree_util.tree_map(lambda x: x.sharding, state.variables)
    previous = jax.tree_util.tree_map(np.asarray, jax.device_get(previous))
    bounds = [round(steps * (i + 1) / c) for i in range(c)]
    candidates, summaries, done = [], [], 0
    for i, end in enumerate(bounds):
        if end > done:
            state, m = training.train_on_window(
                state, train_step, sample, end - done, jax.random.fold_in(key, i), **train_kwargs
            )
            summaries.append((end - done, m))
            done = end
        candidates.append(jax.tree_util.tree_map(np.asarray, jax.device_get(state.playing_variables)))
    train_metrics = {
        k: sum(n * m[k] for n, m in summaries) / max(sum(n for n, _ in summaries), 1) for k in summaries[-1][1]
    }
    komi = gating.komi(alpha_empty)
    quiet = dataclasses.replace(search_config, dirichlet_fraction=0.0, gumbel_scale=0.0, temperature=0.0)
    previous_player = players.Player.from_network("previous", net, previous, config=quiet, precision=gating.precision)
    t_gate = time.time()
    scores = []
    for i, cand in enumerate(candidates):
        player = previous_player.replace(name=f"candidate{i}", variables=cand)
        settings = match.MatchSettings(
            games=gating.games,
            komi=komi,
            seed=generation * 1000 + i,
            max_moves=rules.max_moves,
            score_visits=None,
            opening_moves=gating.opening_moves,
        )
        games = arena.play_match(player, previous_player, settings)
        wins = sum((r.winner == "black") == (r.black == player.name) and r.winner != "draw" for r in games)
        draws = sum(r.winner == "draw" for r in games)
        scores.append((wins + 0.5 * draws) / max(len(games), 1))
    # Every process plays the same matches; process 0's scores decide for all.
    scores = distributed.agree(scores)
    best = int(np.argmax(scores))
    promoted = scores[best] >= gating.threshold
    chosen = candidates[best] if promoted else previous
    selfplay_variables = jax.device_put(chosen, shardings)
    gate = {
        "gating_scores": scores,
        "gating_best": best,
        "gating_promoted": bool(promoted),
        "gate_seconds": time.time() - t_gate,  # the matches' wall time
    }
    return state, train_metrics, gate, selfplay_variables
