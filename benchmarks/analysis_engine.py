"""The analysis engine's lockstep batches against analysing one position at a time.

    python benchmarks/analysis_engine.py [--checkpoint zoo:go7-sharp] [--visits 32] [--batch 64] [--moves 40]

One game (``--moves`` moves of seeded random legal play on the net's board,
no passes) is analysed twice by :class:`saijax.gtp.kata_engine.AnalysisEngine`
at the same visits, through its protocol (JSON lines in, replies built):

* batched: one query with every turn of the game, searched ``--batch``
  positions at a time in lockstep;
* sequential: one query per turn, each finished before the next is sent,
  by an engine of batch 1 (what a GTP engine's ``kata-analyze`` does).

Both are compiled before they are timed (a warm-up game position), and both
are timed by the wall clock and by this process's CPU time (the steadier of
the two on a shared machine). It prints positions/s for each and the line
``batched/sequential ratio R`` (wall), the figure docs/performance.md
records (target ≥ 5 on a 2-core CPU).
"""

import argparse
import json
import random
import time

from saijax.cli import player as player_cli
from saijax.core import go
from saijax.gtp.engine import GtpEngine
from saijax.gtp.kata_engine import AnalysisEngine


def random_game(rules: go.GoRules, moves: int, seed: int) -> list[list[str]]:
    """``moves`` seeded random legal moves (no pass), as [colour, vertex] pairs."""
    rng = random.Random(seed)
    state = go.init(rules, 7.5)
    game = []
    for i in range(moves):
        legal = [a for a in range(rules.num_points) if bool(state.legal[a])]
        if not legal:
            break
        action = rng.choice(legal)
        game.append(["B" if i % 2 == 0 else "W", go.to_gtp(rules, action)])
        state = go.play(rules, state, action)
    return game


def query(rules, moves, turns, visits, query_id):
    return json.dumps(
        {
            "id": query_id,
            "moves": moves,
            "komi": 7.5,
            "boardXSize": rules.size,
            "boardYSize": rules.size,
            "analyzeTurns": turns,
            "maxVisits": visits,
        }
    )


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="zoo:go7-sharp")
    parser.add_argument("--visits", type=int, default=32)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    player = player_cli.load_player(args.checkpoint, board_size=None)
    gtp = GtpEngine(player, visits=args.visits)
    rules = gtp.rules
    moves = random_game(rules, args.moves, args.seed)
    turns = list(range(len(moves) + 1))
    replies = []
    batched = AnalysisEngine(gtp, emit=replies.append, batch=args.batch, min_batch=args.batch)
    sequential = AnalysisEngine(gtp, emit=replies.append, batch=1)

    # Compile both (and the replay's jitted step) before timing.
    for engine in (batched, sequential):
        engine.handle_line(query(rules, moves, [len(moves)], args.visits, "warm"))
        engine.run_pending()

    def run_batched():
        batched.handle_line(query(rules, moves, turns, args.visits, "game"))
        batched.run_pending()

    def run_sequential():
        for t in turns:
            sequential.handle_line(query(rules, moves[:t], [t], args.visits, f"turn{t}"))
            sequential.run_pending()

    replies.clear()
    wall_b, cpu_b = timed(run_batched)
    wall_s, cpu_s = timed(run_sequential)
    finals = [r for r in replies if "turnNumber" in r and not r["isDuringSearch"]]
    assert len(finals) == 2 * len(turns), f"expected {2 * len(turns)} replies, got {len(finals)}"
    n = len(turns)
    print(f"{args.checkpoint}: {n} positions of one {rules.size}x{rules.size} game, {args.visits} visits each")
    print(f"batched (batch {args.batch}): {n / wall_b:.1f} positions/s wall ({wall_b:.2f} s), CPU {cpu_b:.2f} s")
    print(f"sequential (batch 1):   {n / wall_s:.1f} positions/s wall ({wall_s:.2f} s), CPU {cpu_s:.2f} s")
    print(f"CPU-time ratio {cpu_s / cpu_b:.2f}")
    print(f"batched/sequential ratio {wall_s / wall_b:.2f}")


if __name__ == "__main__":
    main()
