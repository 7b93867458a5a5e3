"""Questions and guidance: what the follower asks the players and how it shows them the way back.

Part of :class:`pi_app.board.follower.Follower` (a mixin over its state, :mod:`pi_app.board.core`);
the waits it uses are ``docs/waits.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pi_app.board.core import Asking, FollowerCore
from pi_app.board.inference import Option, Position, Verdict, between, guidance
from pi_app.board.outcomes import (
    Acceptance,
    Guidance,
    GuidanceKind,
    Outcome,
    Prompt,
    PromptCleared,
    PromptKind,
)
from pi_app.board.pictures import (
    TAKEBACK_DEPTH,
    all_on_board,
    only_silent,
    takeback_plies,
)
from pi_app.board.tracker import Observation, ViewKey
from pi_app.games.base import M, S


class Questions(FollowerCore[S, M]):
    """The questions (ambiguous, takeback, decision), the buttons and cards that answer them,
    and guidance shown."""

    def _decisions(self, now: float) -> list[Outcome[S]]:
        """Decisions the sensors cannot see. When every legal move is one (Manami's
        ``resolve``, a forced ``pass``) the follower asks at once, or takes the only one;
        when pieces could move too (TacTiki's waiting turn, ``shaman stay``), the player
        says so with the OK button (:meth:`press`)."""
        silent = only_silent(self.position)
        if not silent:
            return []
        if len(silent) == 1:
            return self._accept(silent[0], now, how=Acceptance.FORCED)
        self._asking = Asking(PromptKind.DECISION, self.position.here, tuple(silent))
        return [self._prompt(now)]

    def _silent(self) -> list[Option]:
        """Legal moves that leave the board as it is."""
        return self.position.by_placement.get(self.position.here, [])

    def press(self, button: str, now: float) -> list[Outcome[S]]:
        """A player button: ``ok`` confirms, ``menu`` cycles the choices, ``back`` cancels a
        question or, with none open, takes the last move back."""
        asking = self._asking
        if asking is None:
            if button == "ok" and self._silent():
                self._asking = Asking(
                    PromptKind.DECISION, self.position.here, tuple(self._silent())
                )
                return [self._prompt(now)]
            if button == "back" and self.history:
                plies = takeback_plies(self.game, self.history)
                return self._take_back(plies, now, self.tracker.observation(now).key(self.cells))
            return []
        if button == "menu":
            count = len(asking.options) if asking.options else 1
            self._asking = replace(asking, selected=(asking.selected + 1) % max(count, 1))
            return [self._prompt(now)]
        if button == "back":
            if asking.kind is PromptKind.DECISION:
                return []  # the rules demand an answer
            self._asking = None
            if asking.kind is PromptKind.TAKEBACK:
                # No takeback: the players went on. The moves held since the last taken
                # stay held, and the picture is judged again at once as one the position
                # does not explain: moves made from a held one (two Up 1s that swapped the
                # last two back) follow; otherwise it is a mismatch to put right.
                self._declined = asking.key
                return [PromptCleared(now), *self._evaluate(now)]
            self._held, self._candidate = (), None  # "none of these": not asked again
            return [PromptCleared(now)]
        if button == "ok":
            self._asking = None
            if asking.kind is PromptKind.TAKEBACK:
                return [PromptCleared(now), *self._take_back(asking.plies, now)]
            return [
                PromptCleared(now),
                *self._accept(asking.options[asking.selected], now, how=Acceptance.ASKED),
            ]
        return []

    def choose(self, card: str, now: float) -> list[Outcome[S]]:
        """Answer an ambiguity with a card (its first word, e.g. ``up1``), as a card tap does.
        A card two of the options share (Up 1 of this tiki, or the last move and then the next
        player's, each an Up 1) answers nothing: the buttons say which."""
        asking = self._asking
        if asking is None or asking.kind is not PromptKind.AMBIGUOUS:
            return []
        matching = [o for o in asking.options if o.text.split()[0] == card]
        if len(matching) != 1:
            return []
        self._asking = None
        return [PromptCleared(now), *self._accept(matching[0], now, how=Acceptance.ASKED)]

    def _prompt(self, now: float) -> Prompt:
        asking = self._asking
        assert asking is not None
        if asking.kind is PromptKind.TAKEBACK:
            return Prompt(
                now, PromptKind.TAKEBACK, (f"take back {asking.plies} move(s)",), 0, asking.plies
            )
        return Prompt(now, asking.kind, tuple(o.text for o in asking.options), asking.selected)

    def _pad(self, observation: Observation, now: float, out: list[Outcome[S]]) -> None:
        """A card tapped on a pad answers an open ambiguity (``action:up1`` means Up 1)."""
        if self._asking is None or self._asking.kind is not PromptKind.AMBIGUOUS:
            return
        for cell in self.geometry.names("pad"):
            for piece in observation.pieces.get(cell, ()):
                if piece.startswith("action:"):
                    out += self.choose(piece.removeprefix("action:"), now)
                    return

    def _asked_on(self, observation: Observation, quiet: float) -> bool:
        """Does the question about the last move stand though the board changed? When the
        picture is a move (or a move under way) from the position after one of its options:
        the next player went on before the question came (a TacTiki fight onto a stack is
        read up to a cycle after it rests, and the question waits ``settle`` after that).
        Cleared, the question left a picture nothing explains (case 14, ``docs/waits.md``); it
        stays until the players
        answer it, and the next move is judged from their answer. So it does when the players
        tidy up after one of its options before they answer (case 15, ``docs/waits.md``)."""
        asking = self._asking
        if (
            asking is None
            or asking.kind is not PromptKind.AMBIGUOUS
            or self.position.classify(observation).verdict is not Verdict.UNKNOWN
        ):
            return False  # (what the position explains is judged as before)
        for index, option in enumerate(asking.options):
            if option.has_follow_up and between(observation, option.final, option.placement):
                return True  # (its follow-up under way: a fight's losers taken off)
            after = asking.after.get(index)
            if after is None:
                earlier = [self.state, *(s for s, _ in reversed(self.history))]
                after = asking.after[index] = Position.build(
                    self.game, option.state, self.cells, earlier[:TAKEBACK_DEPTH]
                )
            verdict = after.classify(observation).verdict
            if verdict in (
                Verdict.MOVE,
                Verdict.SETTLING,
                Verdict.AMBIGUOUS,
                Verdict.IN_PROGRESS,
                Verdict.UNCHANGED,
            ):
                return True  # (unchanged: its follow-up done)
            if (
                verdict is Verdict.UNKNOWN
                and quiet < self.waits.grace
                and not all_on_board(after.here, observation, self._presence_pieces)
            ):
                return True  # a piece in a hand for a moment (case 16, docs/waits.md)
        return False

    def _guide(
        self,
        kind: GuidanceKind,
        observation: Observation,
        key: ViewKey,
        now: float,
        target: Mapping[str, tuple[str, ...]] | None = None,
    ) -> list[Outcome[S]]:
        if self._shown == (kind, key):
            return []
        self._shown = (kind, key)
        if target is None:
            target = self.game.expected_view(self.state)
        return [
            Guidance(now, kind, tuple(guidance(observation, target, self.geometry, self.cells)))
        ]
