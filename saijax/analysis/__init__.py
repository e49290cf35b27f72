"""The analysis layer: results tables, statistics, Elo and the score-vs-winrate theory.

None of it needs a network; it imports only :mod:`saijax.core` (README,
"How the pieces fit").
"""
