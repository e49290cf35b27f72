"""experiments/suboptimal_moves/suboptimal_moves.py: which moves of a won game are the winner's to count."""

import pytest

from experiments.suboptimal_moves import suboptimal_moves


@pytest.mark.parametrize(
    "moves_first, opening, expected",
    [
        (True, 0, [0, 2, 4, 6, 8]),
        (False, 0, [1, 3, 5, 7, 9]),
        # The arena's random opening moves (plies < opening) are nobody's choice.
        (True, 2, [2, 4, 6, 8]),
        (False, 2, [3, 5, 7, 9]),
        (True, 1, [2, 4, 6, 8]),
        (False, 1, [1, 3, 5, 7, 9]),
        (True, 3, [4, 6, 8]),
        (False, 3, [3, 5, 7, 9]),
        (True, 12, []),
    ],
)
def test_winner_plies_skip_the_random_opening(moves_first, opening, expected):
    assert list(suboptimal_moves.winner_plies(10, moves_first, opening)) == expected
