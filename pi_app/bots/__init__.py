"""Computer opponents for the three games: pure, no I/O, every chance drawn from a seeded
``random.Random``.

* :mod:`pi_app.bots.views`: what one seat may know (``seat_view``), and full states drawn to
  agree with it (``determinize``).
* :mod:`pi_app.bots.levels`: ``make_bot(game, level).choose(view, rng, budget)``, for the levels
  below; :mod:`pi_app.bots.base` has the ``Bot`` protocol and the ``Budget``.
* :mod:`pi_app.bots.play`: the referee's side: ``decide`` builds the view from the full state
  (for TacTiki it asks again after a fight's first step) and ``play_game`` plays bots.

Nothing is imported here, so that the command line can list the levels without loading the
engines.
"""

from __future__ import annotations

#: The strengths, weakest first: uniformly random legal moves; the best move by the game's
#: evaluation one move ahead; information-set Monte Carlo tree search.
LEVELS: tuple[str, ...] = ("random", "greedy", "search")
#: The levels offered to people, weakest first, each one documented configuration of the
#: methods above with a fixed playout budget (:data:`pi_app.bots.levels.NAMED`), rated on one
#: Elo-like scale by ``tools/bench/levels.py`` (``docs/levels.md``).
NAMED_LEVELS: tuple[str, ...] = ("beginner", "casual", "club", "strongest")
#: Every level name a bot may be asked for.
ALL_LEVELS: tuple[str, ...] = LEVELS + NAMED_LEVELS
