"""SAI's sharp value on 7×7, lever by lever: the arms' curves of what the value learns and what its data teach.

    python -m experiments.run --config=experiments/sharp_value/config.py  # the shipped round
    sharp_value.run(sharp_value.Settings(arms=("sai=runs/sharp/sai", "fixed=runs/sharp/fixed"), outdir="/tmp/sharp"))

SAI's nets knew the fair komi: on 7×7 they reached α_∅ ≈ 9 and β_∅ > 2.
Each arm is a run of ``python -m saijax.train`` fine-tuned from one zoo net
with one set of self-play switches (experiments/README.md, "SAI's sharp
value on 7×7", has the commands). For every arm of ``arms``
(``NAME=WORKDIR[@G]``) this script copies, per generation, into ``curves.csv``:

* what the net learned at the empty board: α_∅ and β_∅;
* what its self-play data teach: ``data_alpha`` and ``data_beta``, the
  logistic fit of the complete games' results on their komi
  (:func:`saijax.learn.selfplay_stats.komi_curve_fit`), with its standard error, the
  same fit over the games within 1.5 points of α_∅ (``_local``: how sharply
  the results turn where the decision is), and the sampled komi's spread;
* how self-play opened: the centre point's share of first moves (D4 on
  7×7, perfect play's move), the most played first move and the openings'
  entropy;
* the share of training rows from resigned games, the score error (all
  positions, and late positions with their median β), the cumulative
  self-play evaluations and minutes.

``arms.csv`` has one row per arm (the means over its last ``last``
generations, β_∅'s peak and where it was, and the issue's targets: α_∅
within 9 ± 0.5, β_∅ ≥ 2, the data's β within a factor 1.5 of the learned
one, the net's first move D4 in each of those generations), and
``sharp_value.png`` draws β (learned and fitted), α and D4's share against
generations; ``komi_results.csv`` pools each arm's complete games over
those generations by komi (Black's score beside the net's sigmoid, the
figure's last panel). ``opening_results.csv`` groups the same games by the position
after their first ``opening_plies`` moves (read from the run's replay files), and
``arms.csv``'s ``within_beta`` is the komi curve's β with one α per opening: when
it is as flat as the pooled β, the opening's randomness is not what flattens the
data, the play after it is; ``within_net_beta`` has one α per opening and
net (the games one net played after the opening from one position; a
generation's games that began under the net before are left out): when it is
flat too, the changes of the net from one generation to the next are not the
cause either. ``komi_pairs.csv`` pairs those games (one net, one position and
history, two komis) and counts how often the result turns the wrong way with
the komi, by the komi's gap, beside the pairs at one komi, which deterministic
play makes the same game. ``margins.csv`` describes the final margins of the
played-out games that the final-score target on α is trained toward
(:func:`margin_rows`: their mean against their median, and the share given
away), and ``arms.csv`` has the late positions' median β and score error
beside them. ``board_results.csv`` (:func:`board_rows`) has, generation by generation and
komi by komi, how the played-out complete games ended on the board: at
perfect play's result whatever the komi, one point of area short of it, drawn
at an integer komi, or moved toward the komi (the side the komi favours giving
points back while it still wins); ``board_bands.csv``
pools them by the komi's distance from the fair one (:func:`board_bands`). ``decided.csv``
(:func:`decided_rows`) says when the complete games were decided, read by the nets that
played them: in self-play's random opening or by the searched moves after it, for the
games the komi's favourite won and for its upsets; ``decided_bands.csv`` pools them by
band (:func:`decided_bands`). Curves of arms
not given again are kept (an arm added in one session stays beside the next
session's). One run an arm is a measurement; ``lever_tests`` declares
families of two-sample tests (``lever_tests.csv``): each lever arm's data's
β (or the quantity a test names, e.g. ``data_beta_kept``, the fit over the
games without a blunder, whose empty board is trained on), generation by
generation, against its parent's last generations before the lever (Welch,
Holm and BH over the family). ``legs`` cuts the end-state run (the recipe's,
continued session by session) into its legs for the issue's stopping rule
(``legs.csv``: three consecutive legs that move β_∅ by less than 0.1).
``plot_only`` redraws the figure, the tests and the legs from the tables.
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics

import jax
import numpy as np

from experiments.lib import common
from experiments.lib import curves as run_curves
from experiments.lib.common import setting
from saijax.analysis import stats
from saijax.core import checkpoints, features, go, networks, sigmoid
from saijax.learn import replay, selfplay_stats

FAIR_KOMI = 9.0  # 7×7 under area scoring (Davies; the 7×7 paper)
TARGET_BETA = 2.0
ALPHA_TOLERANCE = 0.5
RATIO_TOLERANCE = 1.5

CURVE_KEYS = (
    "alpha_empty",
    "beta_empty",
    "data_alpha",
    "data_beta",
    "data_beta_se",
    "data_alpha_local",
    "data_beta_local",
    "data_beta_local_se",
    "local_games",
    "data_alpha_kept",
    "data_beta_kept",
    "data_beta_kept_se",
    "kept_games",
    "blunder_game_share",
    "komi_sd",
    "avg_komi",
    "first_move",
    "first_move_top",
    "first_move_top_share",
    "first_move_centre_share",
    "first_move_entropy",
    "resigned_row_share",
    "score_error",
    "score_error_late",
    "beta_late",
    "black_winrate",
    "complete_games",
    "games",
    "simulations",
    "train_value_loss",
)


def learning_curve(name: str, workdir: str, upto: int | None = None) -> list[dict]:
    """The arm's curve: one row per generation (up to ``upto``) with :data:`CURVE_KEYS`."""
    return run_curves.learning_curve(name, workdir, upto, CURVE_KEYS)


def komi_results(name: str, workdir: str, last: int, upto: int | None = None) -> list[dict]:
    """The arm's complete games pooled over its last ``last`` generations (up to ``upto``; those
    that record ``komi_results``), one row per komi: games, Black's score (wins + ½ draws) and
    rate, and the net's win probability for Black there at the last of them, σ(β_∅(α_∅ − k)).
    Empty for runs from before ``komi_results``."""
    metrics = common.read_metrics(workdir)
    gens = [g for g in sorted(g for g in metrics if upto is None or g <= upto)[-last:] if "komi_results" in metrics[g]]
    pooled: dict[float, list[float]] = {}
    for g in gens:
        for k, (n, score) in metrics[g].get("komi_results", {}).items():
            cell = pooled.setdefault(float(k), [0, 0.0])
            cell[0] += n
            cell[1] += score
    if not pooled:
        return []
    final = metrics[gens[-1]]
    alpha, beta = float(final["alpha_empty"]), float(final["beta_empty"])
    return [
        {"arm": name, "generations": f"{gens[0]}-{gens[-1]}", "komi": k, "games": int(n), "black_score": score,
         "black_rate": score / n, "net_black_rate": 1 / (1 + math.exp(-beta * (alpha - k)))}
        for k, (n, score) in sorted(pooled.items())
    ]  # fmt: skip


def _opening_label(rules: go.GoRules, own: np.ndarray, opp: np.ndarray, black_to_play: bool) -> str:
    """The position as ``B:D4,C3 W:D3`` (GTP vertices, each colour's stones in board order)."""
    black, white = (own, opp) if black_to_play else (opp, own)
    stones = [",".join(go.to_gtp(rules, int(i)) for i in np.flatnonzero(x)) for x in (black, white)]
    return f"B:{stones[0]} W:{stones[1]}"


def _replay_generations(
    workdir: str, last: int, upto: int | None, board_size: int
) -> tuple[replay.ReplayBuffer, list[int]]:
    """The run's replay buffer and its last ``last`` generations (up to ``upto``) that have a file."""
    metrics = common.read_metrics(workdir)
    gens = sorted(g for g in metrics if upto is None or g <= upto)[-last:]
    buffer = replay.ReplayBuffer(os.path.join(workdir, "replay"), board_size)
    stored = set(buffer.available_generations())
    return buffer, [g for g in gens if g in stored]


def _black_view(rows: replay.TrainingRows) -> tuple[np.ndarray, np.ndarray]:
    """Each row's game komi and Black's score (1 win, ½ draw, 0 loss), from the mover's signed
    komi and outcome."""
    black = np.asarray(rows.to_play) == 1  # to_play: +1 Black, -1 White
    signed_komi, z = np.asarray(rows.signed_komi, np.float64), np.asarray(rows.z, np.float64)
    return np.where(black, -signed_komi, signed_komi), np.where(black, z, 1.0 - z)


def _single_nets(rows: replay.TrainingRows, plies: int) -> dict[int, int]:
    """Each game of a replay file whose moves from ``plies`` on one net played: game id → that net's
    generation. Self-play's slots carry their games across a generation's end, so a file's games
    began under the generation before (about half of them at 64 slots and 128 games a generation);
    the games whose moves after the opening two nets shared are left out."""
    game_id, move, gen = (np.asarray(x) for x in (rows.game_id, rows.move_number, rows.generation))
    nets: dict[int, set] = {}
    for g, n in zip(game_id[move >= plies].tolist(), gen[move >= plies].tolist()):
        nets.setdefault(g, set()).add(n)
    return {g: next(iter(n)) for g, n in nets.items() if len(n) == 1}


def opening_results(
    name: str, workdir: str, last: int, plies: int, upto: int | None = None, board_size: int = 7
) -> list[dict]:
    """The arm's complete games over its last ``last`` generations (up to ``upto``), grouped by the
    position after their first ``plies`` moves (self-play's random opening: ``plies`` =
    ``selfplay.random_moves``), one row per (opening, komi, generation, net): games and Black's
    score. ``generation`` is the replay file's; ``net`` is the generation of the one net that
    played the game's moves after the opening, empty where two did (:func:`_single_nets`).
    Read from the run's replay files, whose row at move ``plies`` of each complete game gives its
    position, komi and result; generations without a replay file are skipped, and no rows come
    back when none has one. The within-openings fits (:func:`within_fit`) read them."""
    buffer, gens = _replay_generations(workdir, last, upto, board_size)
    rules = go.GoRules(board_size)
    cells: dict[tuple[str, float, int, int | str], list[float]] = {}
    for g in gens:
        rows = buffer.read_generation(g)
        nets = _single_nets(rows, plies)
        komis, scores = _black_view(rows)
        at = np.flatnonzero(~np.asarray(rows.is_branch) & (np.asarray(rows.move_number) == plies))
        planes = np.asarray(features.unpack_planes(np.asarray(rows.planes)[at]))
        own = planes[..., 0].reshape(len(at), -1)  # go.features' plane 0: the mover's stones now
        opp = planes[..., 4].reshape(len(at), -1)  # plane 4: the opponent's
        for j, i in enumerate(at):
            black = int(rows.to_play[i]) == 1
            komi, score = float(komis[i]), float(scores[i])
            net = nets.get(int(rows.game_id[i]), "")
            cell = cells.setdefault((_opening_label(rules, own[j], opp[j], black), komi, int(g), net), [0, 0.0])
            cell[0] += 1
            cell[1] += score
    if not cells:
        return []
    span = f"{gens[0]}-{gens[-1]}"
    return [
        {"arm": name, "generations": span, "plies": plies, "opening": opening, "komi": komi, "generation": g,
         "net": net, "games": int(n), "black_score": score}
        for (opening, komi, g, net), (n, score) in sorted(cells.items(), key=lambda c: (*c[0][:3], str(c[0][3])))
    ]  # fmt: skip


PAIR_GAPS = (1.0, 3.0)  # komi gaps of komi_pairs' bands: same komi, up to 1 point, up to 3, more


def _pair_band(gap: float) -> str:
    if gap == 0:
        return "0"
    low = 0.0
    for edge in PAIR_GAPS:
        if gap <= edge:
            return f"{low:g}-{edge:g}"
        low = edge
    return f">{low:g}"


def _count_pair(bands: dict[str, dict], low: dict, high: dict, plies: int) -> None:
    """Adds one pair (the game at the lower komi, the one at the higher) to its band's counts."""
    band = bands.setdefault(_pair_band(high["komi"] - low["komi"]), {
        "pairs": 0, "same": 0, "proper": 0, "inverted": 0, "identical": 0, "divergence": []})  # fmt: skip
    band["pairs"] += 1
    if low["score"] == high["score"]:
        band["same"] += 1
    elif low["komi"] == high["komi"]:
        pass  # at one komi a different result has no direction
    elif low["score"] > high["score"]:
        band["proper"] += 1
    else:
        band["inverted"] += 1
    moves = sorted(m for m in set(low["positions"]) & set(high["positions"]) if m >= plies)
    differ = next((m for m in moves if low["positions"][m] != high["positions"][m]), None)
    if differ is not None:
        band["divergence"].append(differ)
    elif low["positions"].keys() == high["positions"].keys():
        band["identical"] += 1


def _games_by_start(rows: replay.TrainingRows, plies: int) -> list[list[dict]]:
    """A replay file's complete games that one net played after the opening, grouped by that net and
    the net's input at move ``plies`` (the position and its history): each game's positions by move
    number, komi and Black's score."""
    nets = _single_nets(rows, plies)
    keep = ~np.asarray(rows.is_branch)
    game_id, move = np.asarray(rows.game_id)[keep], np.asarray(rows.move_number)[keep]
    planes = np.asarray(rows.planes)[keep]
    komis, scores = (x[keep] for x in _black_view(rows))
    games: dict[int, dict] = {}
    for i in range(game_id.size):
        if int(game_id[i]) not in nets:
            continue
        game = games.setdefault(int(game_id[i]), {"positions": {}})
        game["positions"][int(move[i])] = planes[i].tobytes()
        game["komi"], game["score"] = float(komis[i]), float(scores[i])
    groups: dict[tuple, list[dict]] = {}
    for gid, game in games.items():
        if plies in game["positions"]:
            groups.setdefault((nets[gid], game["positions"][plies]), []).append(game)
    return list(groups.values())


def komi_pairs(
    name: str, workdir: str, last: int, plies: int, upto: int | None = None, board_size: int = 7
) -> list[dict]:
    """Pairs of complete games that one net played from one position at two komis: how the result
    turns with the komi when nothing else changes. Over the arm's last ``last`` generations (up to
    ``upto``; those with a replay file), every two complete games that one net played after the
    opening (:func:`_single_nets`) from the same position and history after ``plies`` moves form
    a pair; one row per band of the komi gap (``"0"``, then :data:`PAIR_GAPS`): ``pairs``,
    ``same`` (equal results), ``proper`` (Black did better at the lower komi), ``inverted`` (at
    the higher one; both None at one komi), ``inverted_share`` = inverted / (proper + inverted), ``identical`` (the same
    game move for move) and the median ``divergence`` move, the first move number from ``plies``
    on where the two games' positions differ. The moves after the opening are the search's best,
    so the pairs at one komi are the same game (a check of that), and a different position means
    the komi changed a choice. A net whose play the komi does not change turns no pair the wrong
    way; coin flips give a share of ½. A game enters several pairs, so the pairs are not
    independent: a measurement, not a test."""
    buffer, gens = _replay_generations(workdir, last, upto, board_size)
    bands: dict[str, dict] = {}
    for g in gens:
        for members in _games_by_start(buffer.read_generation(g), plies):
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    _count_pair(bands, *((a, b) if a["komi"] <= b["komi"] else (b, a)), plies)
    order = ["0"] + [_pair_band(edge) for edge in PAIR_GAPS] + [_pair_band(math.inf)]
    span = f"{gens[0]}-{gens[-1]}" if gens else ""
    out = []
    for key in sorted(bands, key=order.index):
        band = bands[key]
        turned = band["proper"] + band["inverted"]
        one_komi = key == "0"  # no direction: proper and inverted stay empty
        out.append({
            "arm": name, "generations": span, "plies": plies, "komi_gap": key, "pairs": band["pairs"],
            "same": band["same"], "proper": None if one_komi else band["proper"],
            "inverted": None if one_komi else band["inverted"],
            "inverted_share": band["inverted"] / turned if turned else math.nan, "identical": band["identical"],
            "divergence_median": float(np.median(band["divergence"])) if band["divergence"] else math.nan,
        })  # fmt: skip
    return out


COLLAPSE_SHARE = 0.5  # margin_rows: a margin over half the board's points is a game given away


def margin_rows(name: str, workdir: str, last: int, upto: int | None = None, board_size: int = 7) -> list[dict]:
    """What the final-score target on α (``training.score_aux_weight``: the MSE of α + k against the
    final margin) is trained toward: the played-out rows (``ownership_mask``) of the arm's last ``last``
    generations (up to ``upto``; those with a replay file), one row: their count and games, the mean and
    median |margin| (the MSE's optimum is the mean, pulled by the tails), the winner's mean and median
    margin, the share of rows whose margin is more than half the board (:data:`COLLAPSE_SHARE` · N²
    points: the losing side gave the game away, as λ = 0 self-play does) and within 3 points. A mean
    far above the median says the score target ties α to the collapses, not to the decision point; the
    value's σ(β(α + k)) can then fit the results only with a flat β. No row without replay files or
    played-out rows."""
    buffer, gens = _replay_generations(workdir, last, upto, board_size)
    margins, z, games = [], [], set()
    for g in gens:
        rows = buffer.read_generation(g)
        if rows.ownership_mask is None:
            continue
        keep = np.asarray(rows.ownership_mask, bool)
        margins.append(np.asarray(rows.margin, np.float64)[keep])
        z.append(np.asarray(rows.z, np.float64)[keep])
        games |= {(g, int(i)) for i in np.asarray(rows.game_id)[keep]}
    margin = np.concatenate(margins) if margins else np.zeros(0)
    if margin.size == 0:
        return []
    size = np.abs(margin)
    won = np.concatenate(z) == 1.0
    return [{
        "arm": name, "generations": f"{gens[0]}-{gens[-1]}", "rows": int(margin.size), "games": len(games),
        "margin_mean_abs": float(size.mean()), "margin_median_abs": float(np.median(size)),
        "winner_margin_mean": float(margin[won].mean()) if won.any() else math.nan,
        "winner_margin_median": float(np.median(margin[won])) if won.any() else math.nan,
        "collapsed_share": float((size > COLLAPSE_SHARE * board_size**2).mean()),
        "within_3_share": float((size <= 3).mean()),
    }]  # fmt: skip


def board_rows(name: str, workdir: str, last: int, upto: int | None = None, board_size: int = 7) -> list[dict]:
    """How the played-out complete games of the arm's last ``last`` generations (up to ``upto``) ended on
    the board: Black's area lead (its final margin plus the komi; read from the empty board's row of
    each game, so a game with a blunder, whose row is not kept, is not counted). One row per generation
    and komi, in counts (rows pool by summing): the games, Black's points (wins and ½ draws), those at
    perfect play's result (:data:`FAIR_KOMI`, B+9 on 7×7), those one point of area short of it (B+7 on
    7×7: under area scoring one point changes the result by 2), the draws (a result equal to an integer
    komi) and those moved toward the komi (Black ahead by more than perfect play's result at a komi above
    it, by less at a komi below it), and the median result. Perfect
    play's result does not depend on the komi; a winrate player's does when the side the komi favours
    gives points back while it still wins: its games end near the komi, and the data's komi curve
    flattens (:func:`board_bands`). No rows without replay files."""
    buffer, gens = _replay_generations(workdir, last, upto, board_size)
    out = []
    for g in gens:
        rows = buffer.read_generation(g)
        if rows.ownership_mask is None:
            continue
        first = (np.asarray(rows.move_number) == 0) & ~np.asarray(rows.is_branch, bool)
        first &= np.asarray(rows.ownership_mask, bool) & (np.asarray(rows.to_play) == 1)
        komi, score = (x[first] for x in _black_view(rows))
        board = (np.asarray(rows.margin, np.float64) - np.asarray(rows.signed_komi, np.float64))[first]
        for k in np.unique(komi):
            at = komi == k
            b = board[at]
            toward = (b > FAIR_KOMI) if k > FAIR_KOMI else (b < FAIR_KOMI) if k < FAIR_KOMI else np.zeros(b.size, bool)
            out.append({
                "arm": name, "generation": g, "komi": float(k), "games": int(at.sum()),
                "black_points": float(score[at].sum()), "perfect": int(np.sum(b == FAIR_KOMI)),
                "one_short": int(np.sum(b == FAIR_KOMI - 2)), "draws": int(np.sum(b == k)),
                "toward_komi": int(toward.sum()), "board_median": float(np.median(b)),
            })  # fmt: skip
    return out


BOARD_BANDS = ((0.0, 1.0), (1.5, 3.0), (3.5, math.inf))  # |komi − FAIR_KOMI| bands of board_bands


def _band(komi: float) -> str:
    """The :data:`BOARD_BANDS` band of a komi (its distance from :data:`FAIR_KOMI`)."""
    d = abs(komi - FAIR_KOMI)
    return next(f"{lo:g}-{hi:g}" for lo, hi in BOARD_BANDS if d <= hi)


def board_bands(rows: list[dict], first: int | None = None, last: int | None = None) -> list[dict]:
    """:func:`board_rows`' rows (one arm's, generations ``first``–``last`` when given) pooled by how far the
    komi is from the fair one (:data:`BOARD_BANDS`): the games, the share at perfect play's result and
    the share moved toward the komi."""
    out = []
    for band in (f"{lo:g}-{hi:g}" for lo, hi in BOARD_BANDS):
        sel = [
            r for r in rows
            if _band(float(r["komi"])) == band
            and (first is None or int(r["generation"]) >= first) and (last is None or int(r["generation"]) <= last)
        ]  # fmt: skip
        games = sum(int(r["games"]) for r in sel)
        out.append({
            "band": band, "games": games,
            "perfect_share": sum(int(r["perfect"]) for r in sel) / games if games else math.nan,
            "toward_komi_share": sum(int(r["toward_komi"]) for r in sel) / games if games else math.nan,
        })  # fmt: skip
    return out


DECIDED_WINRATE = 0.7  # decided_rows: a game is decided from the ply after which its winner's winrate stays above this
DECIDED_LATER = (15, 25)  # decided_rows' ply bins after the opening: to 15, 16–25, 26 on


def _checkpoint_generations(workdir: str) -> set[int]:
    path = os.path.join(workdir, "checkpoints")
    return {int(d) for d in os.listdir(path) if d.isdigit()} if os.path.isdir(path) else set()


def decided_rows(
    name: str, workdir: str, last: int, plies: int, upto: int | None = None, board_size: int = 7
) -> list[dict]:
    """When the arm's complete games were decided, read by the nets that played them: every position of
    each complete game (its replay rows) is evaluated by the net of that self-play generation (checkpoint
    ``generation − 1``) at the game's komi, and the game is *decided* at the first ply after which its
    winner's winrate stays above :data:`DECIDED_WINRATE` to its last row. A game decided by the position
    after ``plies`` moves was decided by self-play's random opening (``selfplay.random_moves``, or before
    it); a later one by the searched moves. One row per generation, komi band (:data:`BOARD_BANDS`),
    finish (``played`` out or ``resigned``) and result (``favourite``: the side the komi favours won;
    ``upset``: it lost; ``even``: a win at the fair komi itself), in counts: the games, those decided in
    the opening, by move 15, at 16–25 and from 26 on (:data:`DECIDED_LATER`; a game whose winner ends
    below the mark counts as decided at its end), and the sum of the winner's winrates
    at the empty board and after the opening. Draws are left out, and so are the games with a position
    whose net's checkpoint is gone (runs keep every 5th and their last few) and the arms without replay
    files or checkpoints (no rows)."""
    buffer, gens = _replay_generations(workdir, last, upto, board_size)
    have = _checkpoint_generations(workdir)
    nets: dict[int, object] = {}
    cells: dict[tuple, list[float]] = {}
    for g in gens:
        rows = buffer.read_generation(g)
        played_by = np.asarray(rows.generation).astype(np.int64) - 1  # the checkpoint that played each row
        usable = np.isin(played_by, sorted(have))
        if not usable.any():
            continue
        to_play, packed = np.asarray(rows.to_play), np.asarray(rows.planes)
        signed_komi = np.asarray(rows.signed_komi, np.float32)
        black_winrate = np.full(to_play.size, np.nan)
        for n in np.unique(played_by[usable]).tolist():
            if n not in nets:
                loaded = checkpoints.load_network(os.path.join(workdir, "checkpoints", str(n)))
                nets[n] = (loaded.spec.value_head, _jit_winrate(loaded.spec.build()), loaded.variables)
            value_head, winrate_of, variables = nets[n]
            idx = np.flatnonzero(played_by == n)
            for start in range(0, idx.size, 4096):
                at = idx[start : start + 4096]
                planes = features.unpack_planes(packed[at])
                x = features.add_colour_plane(planes, to_play[at], value_head)
                w = np.asarray(winrate_of(variables, x, signed_komi[at]), np.float64)
                black_winrate[at] = np.where(to_play[at] == 1, w, 1.0 - w)
        for d in game_decisions(rows, black_winrate, plies):
            cell = cells.setdefault((g, d["band"], d["finish"], d["result"]), [0, 0, 0, 0, 0, 0.0, 0.0])
            cell[0] += 1
            early, middle = DECIDED_LATER
            cell[1 + (d["decided"] > plies) + (d["decided"] > early) + (d["decided"] > middle)] += 1
            cell[5] += d["winner_start"]
            cell[6] += d["winner_after_opening"]
    return [
        {"arm": name, "generation": g, "band": band, "finish": finish, "result": result, "games": c[0],
         "decided_in_opening": c[1], "decided_to_15": c[2], "decided_16_25": c[3], "decided_26_on": c[4],
         "winner_start_sum": c[5], "winner_after_opening_sum": c[6]}
        for (g, band, finish, result), c in sorted(cells.items())
    ]  # fmt: skip


def game_decisions(rows: replay.TrainingRows, black_winrate: np.ndarray, plies: int) -> list[dict]:
    """Each complete game of a replay file (played from the empty board, not a draw, every row with a
    winrate: ``black_winrate`` per row, NaN where none) with its komi ``band``, ``finish`` (``played``
    out or ``resigned``), ``result`` (``favourite``, ``upset`` or ``even``: see :func:`decided_rows`),
    ``decided`` (the first ply of the last run of positions where the winner's winrate is above
    :data:`DECIDED_WINRATE`; the game's length when its last position is not), and the winner's
    winrate at the empty board and after ``plies`` moves."""
    komis, scores = _black_view(rows)
    game_id, move = np.asarray(rows.game_id), np.asarray(rows.move_number)
    complete = ~np.asarray(rows.is_branch, bool)
    if rows.ownership_mask is None:
        return []
    played_out = np.asarray(rows.ownership_mask, bool)
    order = np.lexsort((move, game_id))
    out = []
    for gid in np.unique(game_id[complete]).tolist():
        at = order[(game_id[order] == gid) & complete[order]]
        if move[at[0]] != 0 or np.isnan(black_winrate[at]).any():
            continue
        komi, score = float(komis[at[0]]), float(scores[at[0]])
        if score == 0.5:
            continue
        winner = black_winrate[at] if score == 1.0 else 1.0 - black_winrate[at]
        above = winner > DECIDED_WINRATE
        decided = above.size - (int(np.argmin(above[::-1])) if not above.all() else above.size)
        favourite_won = (score == 1.0) == (komi < FAIR_KOMI)
        out.append({
            "game": gid, "komi": komi, "band": _band(komi), "finish": "played" if played_out[at[0]] else "resigned",
            "result": "even" if komi == FAIR_KOMI else "favourite" if favourite_won else "upset",
            "decided": int(decided), "winner_start": float(winner[0]),
            "winner_after_opening": float(winner[min(plies, at.size - 1)]),
        })  # fmt: skip
    return out


def _jit_winrate(module: networks.SaiNet):
    """One net's jitted winrate of the player to move at its signed komi: f(variables, x, signed_komi)."""

    def winrate(variables, x, signed_komi):
        out, _ = networks.apply_network(module, variables, x)
        return sigmoid.winrate(out.alpha, out.beta, signed_komi)

    return jax.jit(winrate)


def decided_bands(rows: list[dict]) -> list[dict]:
    """:func:`decided_rows`' rows of one arm pooled by band, finish and result: the games, the share
    decided in the opening and in each later ply range, and the winner's mean winrate at the empty
    board and after the opening."""
    out: dict[tuple, dict] = {}
    for r in rows:
        key = (r["band"], r["finish"], r["result"])
        cell = out.setdefault(key, {"band": key[0], "finish": key[1], "result": key[2], "games": 0,
                                    "generations": set()})  # fmt: skip
        cell["generations"].add(int(r["generation"]))
        for k, v in r.items():
            if k.startswith(("decided_", "winner_")) or k == "games":
                cell[k] = cell.get(k, 0) + float(v)
    pooled = []
    for key in sorted(out):
        c = out[key]
        n = c["games"]
        gens = sorted(c.pop("generations"))
        row = {"band": c["band"], "finish": c["finish"], "result": c["result"], "games": int(n),
               "generations": ",".join(map(str, gens))}  # fmt: skip
        for k in c:
            if k.startswith("decided_"):
                row[k + "_share"] = c[k] / n if n else math.nan
        row["winner_start"] = c["winner_start_sum"] / n if n else math.nan
        row["winner_after_opening"] = c["winner_after_opening_sum"] / n if n else math.nan
        pooled.append(row)
    return pooled


def within_fit(openings: list[dict]) -> dict:
    """:func:`saijax.learn.selfplay_stats.komi_curve_fit_within` over an arm's :func:`opening_results` rows
    (each cell's games enter with their mean score, the same likelihood as one by one), twice:
    one α per opening (``within_beta``, its standard error, and the ``within_games`` and
    ``within_openings`` it used) and one α per opening and net (``within_net_*``: the games
    one net played after the opening from one position, rows with a ``net``, so neither the
    openings' nor the nets' different fair komis can flatten it; NaN for a table without the
    ``net`` column). Groups need at least
    :data:`~saijax.learn.selfplay_stats.WITHIN_MIN_GAMES` games."""
    nan = math.nan
    n = [int(r["games"]) for r in openings]
    komi = np.repeat([float(r["komi"]) for r in openings], n)
    score = np.repeat([float(r["black_score"]) / int(r["games"]) for r in openings], n)
    groups = np.repeat([r["opening"] for r in openings], n)
    if not komi.size:
        return {"within_plies": "", "within_beta": nan, "within_beta_se": nan, "within_games": 0,
                "within_openings": 0, "within_net_beta": nan, "within_net_beta_se": nan,
                "within_net_games": 0, "within_net_groups": 0}  # fmt: skip
    beta, se, games, used = selfplay_stats.komi_curve_fit_within(komi, score, groups)
    row = {"within_plies": int(openings[0]["plies"]), "within_beta": beta, "within_beta_se": se,
           "within_games": games, "within_openings": used}  # fmt: skip
    if any("net" in r for r in openings):
        # One α per (opening, net): the games one net played from one position (those two nets
        # shared, net "", are left out).
        one = np.repeat([str(r.get("net", "")) != "" for r in openings], n)
        cells = np.repeat([f"{r['opening']}@{r.get('net', '')}" for r in openings], n)
        beta, se, games, used = selfplay_stats.komi_curve_fit_within(komi[one], score[one], cells[one])
    else:
        beta, se, games, used = nan, nan, 0, 0
    row.update(within_net_beta=beta, within_net_beta_se=se, within_net_games=games,
               within_net_groups=used)  # fmt: skip
    return row


def _values(rows: list[dict], key: str) -> list[float]:
    out = []
    for r in rows:
        v = r.get(key, "")
        if v not in ("", None) and math.isfinite(float(v)):
            out.append(float(v))
    return out


def _mean(rows: list[dict], key: str) -> float:
    values = _values(rows, key)
    return statistics.fmean(values) if values else math.nan


def _sd(rows: list[dict], key: str) -> float:
    values = _values(rows, key)
    return statistics.stdev(values) if len(values) > 1 else math.nan


def pooled_fit(komis: list[dict], window: float | None = None) -> tuple[float, float, float]:
    """:func:`saijax.learn.selfplay_stats.komi_curve_fit` over pooled ``komi_results`` rows (within ``window`` of
    the fair komi when given): each komi's games enter with their mean score, which gives the same
    likelihood as the games one by one."""
    rows = [r for r in komis if window is None or abs(float(r["komi"]) - FAIR_KOMI) <= window]
    komi = np.repeat([float(r["komi"]) for r in rows], [int(r["games"]) for r in rows])
    score = np.repeat([float(r["black_rate"]) for r in rows], [int(r["games"]) for r in rows])
    return selfplay_stats.komi_curve_fit(komi, score)


def arm_row(
    name: str, curve: list[dict], last: int, board_size: int = 7, komis: list[dict] = (), openings: list[dict] = ()
) -> dict:
    """The arm's summary over its last ``last`` generations, against the targets; with its pooled
    ``komi_results`` rows, the komi curve fitted to all their games and to those within 1.5 points
    of the fair komi (``pooled_*``); with its ``opening_results`` rows, the β within openings
    (:func:`within_fit`)."""
    tail = curve[-last:]
    first, final = curve[0], curve[-1]
    alpha, beta, data_beta = _mean(tail, "alpha_empty"), _mean(tail, "beta_empty"), _mean(tail, "data_beta")
    ratio = data_beta / beta if beta > 0 else math.nan
    betas = [(float(r["beta_empty"]), int(r["generation"])) for r in curve if r.get("beta_empty", "") != ""]
    peak, peak_gen = max(betas) if betas else (math.nan, "")
    rules = go.GoRules(board_size)
    centre = go.to_gtp(rules, (board_size // 2) * (board_size + 1)) if board_size % 2 else ""
    generations = len(curve)
    evaluations = float(final["evaluations_m"])
    pooled_alpha, pooled_beta, pooled_se = pooled_fit(komis)
    _, pooled_local, pooled_local_se = pooled_fit(komis, selfplay_stats.LOCAL_KOMI_WINDOW)
    return {
        "arm": name,
        "generations": generations,
        "first_generation": int(first["generation"]),
        "last_generation": int(final["generation"]),
        "evaluations_m": evaluations,
        "evaluations_m_per_generation": evaluations / generations,
        "minutes": float(final["minutes"]),
        "last": len(tail),
        "alpha_empty": alpha,
        "alpha_empty_sd": _sd(tail, "alpha_empty"),
        "beta_empty": beta,
        "beta_empty_first": float(first["beta_empty"]),
        "beta_empty_peak": peak,
        "beta_empty_peak_generation": peak_gen,
        "data_alpha": _mean(tail, "data_alpha"),
        "data_beta": data_beta,
        "data_over_learned_beta": ratio,
        "data_beta_local": _mean(tail, "data_beta_local"),
        "data_alpha_local": _mean(tail, "data_alpha_local"),
        "pooled_generations": komis[0]["generations"] if komis else "",
        "pooled_games": sum(int(r["games"]) for r in komis),
        "pooled_alpha": pooled_alpha,
        "pooled_beta": pooled_beta,
        "pooled_beta_se": pooled_se,
        "pooled_beta_near_fair": pooled_local,
        "pooled_beta_near_fair_se": pooled_local_se,
        **within_fit(list(openings)),
        "centre_share": _mean(tail, "first_move_centre_share"),
        "first_move_entropy": _mean(tail, "first_move_entropy"),
        "resigned_row_share": _mean(tail, "resigned_row_share"),
        "komi_sd": _mean(tail, "komi_sd"),
        "score_error": _mean(tail, "score_error"),
        "score_error_late": _mean(tail, "score_error_late"),
        "beta_late": _mean(tail, "beta_late"),
        "first_move": final.get("first_move", ""),
        "alpha_ok": abs(alpha - FAIR_KOMI) <= ALPHA_TOLERANCE,
        "beta_ok": beta >= TARGET_BETA,
        "ratio_ok": 1 / RATIO_TOLERANCE <= ratio <= RATIO_TOLERANCE,
        "first_move_ok": bool(centre) and all(r.get("first_move") == centre for r in tail),
    }


def parse_lever_test(spec: str) -> tuple[str, str, int, int | None, str, int, int]:
    """``"[FAMILY:]ARM@FROM[-TO]=PARENT@FIRST-LAST"`` as (family, arm, from, to, parent, first, last):
    the lever arm's generations ``FROM``–``TO`` (from ``FROM`` on, ``to`` None, without ``-TO``)
    against its parent's generations ``FIRST``–``LAST``, in the family of tests ``FAMILY`` (""
    when not given) that Holm's and BH's adjustments run over. ``TO`` pins a declared test to the
    generations it was declared for when the arm plays on (a later round declares its own)."""
    family, _, test = spec.partition("#")[0].rpartition(":")
    arm_part, eq, parent_part = test.partition("=")
    arm, _, own_span = arm_part.partition("@")
    start, dash, end = own_span.partition("-")
    parent, _, span = parent_part.partition("@")
    first, _, last = span.partition("-")
    if not (
        eq and arm and parent and start.isdigit() and (end.isdigit() or not dash) and first.isdigit() and last.isdigit()
    ):
        raise ValueError(f"lever_tests: give each as [FAMILY:]ARM@FROM[-TO]=PARENT@FIRST-LAST, got {spec!r}")
    if int(first) > int(last) or (dash and int(start) > int(end)):
        raise ValueError(f"lever_tests: {spec!r}: a span of generations runs backwards")
    return family, arm, int(start), int(end) if dash else None, parent, int(first), int(last)


LEVER_QUANTITY = "data_beta"


def lever_quantity(spec: str) -> str:
    """The quantity a lever test compares: ``spec``'s ``#QUANTITY`` suffix, one of :data:`CURVE_KEYS`
    (e.g. ``data_beta_kept``: the komi curve of the games whose empty board is trained on), else the
    data's β."""
    _, hash_, quantity = spec.partition("#")
    if not hash_:
        return LEVER_QUANTITY
    if quantity not in CURVE_KEYS:
        raise ValueError(
            f"lever_tests: {spec!r}: #{quantity} is not a curve's quantity (one of {', '.join(CURVE_KEYS)})"
        )
    return quantity


def lever_tests(curves: list[dict], specs: tuple[str, ...], key: str | None = None) -> list[dict]:
    """Each lever arm's per-generation ``key`` (the data's β: what the value is trained toward) over
    its own generations against its parent's plateau, by Welch's two-sample t-test (two-sided;
    each generation's fit one observation), with Holm's and Benjamini–Hochberg's adjustment over
    the ``specs`` as one family. ``detectable`` is the difference the two samples could tell at 80%
    power (:func:`saijax.analysis.stats.detectable_mean_difference`); ``verdict`` is "higher" or
    "lower" where Holm's p < 0.05, else "inconclusive". Specs with a ``FAMILY:`` prefix form their
    own families (each round declares its own), adjusted apart from the others. A spec's
    ``#QUANTITY`` suffix (:func:`lever_quantity`) tests that quantity instead of ``key`` (default the
    data's β). Arms or parents missing from ``curves`` are skipped."""
    by_arm: dict[str, dict[int, dict]] = {}
    for r in curves:
        by_arm.setdefault(r["arm"], {})[int(r["generation"])] = r
    rows = []
    for spec in specs:
        family, arm, start, end, parent, first, last = parse_lever_test(spec)
        quantity = lever_quantity(spec) if "#" in spec or key is None else key
        if arm not in by_arm or parent not in by_arm:
            continue
        own = [r for g, r in sorted(by_arm[arm].items()) if g >= start and (end is None or g <= end)]
        base = [r for g, r in sorted(by_arm[parent].items()) if first <= g <= last]
        x, y = _values(own, quantity), _values(base, quantity)
        mean_x, mean_y = _mean(own, quantity), _mean(base, quantity)
        sd_x, sd_y = _sd(own, quantity), _sd(base, quantity)
        t, p = stats.welch_t_test(x, y)
        rows.append({
            "family": family, "arm": arm,
            "arm_generations": f"{own[0]['generation']}-{own[-1]['generation']}" if own else "",
            "arm_n": len(x), "arm_mean": mean_x, "arm_sd": sd_x,
            "parent": parent, "parent_generations": f"{first}-{last}", "parent_n": len(y),
            "parent_mean": mean_y, "parent_sd": sd_y, "quantity": quantity, "difference": mean_x - mean_y,
            "detectable": stats.detectable_mean_difference(sd_x, len(x), sd_y, len(y)) if min(len(x), len(y)) > 1
            else math.nan,
            "test": "Welch two-sample t, two-sided", "t": t, "p": p,
        })  # fmt: skip
    for family in dict.fromkeys(r["family"] for r in rows):
        members = [r for r in rows if r["family"] == family]
        ps = [r["p"] for r in members]
        for row, holm, bh in zip(members, stats.holm_correction(ps), stats.benjamini_hochberg(ps)):
            row |= {"family_size": len(members), "holm_p": holm, "bh_p": bh}
            significant = math.isfinite(holm) and holm < 0.05
            row["verdict"] = ("higher" if row["difference"] > 0 else "lower") if significant else "inconclusive"
    return rows


STOP_MOVE = 0.1  # issue 43's stopping rule: three consecutive legs that move β_∅ by less than this
STOP_LEGS = 3
LEG_TAIL = 5  # a leg's β_∅ spread: the sd over its last generations


def parse_legs(spec: str) -> tuple[str, list[tuple[int, int]]]:
    """``"ARM@F1-L1,F2-L2,..."`` as (arm, [(F1, L1), ...]): the arm's run cut into consecutive legs."""
    arm, at, spans = spec.partition("@")
    legs = []
    for span in spans.split(",") if at else []:
        first, dash, last = span.partition("-")
        if not (dash and first.isdigit() and last.isdigit()):
            legs = []
            break
        legs.append((int(first), int(last)))
    if not (arm and legs):
        raise ValueError(f"legs: give each as ARM@FIRST-LAST,FIRST-LAST,..., got {spec!r}")
    for n, (first, last) in enumerate(legs):
        if first > last or (n + 1 < len(legs) and legs[n + 1][0] != last + 1):
            raise ValueError(f"legs: {spec!r}: the legs must be consecutive spans of generations, each FIRST <= LAST")
    return arm, legs


def leg_rows(curves: list[dict], specs: tuple[str, ...], key: str = "beta_empty") -> list[dict]:
    """Issue 43's stopping rule over each ``specs``' legs: how far each leg moved ``key`` (β_∅), from
    the net it resumed from (the generation before its first) to its last generation's, beside the
    leg's mean and the sd over its last :data:`LEG_TAIL` generations (what one generation's β_∅ wanders
    by); ``small`` when |move| < :data:`STOP_MOVE`, ``small_run`` the consecutive small legs ending at
    this one, ``stop`` once :data:`STOP_LEGS` of them follow each other. Legs past the arm's curve
    are left out; a leg whose start is missing moves NaN; a leg still being played (``complete``
    false) is shown but neither counts toward the stop nor breaks the count."""
    by_arm: dict[str, dict[int, dict]] = {}
    for r in curves:
        by_arm.setdefault(r["arm"], {})[int(r["generation"])] = r
    rows = []
    for spec in specs:
        arm, legs = parse_legs(spec)
        curve = by_arm.get(arm, {})
        run = 0
        for n, (first, last) in enumerate(legs, 1):
            own = [curve[g] for g in range(first, last + 1) if g in curve]
            if not own:
                break
            start = _values([curve[first - 1]], key) if first - 1 in curve else []
            end = _values([own[-1]], key)
            move = end[0] - start[0] if start and end else math.nan
            small = math.isfinite(move) and abs(move) < STOP_MOVE
            complete = int(own[-1]["generation"]) == last
            if complete:  # a leg still being played neither counts toward the stop nor breaks the count
                run = run + 1 if small else 0
            rows.append({
                "arm": arm, "leg": n, "generations": f"{own[0]['generation']}-{own[-1]['generation']}",
                "complete": complete, "quantity": key,
                "start": start[0] if start else math.nan, "end": end[0] if end else math.nan, "move": move,
                "mean": _mean(own, key), "tail_sd": _sd(own[-LEG_TAIL:], key),
                "data_beta_mean": _mean(own, "data_beta"), "alpha_empty_mean": _mean(own, "alpha_empty"),
                "evaluations_m": float(own[-1]["evaluations_m"]) - float(curve[first - 1]["evaluations_m"])
                if first - 1 in curve else math.nan,
                "small": small, "small_run": run, "stop": run >= STOP_LEGS,
            })  # fmt: skip
    return rows


def arm_rows(
    curves: list[dict], last: int, board_size: int = 7, komis: list[dict] = (), openings: list[dict] = ()
) -> list[dict]:
    """One :func:`arm_row` per arm of ``curves``, in their order, with its rows of ``komis`` and
    ``openings``."""
    names = dict.fromkeys(r["arm"] for r in curves)
    return [
        arm_row(
            n,
            [r for r in curves if r["arm"] == n],
            last,
            board_size,
            [r for r in komis if r["arm"] == n],
            [r for r in openings if r["arm"] == n],
        )  # fmt: skip
        for n in names
    ]


def plot(curves: list[dict], path: str, komis: list[dict] = ()) -> str:
    """β_∅ learned (solid) and fitted from the data (dashed: every complete game; dotted: those
    within 1.5 points of α_∅), α_∅ and the data's α, and the
    centre's share of first moves against generations, one colour per arm; returns the PNG's path."""
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(21, 4.5))
    names = list(dict.fromkeys(r["arm"] for r in curves))
    palette = plt.get_cmap("tab20").colors if len(names) > 10 else [f"C{i}" for i in range(10)]
    for i, name in enumerate(names):
        curve = [r for r in curves if r["arm"] == name]
        x = [int(r["generation"]) for r in curve]
        colour = palette[i % len(palette)]

        def y(key):
            return [float(r[key]) if r.get(key, "") not in ("", None) else math.nan for r in curve]

        axes[0].plot(x, y("beta_empty"), color=colour, lw=1.3, label=f"{name}: net")
        axes[0].plot(x, y("data_beta"), color=colour, lw=0.9, ls="--", label=f"{name}: data")
        axes[0].plot(x, y("data_beta_local"), color=colour, lw=0.9, ls=":", label=f"{name}: data near α_∅")
        axes[1].plot(x, y("alpha_empty"), color=colour, lw=1.3, label=f"{name}: net")
        axes[1].plot(x, y("data_alpha"), color=colour, lw=0.9, ls="--", label=f"{name}: data")
        axes[2].plot(x, y("first_move_centre_share"), color=colour, lw=1.3, label=name)
        pooled = [r for r in komis if r["arm"] == name]
        if pooled:
            k = [float(r["komi"]) for r in pooled]
            sizes = [4 + 60 * int(r["games"]) / max(int(q["games"]) for q in pooled) for r in pooled]
            axes[3].scatter(k, [float(r["black_rate"]) for r in pooled], s=sizes, color=colour, alpha=0.6,
                            label=f"{name}: games ({pooled[0]['generations']})")  # fmt: skip
            axes[3].plot(k, [float(r["net_black_rate"]) for r in pooled], color=colour, lw=1.0, label=f"{name}: net")
    axes[0].axhline(TARGET_BETA, color="grey", ls=":", lw=0.8)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("β_∅ (target ≥ 2)")
    axes[1].axhline(FAIR_KOMI, color="grey", ls=":", lw=0.8)
    axes[1].set_ylim(0, 20)
    axes[1].set_ylabel("α_∅ (7×7's fair komi: 9)")
    axes[2].set_ylim(-0.02, 1.02)
    axes[2].set_ylabel("share of games opening at the centre (D4)")
    axes[3].axvline(FAIR_KOMI, color="grey", ls=":", lw=0.8)
    axes[3].set_xlim(FAIR_KOMI - 12, FAIR_KOMI + 12)
    axes[3].set_ylim(-0.02, 1.02)
    axes[3].set_xlabel("komi")
    axes[3].set_ylabel("Black's score in complete games")
    axes[0].set_title("solid: net; dashed: data; dotted: data near α_∅", fontsize=8)
    axes[1].set_title("solid: net; dashed: data", fontsize=8)
    axes[3].set_title("dots: games pooled by komi (last generations); line: the net", fontsize=8)
    for ax in axes[:3]:
        ax.set_xlabel("generation")
    # One key for all four panels: an arm's colour (per-panel keys would hide the curves).
    handles, labels = axes[2].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    return common.save_figure(fig, path)


def markdown(arms: list[dict]) -> str:
    """The arms' table as the README prints it."""
    header = ["arm", "generations", "evals (M)", "α_∅", "β_∅ (first → peak@gen → last 10)", "data β",
              "data/net", "pooled β: all / near 9 / within openings / and generations", "D4 share", "resigned rows",
              "score err"]  # fmt: skip

    def f(value, spec=".2f"):  # a number, or "–" where the CSV cell is empty or NaN
        return "–" if value in ("", None) or not math.isfinite(float(value)) else format(float(value), spec)

    rows = [
        [
            r["arm"],
            f"{r['first_generation']}–{r['last_generation']}",
            f(r["evaluations_m"], ".1f"),
            f"{f(r['alpha_empty'])} ± {f(r['alpha_empty_sd'])}",
            f"{f(r['beta_empty_first'])} → {f(r['beta_empty_peak'])}@{r['beta_empty_peak_generation']}"
            f" → {f(r['beta_empty'])}",
            f(r["data_beta"]),
            f(r["data_over_learned_beta"]),
            f"{f(r['pooled_beta'])} / {f(r['pooled_beta_near_fair'])} / {f(r.get('within_beta', ''))}"
            f" / {f(r.get('within_net_beta', ''))}",
            f(r["centre_share"]),
            f(r["resigned_row_share"]),
            f(r["score_error"], ".1f"),
        ]
        for r in arms
    ]
    return common.markdown_table(header, rows)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings(common.Settings):
    """The settings (the module docstring)."""

    outdir: str = "experiments/sharp_value/results/main"
    board_size: int = 7
    arms: tuple[str, ...] = setting((), "NAME=WORKDIR[@G] of each run to add (its curves)")
    last: int = setting(10, "the summary's means over the last k generations")
    opening_plies: int = setting(
        4,
        "the within-openings fit groups complete games by their position after this many moves (selfplay.random_moves)",
    )
    lever_tests: tuple[str, ...] = setting(
        (),
        "[FAMILY:]ARM@FROM[-TO]=PARENT@FIRST-LAST[#QUANTITY]: Welch tests of the data's β (or QUANTITY) per "
        "generation, each lever arm's own generations (FROM on, or FROM-TO) against its parent's, Holm and BH "
        "within each FAMILY (lever_tests.csv)",
    )
    legs: tuple[str, ...] = setting(
        (),
        "ARM@FIRST-LAST,FIRST-LAST,...: the end-state run's legs, for issue 43's stopping rule (legs.csv): "
        "how far each moved beta_empty",
    )
    decided: bool = setting(
        True,
        "evaluate each arm's complete games with the nets that played them (decided.csv, decided_bands.csv: "
        "when each game was decided; loads the arm's checkpoints)",
    )
    plot_only: bool = setting(False, "redraw sharp_value.png from outdir's curves.csv")

    def check(self) -> None:
        super().check()
        if self.last < 1:
            raise self.error("last", "needs an int >= 1")
        if self.opening_plies < 0:
            raise self.error("opening_plies", "needs an int >= 0")
        for spec in self.lever_tests:
            try:
                parse_lever_test(spec)
                lever_quantity(spec)
            except ValueError as e:
                raise self.error("lever_tests", str(e)) from None
        for spec in self.legs:
            try:
                parse_legs(spec)
            except ValueError as e:
                raise self.error("legs", str(e)) from None


def run(settings: Settings) -> None:
    """Adds the arms' curves and writes the tables and the PNG (with ``plot_only``: redraws the PNG from
    ``outdir``'s tables). An arm whose workdir is gone keeps the rows ``outdir`` has of it (workdirs do not
    outlive a session); an arm ``outdir`` does not have yet needs its workdir."""
    if settings.plot_only:
        replot(settings)
        return
    os.makedirs(settings.outdir, exist_ok=True)
    curves_path = os.path.join(settings.outdir, "curves.csv")
    new, new_komis, new_openings, new_pairs, new_margins, new_boards, new_decided = [], [], [], [], [], [], []
    shipped = {r["arm"] for r in common.read_csv(curves_path)} if os.path.exists(curves_path) else set()
    parsed = run_curves.parse_arms(settings.arms, may_be_gone=shipped)
    order = [name for name, _, _ in parsed]  # the tables list the arms as given (earlier ones not given last)
    for name, workdir, generation in parsed:
        if not os.path.isdir(workdir):
            # Workdirs do not outlive a session: an arm read before keeps its rows; a new one must have its run.
            print(f"arm {name}: no workdir {workdir}; its rows in {settings.outdir} are kept as they were")
            continue
        new += learning_curve(name, workdir, generation)
        new_komis += komi_results(name, workdir, settings.last, generation)
        new_openings += opening_results(
            name, workdir, settings.last, settings.opening_plies, generation, settings.board_size
        )
        new_pairs += komi_pairs(name, workdir, settings.last, settings.opening_plies, generation, settings.board_size)
        new_margins += margin_rows(name, workdir, settings.last, generation, settings.board_size)
        new_boards += board_rows(name, workdir, settings.last, generation, settings.board_size)
        if settings.decided:
            new_decided += decided_rows(
                name, workdir, settings.last, settings.opening_plies, generation, settings.board_size
            )
    given = {r["arm"] for r in new}
    curves = _merge_rows(curves_path, given, new, order)
    if not curves:
        raise ValueError("no arms: give arms NAME=WORKDIR,... (or run once with them)")
    komis = _merge_rows(os.path.join(settings.outdir, "komi_results.csv"), given, new_komis, order)
    openings = _merge_rows(os.path.join(settings.outdir, "opening_results.csv"), given, new_openings, order)
    _merge_rows(os.path.join(settings.outdir, "komi_pairs.csv"), given, new_pairs, order)
    arms = arm_rows(curves, settings.last, settings.board_size, komis, openings)
    late = {r["arm"]: {k: r[k] for k in ("beta_late", "score_error_late")} for r in arms}  # the net's, beside
    margins = [r | late[r["arm"]] for r in new_margins]
    _merge_rows(os.path.join(settings.outdir, "margins.csv"), given, margins, order)
    boards = _merge_rows(os.path.join(settings.outdir, "board_results.csv"), given, new_boards, order)
    bands = [
        {"arm": arm, "generations": f"{min(gens)}-{max(gens)}", **band}
        for arm in dict.fromkeys(r["arm"] for r in boards)
        for gens in [[int(r["generation"]) for r in boards if r["arm"] == arm]]
        for band in board_bands([r for r in boards if r["arm"] == arm])
    ]
    if bands:
        common.write_csv(os.path.join(settings.outdir, "board_bands.csv"), bands, digits=4)
    if settings.decided:
        decided = _merge_rows(os.path.join(settings.outdir, "decided.csv"), given, new_decided, order)
        pooled = [
            {"arm": arm, **band}
            for arm in dict.fromkeys(r["arm"] for r in decided)
            for band in decided_bands([r for r in decided if r["arm"] == arm])
        ]
        if pooled:
            common.write_csv(os.path.join(settings.outdir, "decided_bands.csv"), pooled, digits=4)
    common.write_csv(os.path.join(settings.outdir, "arms.csv"), arms, digits=4)
    plot(curves, os.path.join(settings.outdir, "sharp_value.png"), komis)
    write_end(settings.outdir)
    write_lever_tests(settings, curves)
    write_legs(settings, curves)
    print(markdown(arms))


def _in_order(rows: list[dict], order: list[str]) -> list[dict]:
    """``rows`` with their arms in ``order`` (each arm's rows as they were; arms not in it last)."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted(rows, key=lambda r: rank.get(r["arm"], len(rank)))


def _merge_rows(path: str, given: set[str], new: list[dict], order: list[str] = ()) -> list[dict]:
    """The table at ``path`` with the rows of the arms in ``given`` replaced by ``new``; an arm of
    ``given`` whose run yields none now (its replay files are gone: they do not outlive a session)
    keeps the rows it had, with a note. The arms in ``order``; written back when not empty."""
    old = common.read_csv(path) if os.path.exists(path) else []
    fresh = {r["arm"] for r in new}
    for arm in sorted({r["arm"] for r in old if r["arm"] in given and r["arm"] not in fresh}):
        print(f"arm {arm}: its run yields no rows for {os.path.basename(path)} now; the ones it had are kept")
    kept = [r for r in old if r["arm"] not in fresh]
    rows = _in_order(kept + new, list(order))
    if rows:
        common.write_csv(path, rows, digits=4)
    return rows


def end_rows(outdir: str) -> list[dict]:
    """The end-of-round checks of each net measured under ``outdir`` (``gtp_fair_komi/``: Black's
    empty-board win rate through GTP at 8.5 and 9.5; ``spread/<net>_k8.5`` and ``_k9.5``:
    experiments/opening_spread/opening_spread.py's self-play games played at each komi; ``gnugo/<net>/``:
    experiments/gnugo_strength/gnugo_strength.py's games against GNU Go, wins and games by colour): Δ, Black's
    rate at 8.5 less that at 9.5 in the games played there, and 4·atanh Δ, the β it gives."""
    gtp_path = os.path.join(outdir, "gtp_fair_komi", "summary.csv")
    gtp = {r["net"]: r for r in common.read_csv(gtp_path)} if os.path.exists(gtp_path) else {}
    spread = os.path.join(outdir, "spread")
    nets = sorted({d.rsplit("_k", 1)[0] for d in os.listdir(spread)}) if os.path.isdir(spread) else []
    gnugo_dir = os.path.join(outdir, "gnugo")
    gnugo = {}
    for net in sorted(os.listdir(gnugo_dir)) if os.path.isdir(gnugo_dir) else []:
        path = os.path.join(gnugo_dir, net, "summary.csv")
        if os.path.exists(path):
            gnugo[net] = {r["colour"]: r for r in common.read_csv(path)}
    rows = []
    for net in dict.fromkeys([*gtp, *nets, *gnugo]):
        row = {"net": net}
        for colour, r in gnugo.get(net, {}).items():
            row |= {f"gnugo_{colour}_komi": float(r["komi"]), f"gnugo_{colour}_wins": int(r["wins"]),
                    f"gnugo_{colour}_games": int(r["games"]), "gnugo_level": int(r["level"]),
                    "gnugo_visits": int(r["visits"])}  # fmt: skip
        if net in gtp:
            row |= {"gtp_black_8.5": float(gtp[net]["black_winrate_8.5"]),
                    "gtp_black_9.5": float(gtp[net]["black_winrate_9.5"])}  # fmt: skip
        at = {}
        for komi in ("8.5", "9.5"):
            path = os.path.join(spread, f"{net}_k{komi}", "summary.csv")
            if os.path.exists(path):
                (r,) = common.read_csv(path)
                at[komi] = r
                row |= {f"games_{komi}": int(r["games"]), f"black_rate_{komi}": float(r[f"black_rate_{komi}"]),
                        f"distinct_openings_{komi}": int(r["distinct_openings"])}  # fmt: skip
        if len(at) == 2:
            delta = row["black_rate_8.5"] - row["black_rate_9.5"]
            row |= {
                "delta": delta,
                "delta_beta": 4 * math.atanh(delta) if abs(delta) < 1 else math.copysign(math.inf, delta),
            }
            row |= {"random_moves": int(at["8.5"]["random_moves"]), "visits": int(at["8.5"]["visits"])}
        rows.append(row)
    return rows


def write_end(outdir: str) -> None:
    """``end.csv`` from :func:`end_rows`, when anything was measured."""
    rows = end_rows(outdir)
    if rows:
        common.write_csv(os.path.join(outdir, "end.csv"), rows, digits=4)


def write_lever_tests(settings: Settings, curves: list[dict]) -> None:
    """``lever_tests.csv`` (:func:`lever_tests`) when the settings declare a family."""
    if settings.lever_tests:
        common.write_csv(
            os.path.join(settings.outdir, "lever_tests.csv"), lever_tests(curves, settings.lever_tests), digits=4
        )


def write_legs(settings: Settings, curves: list[dict]) -> None:
    """``legs.csv`` (:func:`leg_rows`) when the settings name the end-state run's legs."""
    if settings.legs:
        common.write_csv(os.path.join(settings.outdir, "legs.csv"), leg_rows(curves, settings.legs), digits=4)


def replot(settings: Settings) -> None:
    write_end(settings.outdir)
    write_lever_tests(settings, common.read_csv(os.path.join(settings.outdir, "curves.csv")))
    write_legs(settings, common.read_csv(os.path.join(settings.outdir, "curves.csv")))
    komis_path = os.path.join(settings.outdir, "komi_results.csv")
    komis = common.read_csv(komis_path) if os.path.exists(komis_path) else []
    plot(
        common.read_csv(os.path.join(settings.outdir, "curves.csv")),
        os.path.join(settings.outdir, "sharp_value.png"),
        komis,
    )
