"""Whole SGF games analysed in lockstep batches: a CSV and an annotated SGF per game.

``python -m saijax.analysis_engine --sgf=DIR_OR_FILES --out=DIR`` queues
every position of every game (turns 0..L of a game of L moves) as one query
per game to an :class:`saijax.gtp.kata_engine.AnalysisEngine`, so the
positions of all games are searched together, and shows a progress bar over
the positions. For each game ``<name>.sgf`` it writes:

* ``<name>.csv``, one row per move: ``move`` (1-based), ``colour``,
  ``played``, ``best`` (the search's top move before it), ``winrate_before``
  and ``winrate_after`` (Black's win probability, λ/μ agent value, before and
  after the move), ``lead_before`` and ``lead_after`` (Black's score lead),
  ``point_loss`` (how much the move lowered the mover's lead, lead before
  minus lead after in the mover's view: positive is a loss), ``winrate_loss``
  (the same for the mover's win rate), and the sigmoid of the position before
  the move: ``alpha`` (Black's view), ``beta`` and ``fair_komi``;
* ``<name>.sgf``, the game with the same numbers as each move's comment.

A game that cannot be read or replayed is reported on stderr, with its file
and the reason, and skipped; the others go on.
"""

from __future__ import annotations

import csv
import dataclasses
import glob
import json
import os
import sys
from collections.abc import Sequence

from saijax.core import go, sgf
from saijax.gtp.kata_engine import AnalysisEngine

__all__ = ["CSV_COLUMNS", "sgf_paths", "analyse_games"]

CSV_COLUMNS = (
    "move",
    "colour",
    "played",
    "best",
    "winrate_before",
    "winrate_after",
    "lead_before",
    "lead_after",
    "point_loss",
    "winrate_loss",
    "alpha",
    "beta",
    "fair_komi",
)


def sgf_paths(sources: Sequence[str]) -> list[str]:
    """The SGF files of ``sources``: files as given, directories' ``*.sgf`` (sorted, recursively).

    Raises:
      ValueError: a source that does not exist, or no SGF file at all.
    """
    paths = []
    for source in sources:
        if os.path.isdir(source):
            paths += sorted(glob.glob(os.path.join(source, "**", "*.sgf"), recursive=True))
        elif os.path.isfile(source):
            paths.append(source)
        else:
            raise ValueError(f"--sgf: {source} is neither a file nor a directory")
    if not paths:
        raise ValueError(f"--sgf: no .sgf file in {', '.join(sources)}")
    return paths


def _query(record: sgf.GameRecord, rules: go.GoRules, game_id: str, max_visits: int | None) -> dict:
    colour = {1: "B", -1: "W"}
    query = {
        "id": game_id,
        "moves": [[colour[c], go.to_gtp(rules, a)] for c, a in zip(record.colours, record.moves)],
        "initialStones": [["B", go.to_gtp(rules, p)] for p in record.setup_black]
        + [["W", go.to_gtp(rules, p)] for p in record.setup_white],
        "initialPlayer": colour[record.first_player],
        "komi": record.komi,
        "boardXSize": record.size,
        "boardYSize": record.size,
        "analyzeTurns": list(range(len(record.moves) + 1)),
        "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"},
    }
    if max_visits is not None:
        query["maxVisits"] = max_visits
    return query


def _rows(record: sgf.GameRecord, rules: go.GoRules, replies: dict[int, dict]) -> list[dict]:
    rows = []
    for i, (c, action) in enumerate(zip(record.colours, record.moves)):
        before, after = replies[i], replies[i + 1]
        root_b, root_a = before["rootInfo"], after["rootInfo"]
        lead_b, lead_a = root_b["scoreLead"], root_a["scoreLead"]
        win_b, win_a = root_b["winrate"], root_a["winrate"]
        rows.append(
            {
                "move": i + 1,
                "colour": "B" if c == 1 else "W",
                "played": go.to_gtp(rules, action),
                "best": before["moveInfos"][0]["move"] if before["moveInfos"] else "",
                "winrate_before": win_b,
                "winrate_after": win_a,
                "lead_before": lead_b,
                "lead_after": lead_a,
                "point_loss": c * (lead_b - lead_a),
                "winrate_loss": c * (win_b - win_a),
                "alpha": root_b["saiAlpha"],
                "beta": root_b["saiBeta"],
                "fair_komi": root_b["saiFairKomi"],
            }
        )
    return rows


def _comment(row: dict) -> str:
    return (
        f"saijax: {row['colour']} {row['played']} (best {row['best']}); "
        f"Black winrate {row['winrate_before']:.3f} -> {row['winrate_after']:.3f}; "
        f"Black lead {row['lead_before']:+.1f} -> {row['lead_after']:+.1f}; "
        f"point loss {row['point_loss']:+.1f}; "
        f"alpha {row['alpha']:+.2f} beta {row['beta']:.3f} fair komi {row['fair_komi']:+.1f}"
    )


def analyse_games(
    engine: AnalysisEngine,
    paths: Sequence[str],
    out_dir: str,
    *,
    max_visits: int | None = None,
    progress: bool = True,
) -> list[str]:
    """Analyses every position of every game and writes the CSVs and annotated SGFs.

    Args:
      engine: the analysis engine; its ``emit`` is replaced while this runs.
      paths: the SGF files.
      out_dir: where ``<name>.csv`` and ``<name>.sgf`` go (created if needed).
      max_visits: visits per position (default the engine's).
      progress: show a progress bar over the positions on stderr.

    Returns:
      The names of the games written (their files' base names).
    """
    os.makedirs(out_dir, exist_ok=True)
    rules = engine.rules
    replies: dict[str, dict[int, dict]] = {}
    problems: dict[str, str] = {}

    def collect(reply: dict) -> None:
        game = reply.get("id")
        if "error" in reply:
            problems[game] = reply["error"]
        elif "warning" in reply:
            print(f"saijax.analysis_engine: {game}: warning: {reply['warning']}", file=sys.stderr)
        elif not reply.get("isDuringSearch") and "turnNumber" in reply:
            replies.setdefault(game, {})[reply["turnNumber"]] = reply

    saved, engine.emit = engine.emit, collect
    games: dict[str, tuple[str, sgf.GameRecord]] = {}
    names: set[str] = set()
    try:
        total = 0
        for path in paths:
            name = os.path.splitext(os.path.basename(path))[0]
            while name in names:
                name += "_"
            names.add(name)
            try:
                record = sgf.read_sgf(path, check=False)
            except (ValueError, OSError) as e:
                print(f"saijax.analysis_engine: {path}: skipped: {e}", file=sys.stderr)
                continue
            if record.size != rules.size:
                print(
                    f"saijax.analysis_engine: {path}: skipped: size {record.size}, the net's is {rules.size}",
                    file=sys.stderr,
                )
                continue
            engine.handle_line(json.dumps(_query(record, rules, name, max_visits)))
            if name in problems:
                print(f"saijax.analysis_engine: {path}: skipped: {problems[name]}", file=sys.stderr)
                continue
            games[name] = (path, record)
            total += len(record.moves) + 1
        bar = _progress_bar(total) if progress else None
        done = 0
        while engine.step():
            finished = sum(len(r) for g, r in replies.items() if g in games)
            if bar is not None and finished > done:
                bar.update(finished - done)
            done = finished
        if bar is not None:
            bar.close()
    finally:
        engine.emit = saved
    written = []
    for name, (path, record) in games.items():
        rows = _rows(record, rules, replies[name])
        with open(os.path.join(out_dir, f"{name}.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
        root = replies[name][0]["rootInfo"]
        annotated = dataclasses.replace(
            record,
            comments=tuple(_comment(row) for row in rows),
            root_comment=(
                (record.root_comment + "\n" if record.root_comment else "")
                + f"saijax analysis of {os.path.basename(path)}: the start position's sigmoid "
                f"alpha {root['saiAlpha']:+.2f} beta {root['saiBeta']:.3f}, fair komi {root['saiFairKomi']:+.1f}"
            ),
        )
        sgf.write_sgf(annotated, os.path.join(out_dir, f"{name}.sgf"))
        written.append(name)
    return written


def _progress_bar(total: int):
    from tqdm import tqdm

    return tqdm(total=total, desc="positions", unit="pos", file=sys.stderr, dynamic_ncols=True)
