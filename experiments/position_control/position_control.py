"""Position control against GNU Go or a weaker net: win rate, margin and naturalness per method ([PosCtl] §5, §7).

    python -m experiments.run --config=experiments/position_control/config.py  # the shipped run (--config.play=True)
    python experiments/position_control/position_control.py --outdir=runs/position_control  # against GNU Go
    python experiments/position_control/position_control.py --net=zoo:go7-S1 --level=10 --games=16 --visits=128 \\
        --methods=none,naive,A,B,C:1,C:2.5,endgame:2,endgame:5 --outdir=/tmp/position_control
    python experiments/position_control/position_control.py --net=zoo:go7-S1 --opponent=zoo:go7-W3 \\
        --games=214 --visits=128 \\
        --methods=none,naive,B,C:1,C:2.5,C:2.5@starts,endgame:2,endgame:5 --endgame_starts=107 --outdir=/tmp/pc_w3
    python experiments/position_control/position_control.py --outdir=/tmp/position_control --summarize_only

Paper: Shi, Fan, Li, Hsueh and Ikeda, "Position control and production of
various strategies for game of Go using deep learning methods" (JISE 37(3),
2021) [PosCtl] (docs/design.md §8). A strong zero-style engine should let a
weaker opponent win about half its games, with small margins and natural
moves. The paper's Leela (16,000 simulations per move, 13×13) against Ray:
normal Leela won every game; with position control Ray won 37% (Leela_A15)
and 48% (Leela_ABC25, c = 2.5, α = 0.25) of 500 games; human reviewers
counted 2.29 unnatural moves per game for Leela_naive, 1.27 and 1.22 for
A15 and ABC25 (Table 1); the mean Euclidean distance from Leela's moves to
Ray's last move was 2.33 ± 0.06 for ABC25 against 3.16 ± 0.10 for A15
(§5.2). KataGo+ (Algorithm 1, γ = 5) won 37% against Ray from 100 endgame
starts, with 8.5% of its moves below prior 0.05 (Table 7).

Here the strong engine is the zoo's strongest 7×7 net (``zoo:go7-S1``) and
the weaker player (``--opponent``) either GNU Go 3.8 at ``--level`` (10 by
default; ``gnugo``, the default, or ``gnugo:LEVEL``) or a net
(``[NAME=]SPEC``, e.g. ``zoo:go7-W3``, searching as the player flags say,
or as their ``--opponent_`` twins say where given). Nobody resigns: every
game is played out and counted Tromp–Taylor, colours alternating (the net is
Black in even-numbered games). Against GNU Go the games are played one at a
time over GTP (:func:`saijax.play.gtp_match.play_gtp_match`); against a net, in
lockstep (:func:`saijax.play.arena.play_match`), the controlled net being a
:class:`saijax.play.players.Player` with its method as ``control``. Play is
deterministic by default (Gumbel search at ``gumbel_scale`` 0, the search's
best move; the win-rate methods' PUCT without Dirichlet noise, temperature
0), so games differ through the colours and ``--opening_moves`` random
opening moves, the same for both games of a colour pair and for every
condition (default 4 against a net, 0 against GNU Go, whose own random seed
varies its play). Each condition of ``--methods`` is a method of
:mod:`saijax.play.control` and its parameter:

* ``none``: the net's own move (its default Gumbel search);
* ``naive``: Method A's candidates, the win rate nearest ½ (Leela_naive);
* ``A``: the same with ``target_winrate`` (0.5 here, so A = naive unless
  ``--target_winrate`` moves it);
* ``B[:c]``, ``C[:c]``: Ikeda and Viennot's procedure with Method B's
  distance weights (and for C Method C's naturalness term, α = 0.25), the
  gentleness c after the colon (default 2.5; C:2.5 is Leela_ABC25);
* ``endgame[:γ]``: Algorithm 1 with SAI's score lead α + k, γ after the colon
  (default 5), applied from the first move, or with ``--endgame_starts`` from
  near-even endgame positions as in the paper (below);
* any of these with the suffix ``@starts`` (e.g. ``C:2.5@starts``, Table
  7's Leela+): played from the endgame starts.

**The dominance check.** The paper's setting is an engine that wins every
game uncontrolled. The ``none`` condition checks it: its row states whether
the net's win rate is shown to be above 95% (``dominant``: "yes" when the
one-sided exact binomial test against 95% gives p < 0.05, "no" when the
opposite one-sided test shows it below 95%, "unclear" otherwise; beside the
95% Wilson interval), and the script prints a warning when it is not "yes":
then a controlled rate near ½ is not the paper's measurement.

**Endgame starts** (``--endgame_starts N``, [PosCtl] §7.3). First N start
positions are made: the strong net, uncontrolled, plays a copy of itself
(``--endgame_rival=self``, the default: the paper took its starts from
game records between equals, professionals' or 3-dans') or, with
``--endgame_rival=opponent``, the opponent net, in lockstep, with random
opening moves
(``--opening_moves``, at least 4), and the position at ply ``--endgame_ply``
(24 by default, about 60% of a 7×7 game) of each game still running is kept
when the strong net's own score lead α + k for the side to move (the median
over the nodes of a search at its visits, the estimate SAI scores
resignations with) is within ``--endgame_band`` (3) points of 0; duplicates
are dropped, rounds of 2N games are played until N are kept (at most 8).
The starts go to ``endgame_starts.csv`` (reused by a rerun). Then each
``endgame[:γ]`` condition, and ``none`` as its baseline, is played from them
(``MatchSettings.start_moves``): every start twice, the net Black in one
game and White in the other, 2N games, labelled ``endgame:5@starts`` and
``none@starts``, beside any condition listed with ``@starts``. The paper
compared Algorithm 1 with Leela_ABC25 from the same starts (Table 7), so
``C:2.5@starts`` is the comparison to list. Naturalness from a start counts
only the moves after it.

**From 13×13 and 16,000 simulations to 7×7.** The paper's Leela searched
16,000 simulations over 13×13's 170 actions, about 94 per action, and
Method A kept moves with at least 100 visits, about one uniform share.
saijax keeps the share, not the count: a candidate needs
``min_visit_share · S / (N² + 1)`` visits (1.0625 shares, exactly 100 in the
paper's setting), so with ``--visits=128`` on 7×7 (50 actions) it is ⌈2.7⌉ =
3 visits. The visit budget itself is not scaled up: 128 simulations (4 times
the go7 run's self-play search) on 50 actions is 2.6 per action, a thirty-
sixth of the paper's density; the exploration constant stays 10 (§4.1), so
PUCT still spreads visits widely enough for the candidates' win rates, but
those win rates are noisier than Leela's. Distances shrink with the board:
on 7×7 two random points are on average 3.3 apart (5.9 on 13×13), so the
paper's numbers are compared by their order (controlled B/C nearer the
opponent's last move than the uncontrolled net or Method A), not their
values. The paper's "2nd–60th moves" window is a whole 7×7 game (about 45
moves), so every move of the net's own is counted (not random opening moves
or a start position's). Komi is 9.5 (fair komi 9 plus the half point that
rules out draws); ``--black_komi``/``--white_komi`` set it per colour of the
net. Human reviewers are replaced by the automated count of Table 7: moves
whose prior under the uncontrolled net is below 0.05.

**Statistics** (:mod:`saijax.analysis.stats`, :mod:`experiments.lib.stat_tables`).
Before playing, the script prints the games per condition a TOST needs to
show a rate within ½ ± ``--equivalence_margin`` (0.10) when the true rate is
½ (each one-sided test at α 0.05, power 0.8, by the exact binomial power,
in colour pairs; 214 at ±0.10), the power of this run's game counts, the
fall from 95% a one-sided Fisher test against ``none`` detects (arcsine
approximation), and the wins the dominance test needs. In the summary each
condition has the TOST of its rate against ½ ± margin (two one-sided exact
binomial tests, ``scipy.stats.binomtest``, p the larger), the two-sample
tests against its baseline (``none``, or ``none@starts`` for the conditions
played from the starts), and Holm and Benjamini–Hochberg adjusted p beside
each over the controlled conditions (``none`` and ``none@starts`` are
baselines, not in the family).

Outputs in ``--outdir``:

* ``conditions/<label>.csv``: one row per game of a condition (the
  opponent, the controlled net's visits, search algorithm and root noise,
  the random opening moves, the start position's index and the first ply
  counted as the net's own, colour, komi, winner, the net's margin, its
  moves, unnatural moves, its mean distance to the opponent's last move, the
  opponent's to the net's, the net's precision, the opening and its id as
  in :mod:`saijax.analysis.results`, the SGF path); a condition whose file exists is
  skipped, so a killed run resumes and shards with disjoint ``--methods``
  can share an outdir;
* ``games.csv``: all conditions' game rows together;
* ``endgame_starts.csv`` (with ``--endgame_starts``): the starts: index,
  ply, side to move, the strong net's α + k for it and the visits of the
  search that estimated it, komi, the game they come from and its moves as
  GTP coordinates;
* ``summary.csv``: per condition: the opponent, visits, algorithm, noise,
  random opening moves and start; games, wins, win rate with its 95% Wilson
  interval, mean and standard deviation of the net's margin, mean |margin|,
  unnatural moves per game and the mean distance (each with a 95% normal
  interval over games); for ``none`` the dominance check (``dominant``,
  ``p_above_95`` and ``p_below_95``, the one-sided exact binomial tests
  against 95%); ``p_tost`` (equivalence to ½ ± margin) with its Holm and BH
  columns; against the baseline, Fisher's exact test that the condition
  wins less often (one-sided, ``p_fewer_wins``) and whether its win rate is
  closer to ½ (``p_closer_to_half``, a one-sided test on |rate − ½| by a
  normal approximation to the difference of the two distances from ½), each
  with Holm and BH columns; and the exact binomial test of the rate against
  ½ (``p_rate_is_half``); for the endgame conditions from the starts,
  Fisher's test that they win less often than ``C:2.5@starts`` (Table 7's
  Leela+; ``p_fewer_wins_than_leela_plus``) and the Mann–Whitney test that
  they play fewer unnatural moves per game than it
  (``p_fewer_unnatural_than_leela_plus``), each with Holm and BH; the share
  of the net's own moves below prior 0.05 (``unnatural_share``, Table 7's
  percentage); against ``naive`` from the same start (the paper's Method A,
  Leela_naive and Leela_A15): Welch's test that its moves are nearer the
  opponent's last move (per-game mean distances, one-sided,
  ``p_nearer_last_move``, §5.2) and the Mann–Whitney test that it plays
  fewer unnatural moves per game (one-sided,
  ``p_fewer_unnatural_than_naive``, Table 1), each with Holm and BH;
* ``position_control.png``: win rate, margin, unnatural moves and distance
  per condition.

``--summarize_only`` rebuilds ``games.csv``, the summary and the PNG from the
condition files (older files, with ``gnugo_`` distance columns, are read
too).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Sequence
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np

from experiments.lib import common, stat_tables
from experiments.lib.common import setting
from saijax.analysis import results, stats
from saijax.cli import player as player_cli
from saijax.core import go, sgf
from saijax.play import arena, control, gtp_match, match, players

METHODS = ("none", "naive", "A", "B", "C:1", "C:2.5", "endgame:2", "endgame:5")
DOMINANCE_RATE = 0.95  # the uncontrolled net should win at least this often (the paper's won every game)
STARTS = "@starts"  # the label suffix of conditions played from the endgame starts
LEELA_PLUS = "C:2.5" + STARTS  # Table 7's Leela+ (Leela_ABC25 from the starts), Algorithm 1's comparison
START_OPENING_MOVES = 4  # the fewest random opening moves of the games that make the endgame starts
START_ROUNDS = 8  # the most rounds of 2N games played to find N endgame starts
GAME_COLUMNS = tuple(
    "condition method param opponent visits algorithm noise opening_moves start first_ply game net_colour komi "
    "winner net_result net_margin moves net_moves unnatural mean_distance distance_moves opponent_mean_distance "
    "opponent_distance_moves precision opening opening_id sgf".split()
)
SUMMARY_COLUMNS = tuple(
    "condition method param opponent visits algorithm noise opening_moves start games wins draws win_rate "
    "wilson_lo wilson_hi mean_margin sd_margin mean_abs_margin unnatural_per_game unnatural_ci unnatural_share "
    "distance distance_ci opponent_distance dominant p_above_95 p_below_95 p_tost p_tost_holm p_tost_bh p_fewer_wins "
    "p_fewer_wins_holm p_fewer_wins_bh p_closer_to_half p_closer_to_half_holm p_closer_to_half_bh "
    "p_rate_is_half p_fewer_wins_than_leela_plus p_fewer_wins_than_leela_plus_holm "
    "p_fewer_wins_than_leela_plus_bh p_nearer_last_move p_nearer_last_move_holm p_nearer_last_move_bh "
    "p_fewer_unnatural_than_naive p_fewer_unnatural_than_naive_holm p_fewer_unnatural_than_naive_bh "
    "p_fewer_unnatural_than_leela_plus p_fewer_unnatural_than_leela_plus_holm "
    "p_fewer_unnatural_than_leela_plus_bh".split()
)
START_COLUMNS = tuple("start ply to_play score_lead visits komi black white seed game moves".split())
# Condition files written before the opponent could be a net.
_OLD_COLUMNS = {"gnugo_mean_distance": "opponent_mean_distance", "gnugo_distance_moves": "opponent_distance_moves"}
_CORRECTED = (
    "p_tost",
    "p_fewer_wins",
    "p_closer_to_half",
    "p_fewer_wins_than_leela_plus",
    "p_nearer_last_move",
    "p_fewer_unnatural_than_naive",
    "p_fewer_unnatural_than_leela_plus",
)


@dataclasses.dataclass(frozen=True)
class Condition:
    """One row of the table: a method and its parameter, from the empty board or the endgame starts."""

    label: str  # e.g. "C:2.5", "endgame:5@starts"
    method: str  # "none" or one of control.METHODS
    param: float | None  # gentleness c (B, C) or γ (endgame)
    config: control.ControlConfig | None
    starts: bool = False  # played from the endgame starts


def parse_conditions(text: str | Sequence[str], *, target_winrate: float = 0.5) -> list[Condition]:
    """``"none,naive,A,B,C:1,C:2.5,endgame:2,C:2.5@starts"`` (or a sequence of those) as conditions (module
    docstring).

    A condition with the suffix ``@starts`` is played from the endgame starts.
    """
    out = []
    for item in (x.strip() for x in (text.split(",") if isinstance(text, str) else text)):
        if not item:
            continue
        from_starts = item.endswith(STARTS)
        item = item.removesuffix(STARTS)
        name, _, param = item.partition(":")
        if name.lower() == "none":
            if param:
                raise ValueError(f"condition {item!r}: 'none' takes no parameter")
            out.append(Condition("none" + (STARTS if from_starts else ""), "none", None, None, starts=from_starts))
            continue
        method = control.parse_method(name)
        if method is None:
            raise ValueError(f"condition {item!r}: use 'none' for the uncontrolled net")
        value = float(param) if param else None
        if method in ("B", "C"):
            config = control.ControlConfig(method=method, gentleness=2.5 if value is None else value)
            value = config.gentleness
        elif method == "endgame":
            config = control.ControlConfig(method=method, gamma=5.0 if value is None else value)
            value = config.gamma
        elif value is not None:
            raise ValueError(f"condition {item!r}: {method} takes no parameter")
        else:
            config = control.ControlConfig(method=method, target_winrate=0.5 if method == "naive" else target_winrate)
        label = (method if value is None else f"{method}:{value:g}") + (STARTS if from_starts else "")
        out.append(Condition(label, method, value, config, starts=from_starts))
    labels = [c.label for c in out]
    if len(set(labels)) != len(labels):
        raise ValueError(f"a condition is listed twice: {labels}")
    return out


def with_endgame_starts(conditions: list[Condition]) -> list[Condition]:
    """The conditions with the endgame ones moved to the endgame starts, after ``none@starts``, their baseline.

    Conditions listed with ``@starts`` stay there, after the baseline.
    """
    endgame = [c for c in conditions if c.method == "endgame" or c.starts]
    if not any(c.method == "endgame" for c in endgame):
        raise ValueError("--endgame_starts plays the endgame conditions from the starts: list one in --methods")
    baseline = Condition("none" + STARTS, "none", None, None, starts=True)
    moved = [c if c.starts else dataclasses.replace(c, label=c.label + STARTS, starts=True) for c in endgame]
    moved = [c for c in moved if c.label != baseline.label]
    return [c for c in conditions if c not in endgame] + [baseline, *moved]


def baseline_label(label: str) -> str:
    """The uncontrolled condition a condition is tested against: ``none``, or ``none@starts`` from the starts."""
    return "none" + STARTS if label.endswith(STARTS) else "none"


def controlled_player(base: players.Player, condition: Condition) -> players.Player:
    """The net with the condition's method and the search it wants.

    The endgame method reads its top 20 moves' score leads, so its Gumbel
    search considers 20 moves (module docstring of :mod:`saijax.play.control`).
    """
    name = f"{base.name}[{condition.label.removesuffix(STARTS)}]" if condition.config is not None else base.name
    if condition.config is None:
        return base.replace(name=name)
    config = base.config
    if condition.method == "endgame":
        actions = base.board_size**2 + 1
        width = min(condition.config.top_moves, actions)
        config = dataclasses.replace(config, max_num_considered_actions=max(config.max_num_considered_actions, width))
    return base.replace(name=name, control=condition.config, config=condition.config.search_config(config))


def search_columns(player: players.Player) -> dict:
    """A player's search as table columns: visits, algorithm (with its root width or c) and root noise."""
    cfg = player.config
    if cfg.algorithm == "gumbel":
        algorithm = f"gumbel m={cfg.max_num_considered_actions}"
        noise = "none" if cfg.gumbel_scale == 0 else f"gumbel_scale={cfg.gumbel_scale:g}"
    else:
        algorithm = f"{cfg.algorithm} c={cfg.c_puct:g}"
        parts = [f"dirichlet_fraction={cfg.dirichlet_fraction:g}"] if cfg.dirichlet_fraction > 0 else []
        parts += [f"temperature={cfg.temperature:g}"] if cfg.temperature > 0 else []
        noise = ",".join(parts) or "none"
    return {"visits": cfg.num_simulations, "algorithm": algorithm, "noise": noise}


# --------------------------------------------------------------------------
# The opponent.


@dataclasses.dataclass(frozen=True)
class Opponent:
    """The weaker player: GNU Go at a level (``player`` None) or a net."""

    label: str  # in tables: "gnugo-l10 (never resigns)", "go7-W3: 128 visits gumbel m=16, noise none"
    name: str  # in the games' results and SGFs
    player: players.Player | None = None
    level: int | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.MatchSettings):
    """The settings (the module docstring). ``opponent_options``: how a net opponent plays (None: as the net's
    player fields say, without position control or style); on the command line the ``--opponent_`` player
    flags."""

    games: int = setting(16, "games per condition, colours alternating")
    visits: int = 128
    net: str = setting("zoo:go7-S1", "the strong net: a checkpoint or zoo:<name>")
    opponent: str = setting("gnugo", "the weaker player: gnugo (at --level), gnugo:LEVEL or a net [NAME=]SPEC")
    opponent_options: player_cli.PlayerOptions | None = dataclasses.field(
        default=None, metadata={"prefix": "opponent_"}
    )
    level: int = setting(10, "GNU Go's level (it never resigns)")
    black_komi: float = 9.5
    white_komi: float = 9.5
    opening_moves: int | None = setting(
        None, "random opening moves per colour pair (default: 4 against a net, 0 against GNU Go)"
    )
    timeout: float = 120.0
    methods: tuple[str, ...] = setting(METHODS, "none, naive, A, B[:c], C[:c], endgame[:gamma] each")
    target_winrate: float = setting(0.5, "Method A's target")
    equivalence_margin: float = setting(0.10, "TOST: the win rate within 1/2 ± this")
    endgame_starts: int = setting(
        0,
        "play the endgame conditions (and none@starts) from this many near-even endgame positions, each with "
        "both colours (0: endgame from the first move)",
    )
    endgame_rival: Literal["self", "opponent"] = setting(
        "self", "who the strong net plays to make the endgame starts: a copy of itself or the --opponent net"
    )
    endgame_ply: int = setting(24, "the endgame starts' ply (about 60%% of a 7x7 game)")
    endgame_band: float = setting(3.0, "keep starts whose |α + k| for the side to move is below this")
    overwrite: bool = setting(False, "replay conditions (and remake starts) already in --outdir")
    summarize_only: bool = setting(False, "only rebuild the tables and the PNG")

    def check(self) -> None:
        super().check()
        if self.endgame_starts < 0:
            raise self.error("endgame_starts", "needs an int >= 0")
        if self.endgame_ply < 1:
            raise self.error("endgame_ply", "needs an int >= 1")
        if self.endgame_band <= 0:
            raise self.error("endgame_band", "needs a number > 0")
        if not 0 < self.equivalence_margin < 0.5:
            raise self.error("equivalence_margin", "needs a number in (0, 0.5)")

    def opponent_player_options(self) -> player_cli.PlayerOptions:
        """How a net opponent plays: ``opponent_options``, else the player fields without control or style."""
        if self.opponent_options is not None:
            return self.opponent_options
        return dataclasses.replace(self.player_options(), control="off", control_options=(), style="off")


def gnugo_level(spec: str, level: int) -> int | None:
    """GNU Go's level if ``--opponent`` names it (``gnugo`` at ``level``, or ``gnugo:LEVEL``), else None."""
    spec = str(spec).strip()
    if spec == "gnugo":
        return int(level)
    if spec.startswith("gnugo:"):
        text = spec.partition(":")[2].strip()
        if not text.isdigit() or not 0 <= int(text) <= 10:
            raise ValueError(f"--opponent={spec}: gnugo:LEVEL needs an integer level 0..10")
        return int(text)
    if player_cli.is_engine(spec):
        raise ValueError(f"--opponent={spec}: the opponent is gnugo, gnugo:LEVEL or a net [NAME=]SPEC")
    return None


def load_opponent(settings: Settings, base: players.Player) -> Opponent:
    """The opponent of ``opponent``: GNU Go, or a net playing as ``opponent_options`` say."""
    level = gnugo_level(settings.opponent, settings.level)
    if level is not None:
        return Opponent(f"gnugo-l{level} (never resigns)", f"gnugo-l{level}", level=level)
    nets = common.parse_nets(settings.opponent)
    if len(nets) != 1:
        raise ValueError(f"--opponent={settings.opponent}: one net, [NAME=]SPEC")
    options = settings.opponent_player_options()
    (net,) = common.load_nets(nets, board_size=settings.board_size, options=options, seed=settings.seed + 1)
    if net.name == base.name or net.name.startswith(base.name + "["):
        net = net.replace(name=net.name + "-copy")
    s = search_columns(net)
    return Opponent(f"{net.name}: {s['visits']} visits {s['algorithm']}, noise {s['noise']}", net.name, player=net)


def opening_moves(settings: Settings) -> int:
    """The random opening moves per colour pair: ``--opening_moves``, else 4 against a net and 0 against GNU Go."""
    if settings.opening_moves is not None:
        return int(settings.opening_moves)
    return 0 if gnugo_level(settings.opponent, settings.level) is not None else 4


def play_games(
    player: players.Player, opponent: Opponent, settings: match.MatchSettings, timeout: float
) -> list[results.GameResult]:
    """A match of ``player`` (side A) against the opponent: over GTP against GNU Go, in lockstep against a net."""
    if opponent.player is None:
        argv = player_cli.engine_argv(f"gnugo:{opponent.level}", never_resign=True)
        return gtp_match.play_gtp_match(player, argv, settings, engine_name=opponent.name, timeout=timeout)
    return arena.play_match(player, opponent.player, settings)


# --------------------------------------------------------------------------
# Endgame starts (§7.3).


def _batched(states: list[go.GoState]) -> go.GoState:
    return jax.tree_util.tree_map(lambda *xs: jnp.stack([jnp.asarray(x) for x in xs]), *states)


def endgame_candidates(
    strong: players.Player,
    opponent: players.Player,
    *,
    games: int,
    ply: int,
    komi_black: float,
    komi_white: float,
    opening: int,
    seed: int,
    sgf_dir: str,
) -> list[dict]:
    """One round of candidate starts: the position at ``ply`` of each of ``games`` games and the strong net's lead.

    ``strong`` (side A, Black in even games, komi ``komi_black`` then, else
    ``komi_white``) and ``opponent`` play ``games`` games in lockstep from
    ``opening`` random opening moves; each game that goes on past ``ply``
    gives its position there and the strong net's score lead α + k for the
    side to move (the median over a search of its visits,
    :func:`saijax.play.match.score_estimates`). A game that ended sooner gives a
    row with ``score_lead`` NaN.

    Returns:
      Rows: ``ply``, ``to_play`` ("black"/"white"), ``score_lead`` (from a
      search of ``visits``), ``visits``, ``komi``,
      ``black``, ``white``, ``seed``, ``game``, ``moves`` (the first ``ply``
      actions) and ``length`` (the whole game's moves).
    """
    a_black = match.MatchSettings(games=games).side_a_black()
    settings = match.MatchSettings(
        games=games,
        komi=tuple(komi_black if a else komi_white for a in a_black),
        seed=seed,
        score_visits=None,
        opening_moves=opening,
        sgf_dir=sgf_dir,
    )
    played = arena.play_match(strong, opponent, settings)
    rules = settings.rules(strong.board_size)
    rows, states = [], []
    for g in played:
        record = sgf.read_sgf(g.sgf, check=False)  # no replay: the arena wrote it
        row = dict(ply=ply, komi=g.komi, black=g.black, white=g.white, seed=seed, game=g.game, length=g.moves)
        row["visits"] = strong.config.num_simulations
        row.update(moves=tuple(record.moves[:ply]), to_play="", score_lead=math.nan)
        if len(record.moves) > ply:
            states.append((len(rows), sgf.replay(record, rules=rules)[ply]))
        rows.append(row)
    if states:
        batch = _batched([s for _, s in states])
        ids = jnp.asarray([rows[i]["game"] for i, _ in states], jnp.int32)
        keys = match.score_keys(jax.random.PRNGKey(seed), ids, ply)
        k = len(states)
        estimate = match.score_estimates(
            strong, rules, batch, np.arange(k), keys, strong.config.num_simulations, 1 << (k - 1).bit_length()
        )
        to_play = np.asarray(jax.device_get(batch.to_play))
        for (i, _), est, colour in zip(states, estimate, to_play):
            rows[i]["to_play"] = "black" if colour > 0 else "white"
            rows[i]["score_lead"] = float(est) * float(colour)  # Black-minus-White → the side to move's
    return rows


def choose_starts(candidates: list[dict], *, band: float, count: int) -> list[dict]:
    """The first ``count`` distinct candidates whose |score lead| for the side to move is below ``band``.

    Candidates from games that ended before their ply (lead NaN) and those
    at or beyond the band are dropped; so is a position already chosen (the
    same moves). The chosen rows get their index in ``start``.
    """
    chosen, seen = [], set()
    for c in candidates:
        lead = float(c["score_lead"])
        if not math.isfinite(lead) or abs(lead) >= band or tuple(c["moves"]) in seen:
            continue
        seen.add(tuple(c["moves"]))
        chosen.append({**c, "start": len(chosen)})
        if len(chosen) == count:
            break
    return chosen


def _start_row(rules: go.GoRules, start: dict) -> dict:
    return {
        **start,
        "score_lead": round(float(start["score_lead"]), 3),
        "moves": " ".join(go.to_gtp(rules, a) for a in start["moves"]),
    }


def read_starts(path: str, board_size: int) -> list[dict]:
    """The starts of ``endgame_starts.csv``, their moves as actions."""
    rules = go.GoRules(board_size)
    out = []
    for r in common.read_csv(path):
        moves = tuple(go.from_gtp(rules, v) for v in r["moves"].split())
        out.append(
            {**r, "start": int(r["start"]), "ply": int(r["ply"]), "score_lead": float(r["score_lead"]), "moves": moves}
        )
    return out


def endgame_starts(base: players.Player, opponent: Opponent, settings: Settings) -> list[dict]:
    """``--endgame_starts`` near-even positions at ``--endgame_ply``: read from ``endgame_starts.csv``, or made.

    The strong net plays a copy of itself, or with ``--endgame_rival=opponent``
    the opponent net (module docstring). Rounds of 2N games (seeds ``--seed`` + 1000 + r) are
    played until N starts are found, at most :data:`START_ROUNDS`.

    Raises:
      ValueError: the file holds other starts than the flags ask for, or
        fewer than N were found.
    """
    count, ply, band = int(settings.endgame_starts), int(settings.endgame_ply), float(settings.endgame_band)
    path = os.path.join(settings.outdir, "endgame_starts.csv")
    if os.path.exists(path) and not settings.overwrite:
        starts = read_starts(path, base.board_size)
        if len(starts) < count or any(s["ply"] != ply or abs(s["score_lead"]) >= band for s in starts):
            raise ValueError(
                f"{path} holds {len(starts)} starts made with other settings than --endgame_starts={count} "
                f"--endgame_ply={ply} --endgame_band={band:g}; remove it (and the @starts conditions) "
                "or pass --overwrite"
            )
        print(f"endgame starts: {count} of {path}", flush=True)
        return starts[:count]
    if settings.endgame_rival == "opponent" and opponent.player is None:
        raise ValueError("--endgame_rival=opponent needs a net --opponent (GNU Go's games are not played in lockstep)")
    rival = opponent.player if settings.endgame_rival == "opponent" else base.replace(name=base.name + "-copy")
    opening = max(opening_moves(settings), START_OPENING_MOVES)
    candidates: list[dict] = []
    chosen: list[dict] = []
    for r in range(START_ROUNDS):
        t0 = time.time()
        candidates += endgame_candidates(
            base,
            rival,
            games=2 * count,
            ply=ply,
            komi_black=settings.black_komi,
            komi_white=settings.white_komi,
            opening=opening,
            seed=settings.seed + 1000 + r,
            sgf_dir=os.path.join(settings.outdir, "sgf", "endgame_starts", f"round{r}"),
        )
        chosen = choose_starts(candidates, band=band, count=count)
        ended = sum(not math.isfinite(float(c["score_lead"])) for c in candidates)
        print(
            f"endgame starts, round {r + 1}: {len(candidates)} games of {base.name} vs {rival.name} "
            f"({opening} random opening moves), {ended} ended before ply {ply}, {len(chosen)}/{count} "
            f"with |α + k| < {band:g} ({time.time() - t0:.0f}s)",
            flush=True,
        )
        if len(chosen) == count:
            break
    if len(chosen) < count:
        raise ValueError(
            f"only {len(chosen)} of {len(candidates)} positions at ply {ply} have |α + k| < {band:g}, "
            f"{count} wanted: widen --endgame_band, move --endgame_ply or ask for fewer --endgame_starts"
        )
    rules = go.GoRules(base.board_size)
    common.write_csv(path, [_start_row(rules, s) for s in chosen], START_COLUMNS)
    return chosen


# --------------------------------------------------------------------------
# Measuring one game.


def game_row(
    condition: Condition,
    player: players.Player,
    base: players.Player,
    game: results.GameResult,
    *,
    opponent: str = "",
    opening_moves: int = 0,
    first_ply: int = 0,
    start: int | str = "",
) -> dict:
    """The per-game measures: outcome from the net's side and naturalness (§5.2, Table 7).

    Only the plies from ``first_ply`` on count as the net's and the
    opponent's own moves (before it: random opening moves or a start
    position).
    """
    record = sgf.read_sgf(game.sgf, check=False)  # replayed below
    colour = 1 if game.black == player.name else -1
    moves = list(record.moves)
    colours = np.asarray(record.colours)
    own = np.arange(len(moves)) >= first_ply
    mine = (colours == colour) & own
    states = sgf.replay(record)[:-1]
    priors = control.move_priors(base.evaluator, base.variables, states, moves) if moves else np.zeros(0)
    net = control.naturalness(moves, mine, priors, board_size=record.size)
    theirs = control.naturalness(moves, (colours != colour) & own, board_size=record.size)
    margin = float(game.margin) * colour if game.margin is not None else math.nan
    result = 0.5 if game.winner == "draw" else float(game.winner == ("black" if colour == 1 else "white"))
    return {
        "condition": condition.label,
        "method": condition.method,
        "param": "" if condition.param is None else condition.param,
        "opponent": opponent,
        **search_columns(player),
        "opening_moves": opening_moves,
        "start": start,
        "first_ply": first_ply,
        "game": game.game,
        "net_colour": "black" if colour == 1 else "white",
        "komi": game.komi,
        "winner": game.winner,
        "net_result": result,
        "net_margin": margin,
        "moves": game.moves,
        "net_moves": net.moves,
        "unnatural": net.unnatural,
        "mean_distance": round(net.mean_distance, 4),
        "distance_moves": net.distance_moves,
        "opponent_mean_distance": round(theirs.mean_distance, 4),
        "opponent_distance_moves": theirs.distance_moves,
        "precision": player.precision,
        "opening": game.opening,
        "opening_id": game.opening_id,
        "sgf": game.sgf,
    }


def play_condition(
    condition: Condition, base: players.Player, opponent: Opponent, settings: Settings, starts: list[dict] | None = None
) -> list[dict]:
    """Plays one condition's games against the opponent and measures them.

    From the empty board: ``--games`` games, ``--opening_moves`` random
    opening moves per colour pair. From the endgame starts (``condition.starts``):
    each start twice, the net Black in the first game of the pair.
    """
    player = controlled_player(base, condition)
    if condition.starts:
        if not starts:
            raise ValueError(f"condition {condition.label}: no endgame starts")
        games, opening = 2 * len(starts), 0
        start_moves = tuple(tuple(starts[i // 2]["moves"]) for i in range(games))
    else:
        games, opening, start_moves = settings.games, opening_moves(settings), None
    match_settings = match.MatchSettings(games=games, seed=settings.seed, score_visits=None)
    a_black = match_settings.side_a_black()
    match_settings = dataclasses.replace(
        match_settings,
        komi=tuple(settings.black_komi if b else settings.white_komi for b in a_black),
        opening_moves=opening,
        start_moves=start_moves,
        sgf_dir=os.path.join(settings.outdir, "sgf", condition.label.replace(":", "_")),
    )
    played = play_games(player, opponent, match_settings, settings.timeout)
    first = max(match_settings.start_length(), opening)
    return [
        game_row(
            condition,
            player,
            base,
            g,
            opponent=opponent.label,
            opening_moves=opening,
            first_ply=first,
            start=starts[g.game // 2]["start"] if condition.starts else "",
        )
        for g in played
    ]


# --------------------------------------------------------------------------
# Statistics.


def dominance(wins: float, games: int, rate: float = DOMINANCE_RATE, alpha: float = stat_tables.ALPHA) -> dict:
    """Whether the uncontrolled net dominates: one-sided exact binomial tests of its win rate against ``rate``.

    ``dominant`` is "yes" when the rate is shown above ``rate`` (p_above <
    alpha), "no" when it is shown below (p_below < alpha), "unclear" when
    the games show neither (or there are none).
    """
    above = stats.binomial_test(wins, games, rate, "greater")
    below = stats.binomial_test(wins, games, rate, "less")
    verdict = "yes" if above < alpha else ("no" if below < alpha else "unclear")
    return {"dominant": verdict, "p_above_95": above, "p_below_95": below}


def dominance_wins_needed(games: int, rate: float = DOMINANCE_RATE, alpha: float = stat_tables.ALPHA) -> int | None:
    """The fewest wins in ``games`` that show a rate above ``rate`` (exact, one-sided); None if no count does."""
    return next((k for k in range(games + 1) if stats.binomial_test(k, games, rate, "greater") < alpha), None)


def dominance_warning(summary: list[dict]) -> str:
    """A warning when the ``none`` row does not show the net dominant ("" when it does or was not played)."""
    row = next((s for s in summary if s["condition"] == "none"), None)
    if row is None or row["dominant"] == "yes":
        return ""
    record = (
        f"the uncontrolled net won {row['wins']}/{row['games']} ({100 * row['win_rate']:.0f}%, 95% Wilson "
        f"[{100 * row['wilson_lo']:.0f}%, {100 * row['wilson_hi']:.0f}%]) against {row['opponent']}"
    )
    if row["dominant"] == "no":
        why = f"fewer than {100 * DOMINANCE_RATE:.0f}% (exact one-sided p = {row['p_below_95']:.3g})"
    else:
        needed = dominance_wins_needed(int(row["games"]))
        can = (
            f"{needed} wins of {row['games']} would" if needed is not None else f"no record of {row['games']} games can"
        )
        why = (
            f"not shown to be above {100 * DOMINANCE_RATE:.0f}% (exact one-sided p = {row['p_above_95']:.3g}; "
            f"{can} show it)"
        )
    return (
        f"WARNING: {record}: {why}. The opponent is not shown to be dominated, so this is not the paper's "
        "setting (normal Leela won every game against Ray): a controlled win rate near 1/2 is not evidence "
        "of position control."
    )


def _p(value: float) -> float | str:
    """A p-value for the tables: 4 significant digits, "" when not computed."""
    return float(f"{value:.4g}") if isinstance(value, float) and math.isfinite(value) else ""


def _per_game(games: list[dict], key: str) -> list[float]:
    """A per-game measure of some games, those where it is defined."""
    values = [float(g[key]) for g in games if g.get(key, "") != ""]
    return [v for v in values if math.isfinite(v)]


def summarize(rows: list[dict], order: list[str], *, margin: float = 0.10) -> list[dict]:
    """One summary row per condition (module docstring); tests against each condition's baseline if played."""
    by = {}
    for r in rows:
        by.setdefault(r["condition"], []).append(r)
    out = []
    for label in order:
        games = by.get(label)
        if not games:
            continue
        n = len(games)
        res = np.array([float(g["net_result"]) for g in games])
        wins, draws = int(np.sum(res == 1)), int(np.sum(res == 0.5))
        rate = float(np.mean(res))
        lo, hi = results.wilson_interval(wins + 0.5 * draws, n)
        margins = np.array([float(g["net_margin"]) if g["net_margin"] != "" else math.nan for g in games])
        unnatural, unnatural_ci = stats.mean_interval(g["unnatural"] for g in games)
        distance, distance_ci = stats.mean_interval(g["mean_distance"] for g in games)
        opponent_distance, _ = stats.mean_interval(g["opponent_mean_distance"] for g in games)
        p_fewer = p_closer = p_leela = p_leela_natural = p_nearer = p_natural = math.nan
        leela = by.get(LEELA_PLUS)
        if leela is not None and label.endswith(STARTS) and games[0]["method"] == "endgame":
            lw = np.array([float(g["net_result"]) for g in leela])
            p_leela = stats.fisher_win_test(wins, n, int(np.sum(lw == 1)), len(lw), alternative="less")
            fewer = stats.mann_whitney_test(_per_game(games, "unnatural"), _per_game(leela, "unnatural"), "less")
            p_leela_natural = fewer[1]
        net_moves = sum(int(g.get("net_moves") or 0) for g in games)
        base = by.get(baseline_label(label))
        if base is not None and label != baseline_label(label):
            b = np.array([float(g["net_result"]) for g in base])
            p_fewer = stats.fisher_win_test(wins, n, int(np.sum(b == 1)), len(b), alternative="less")
            p_closer = stats.closer_to_half_test(rate, n, float(np.mean(b)), len(b))
        naive = by.get("naive" + (STARTS if label.endswith(STARTS) else ""))
        if naive is not None and games is not naive:
            p_natural = stats.mann_whitney_test(_per_game(games, "unnatural"), _per_game(naive, "unnatural"), "less")[1]
            nearer = stats.welch_t_test(_per_game(games, "mean_distance"), _per_game(naive, "mean_distance"), "less")
            p_nearer = nearer[1]
        check = dominance(wins + 0.5 * draws, n) if label == "none" else {}
        first = games[0]
        starts = {g.get("start", "") for g in games} - {""}
        start = f"{len(starts)} endgame starts at ply {first['first_ply']}" if starts else "empty board"
        out.append(
            {
                "condition": label,
                "method": first["method"],
                "param": first["param"],
                "opponent": first.get("opponent", ""),
                "visits": first.get("visits", ""),
                "algorithm": first.get("algorithm", ""),
                "noise": first.get("noise", ""),
                "opening_moves": first.get("opening_moves", ""),
                "start": start,
                "games": n,
                "wins": wins,
                "draws": draws,
                "win_rate": round(rate, 4),
                "wilson_lo": round(lo, 4),
                "wilson_hi": round(hi, 4),
                "mean_margin": round(float(np.nanmean(margins)), 2),
                "sd_margin": round(float(np.nanstd(margins, ddof=1)), 2) if n > 1 else "",
                "mean_abs_margin": round(float(np.nanmean(np.abs(margins))), 2),
                "unnatural_per_game": round(unnatural, 3),
                "unnatural_ci": round(unnatural_ci, 3),
                "unnatural_share": round(sum(int(g["unnatural"]) for g in games) / net_moves, 4) if net_moves else "",
                "distance": round(distance, 3),
                "distance_ci": round(distance_ci, 3),
                "opponent_distance": round(opponent_distance, 3),
                "dominant": check.get("dominant", ""),
                "p_above_95": check.get("p_above_95", math.nan),
                "p_below_95": check.get("p_below_95", math.nan),
                "p_tost": stats.equivalence_to_half(int(wins + 0.5 * draws), n, margin),
                "p_fewer_wins": p_fewer,
                "p_closer_to_half": p_closer,
                "p_rate_is_half": stats.binomial_test(wins + 0.5 * draws, n, 0.5),
                "p_fewer_wins_than_leela_plus": p_leela,
                "p_fewer_unnatural_than_leela_plus": p_leela_natural,
                "p_nearer_last_move": p_nearer,
                "p_fewer_unnatural_than_naive": p_natural,
            }
        )
    # One family per test: the controlled conditions (the baselines are not claims).
    stat_tables.correct([r for r in out if r["method"] != "none"], *_CORRECTED)
    for r in out:
        for key in [k for k in SUMMARY_COLUMNS if k.startswith("p_")]:
            r[key] = _p(r.get(key, math.nan))
    return out


def power_lines(games: int, start_games: int | None, margin: float) -> list[str]:
    """What this run's game counts can show, printed before it plays (module docstring)."""
    alpha, power = stat_tables.ALPHA, stat_tables.POWER
    needed = stats.equivalence_games_needed(margin, 0.5, alpha, power, multiple=2)
    normal = stats.equivalence_games_needed(margin, 0.5, alpha, power, method="normal", multiple=2)
    counts = [("per condition", games)] + ([("per condition from the starts", start_games)] if start_games else [])
    have = ", ".join(
        f"{n} games {what} have power {stats.equivalence_power(n, margin, 0.5, alpha):.2f}" for what, n in counts
    )
    lines = [
        f"power: a TOST of 1/2 ± {margin:g} (two one-sided exact binomial tests at α {alpha:g}) needs {needed} games "
        f"per condition for power {power:g} when the true rate is 1/2 (exact binomial power, in colour pairs; "
        f"normal approximation: {normal}); {have}",
        "power: " + stat_tables.detectable_line(games, "Fisher one-sided against none", [DOMINANCE_RATE, 0.75]),
    ]
    wins = dominance_wins_needed(games)
    lines.append(
        f"power: dominance: {games} games show a win rate above {100 * DOMINANCE_RATE:.0f}% "
        + (f"with at least {wins} wins" if wins is not None else "with no count (59 games are the fewest)")
        + " (exact binomial, one-sided, α 0.05)"
    )
    return lines


def format_summary(summary: list[dict]) -> str:
    lines = [
        f"{'condition':>17s} {'games':>5s} {'win rate [95% Wilson]':>24s} {'margin':>13s} "
        f"{'unnatural/game':>15s} {'distance':>14s} {'p(TOST)':>8s} {'Holm':>7s} {'p(fewer)':>8s} {'p(closer)':>9s}"
    ]
    for s in summary:
        sd = s["sd_margin"] if s["sd_margin"] != "" else float("nan")
        lines.append(
            f"{s['condition']:>17s} {s['games']:>5d} "
            f"{100 * s['win_rate']:>7.0f}% [{100 * s['wilson_lo']:3.0f}%, {100 * s['wilson_hi']:3.0f}%]   "
            f"{s['mean_margin']:+6.1f} ± {sd:4.1f} "
            f"{s['unnatural_per_game']:8.2f} ± {s['unnatural_ci']:4.2f} "
            f"{s['distance']:7.2f} ± {s['distance_ci']:4.2f} "
            f"{str(s['p_tost']):>8s} {str(s.get('p_tost_holm', '')):>7s} "
            f"{str(s['p_fewer_wins']):>8s} {str(s['p_closer_to_half']):>9s}"
        )
    for s in summary:
        if s["dominant"]:
            lines.append(
                f"dominance ({s['condition']}): {s['dominant']} (win rate above {100 * DOMINANCE_RATE:.0f}%: "
                f"p = {s['p_above_95']}; below: p = {s['p_below_95']})"
            )
    for s in summary:
        if s.get("p_fewer_wins_than_leela_plus", "") != "":
            lines.append(
                f"{s['condition']} against {LEELA_PLUS} (Table 7's Leela+): fewer wins, Fisher one-sided "
                f"p = {s['p_fewer_wins_than_leela_plus']} (Holm {s['p_fewer_wins_than_leela_plus_holm']}); "
                f"moves below prior 0.05: {s['unnatural_share']}"
            )
    settings = {(s["opponent"], s["visits"], s["algorithm"], s["noise"], s["opening_moves"]) for s in summary}
    settings.discard(("", "", "", "", ""))  # condition files of older runs
    for opponent, visits, algorithm, noise, opening in sorted(settings, key=str):
        lines.append(
            f"net: {visits} visits, {algorithm}, noise {noise}, {opening} random opening moves; opponent {opponent}"
        )
    return "\n".join(lines)


def plot(summary: list[dict], path: str, title: str) -> None:
    plt = common.pyplot()
    labels = [s["condition"] for s in summary]
    x = np.arange(len(labels))
    fig, axes = plt.subplots(1, 4, figsize=(max(12, 1.4 * len(labels) * 2), 3.8))

    def f(key):
        return np.array([float(s[key]) if s[key] != "" else np.nan for s in summary])

    ax = axes[0]
    y = f("win_rate")
    ax.errorbar(x, y, yerr=[y - f("wilson_lo"), f("wilson_hi") - y], fmt="o", capsize=3)
    ax.axhline(0.5, color="grey", ls=":", lw=0.8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("net's win rate (95% Wilson)")
    ax = axes[1]
    ax.errorbar(x, f("mean_margin"), yerr=f("sd_margin"), fmt="s", capsize=3)
    ax.axhline(0, color="grey", ls=":", lw=0.8)
    ax.set_title("net's final margin (mean ± sd)")
    ax = axes[2]
    ax.bar(x, f("unnatural_per_game"), yerr=f("unnatural_ci"), capsize=3, color="tab:orange")
    ax.set_title("moves with prior < 0.05 per game")
    ax = axes[3]
    ax.errorbar(x, f("distance"), yerr=f("distance_ci"), fmt="o", capsize=3, label="net to the opponent's last move")
    ax.plot(x, f("opponent_distance"), "x", color="grey", label="opponent to the net's last move")
    ax.set_title("mean distance to the last move")
    ax.legend(fontsize=7)
    for ax in axes:
        ax.set_xticks(x, labels, rotation=45, ha="right")
    fig.suptitle(title)
    fig.tight_layout()
    common.save_figure(fig, path)


def _opponent_title(settings: Settings) -> str:
    level = gnugo_level(settings.opponent, settings.level)
    return f"GNU Go level {level} (never resigns)" if level is not None else settings.opponent


def write_outputs(settings: Settings, order: list[str]) -> list[dict]:
    """games.csv, summary.csv and the PNG from the condition files in ``--outdir``."""
    directory = os.path.join(settings.outdir, "conditions")
    rows = []
    found = []
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if name.endswith(".csv"):
            part = [
                {_OLD_COLUMNS.get(k, k): v for k, v in r.items()}
                for r in common.read_csv(os.path.join(directory, name))
            ]
            rows.extend(part)
            if part:
                found.append(part[0]["condition"])
    order = [c for c in order if c in found] + [c for c in found if c not in order]
    if not rows:
        raise ValueError(f"no condition files in {directory}")
    common.write_csv(os.path.join(settings.outdir, "games.csv"), rows, GAME_COLUMNS)
    summary = summarize(rows, order, margin=settings.equivalence_margin)
    common.write_csv(os.path.join(settings.outdir, "summary.csv"), summary, SUMMARY_COLUMNS)
    plot(
        summary,
        os.path.join(settings.outdir, "position_control.png"),
        f"{settings.net} vs {_opponent_title(settings)}, {settings.visits} visits, colours alternating",
    )
    return summary


def run(settings: Settings) -> list[dict]:
    """Plays every condition not yet in ``outdir`` (none with ``summarize_only``) and writes the tables and the
    PNG from the condition files; returns the summary."""
    conditions = parse_conditions(settings.methods, target_winrate=settings.target_winrate)
    gnugo_level(settings.opponent, settings.level)  # a bad --opponent fails before anything is played
    if settings.endgame_starts:
        conditions = with_endgame_starts(conditions)
    elif any(c.starts for c in conditions):
        raise ValueError(f"--methods={','.join(settings.methods)}: a condition @starts needs --endgame_starts")
    order = [c.label for c in conditions]
    if not settings.summarize_only:
        os.makedirs(os.path.join(settings.outdir, "conditions"), exist_ok=True)
        options = settings.player_options()
        (base,) = common.load_nets(
            [(None, settings.net)], board_size=settings.board_size, options=options, seed=settings.seed
        )
        opponent = load_opponent(settings, base)
        start_games = 2 * settings.endgame_starts if settings.endgame_starts else None
        for line in power_lines(settings.games, start_games, settings.equivalence_margin):
            print(line, flush=True)
        starts = endgame_starts(base, opponent, settings) if settings.endgame_starts else None
        for condition in conditions:
            path = os.path.join(settings.outdir, "conditions", condition.label.replace(":", "_") + ".csv")
            if os.path.exists(path) and not settings.overwrite:
                print(f"{condition.label:>17s}: already played ({path})", flush=True)
                continue
            t0 = time.time()
            rows = play_condition(condition, base, opponent, settings, starts)
            common.write_csv(path, rows, GAME_COLUMNS)
            s = summarize(rows, [condition.label], margin=settings.equivalence_margin)[0]
            print(
                f"{condition.label:>17s}: {s['wins']}/{s['games']} wins, {100 * s['win_rate']:.0f}% "
                f"[{100 * s['wilson_lo']:.0f}%, {100 * s['wilson_hi']:.0f}%], margin {s['mean_margin']:+.1f} "
                f"(sd {s['sd_margin']}), unnatural {s['unnatural_per_game']:.2f}/game, "
                f"distance {s['distance']:.2f}, TOST p {s['p_tost']} ({time.time() - t0:.0f}s)",
                flush=True,
            )
            if condition.label == "none" and dominance_warning([s]):
                print(dominance_warning([s]), flush=True)
    summary = write_outputs(settings, order)
    print(format_summary(summary))
    warning = dominance_warning(summary)
    if warning:
        print(warning)
    return summary


def main(argv=None, *, exit_on_error: bool = False) -> int:
    """The command line: a flag per field of :class:`Settings`. A condition already written stays: rerunning
    the same command resumes after it."""
    return common.main(__name__, argv, exit_on_error=exit_on_error)


if __name__ == "__main__":
    raise SystemExit(main(exit_on_error=True))
