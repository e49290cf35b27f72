"""The play layer: players, their options, and every match.

A :class:`~saijax.play.players.Player` is a net with search settings and a
λ/μ agent (:mod:`~saijax.play.options` says how it plays); one loop,
:func:`saijax.play.match_loop.play_games`, plays every match between two
:class:`~saijax.play.opponents.Opponent` (nets in lockstep, or a GTP engine
such as GNU Go); the arena, GNU Go matches, position control and playing
styles build on it. It imports core and analysis only (README, "How the
pieces fit").
"""
