"""The tournament on the referee dashboard: players, rounds, boards, results, standings, exports.

The rules of a tournament live in :mod:`pi_app.tournament` (pure values); this module keeps the
event's current value on the dashboard's event loop, saves it after every step
(:class:`~pi_app.tournament.store.TournamentStore`, next to the ledger) and serves it:

==================================  ============================================================
``GET /tournament``                 players, rounds with pairings and boards, results, standings
``GET /tournament/live?v=N``        the page's changing part (204 while it is still version N)
``GET /api/tournament``             the tournament and its standings as JSON
``GET /tournament/standings.csv``   the standings (confirmed results only)
``GET /tournament/results.trf``     the results as FIDE's TRF16 (two-player games)
``GET /tournament/pairings.csv``    every round's tables, boards and results
``GET /tournament/records.json``    referee: every tournament game's record, from the ledger
``GET /tournament/print?round=N``   pairings, table cards and standings for paper (no script)
``POST /api/tournament/new``        ``{"game", "event"?, "seed"?, "rounds"?}``: start the event's
                                    tournament (``rounds``: how many are planned)
``POST /api/tournament/rounds``     ``{"rounds"}``: plan the number of rounds
``POST /api/tournament/clock``      ``{"minutes", "round"?}``: start the round clock (null: stop)
``POST /api/tournament/players``    ``{"names"}``: one a line, ``Name, 1850`` for a rating
``POST /api/tournament/withdraw``   ``{"player", "withdrawn"?}`` (a player id, ``p3``)
``POST /api/tournament/halfbye``    ``{"player", "wanted"?}``: a half-point bye next round
``POST /api/tournament/pair``       pair (or seat, for Topple) the next round
``POST /api/tournament/boards``     ``{"tables": {"1": "table-1", ...}, "round"?}``
``POST /api/tournament/confirm``    ``{"table", "round"?, "scores"?, "winners"?, "late"?,
                                    "forfeit"?}``: confirm the reported result, or rule one
                                    (seats 0-based, seat order; a forfeit's winner is the seat
                                    whose player came)
``POST /api/tournament/unconfirm``  ``{"table", "round"?, "late"?}``: take a confirmation back
==================================  ============================================================

Scores and winners that contradict each other under the game's rules are refused (409, the
reason). A ruling on a round that later rounds were paired after answers 409 with ``"late"``:
the later ``[round, table]`` pairs it touches; the page shows the warning and asks, and sends
it again with ``"late": true``. Every confirmation and every one taken back is in the store's
audit trail, shown on the page under "Rulings".

Every POST needs the referee login and the page's CSRF token, exactly as the dashboard's own
(:class:`Access` is the dashboard's helpers, handed over when the routes are made). A step the
tournament refuses (:class:`~pi_app.tournament.model.TournamentError`) answers 409 with the
reason and changes nothing; a body that is not the JSON the step takes answers 400.

Results come from the stations: the desk calls :meth:`TournamentDesk.on_result` for every
``result`` event it stores, and the result goes to the table that the board serves in the current
round, waiting for a referee (:meth:`TournamentDesk.on_ruling`: a ruling on the board's own page
confirms the table too). A station's game whose players are not the table's (a game left
over from the last round, a friendly game) is not taken: the page lists it as a notice, and the
referee can still rule the table's result by hand. Confirming a table also rules the station's
game in the ledger, so the board's own page and the records say the same.
"""

from __future__ import annotations

import asyncio
import collections
import json
import sqlite3
import time
import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from pi_app.errors import UnreadableInput
from pi_app.i18n import choose, translator
from pi_app.json_types import JSON
from pi_app.net import pages
from pi_app.net.desk import Desk
from pi_app.net.schema import LocksPayload, PairingPayload
from pi_app.net.tournament_pages import (
    PRINT_CSS,
    TOURNAMENT_HTML,
    TOURNAMENT_JS,
    live_html,
    page_words,
    print_html,
)
from pi_app.tournament import director, export
from pi_app.tournament.director import LateCorrection
from pi_app.tournament.model import Tournament, TournamentError
from pi_app.tournament.standings import standings
from pi_app.tournament.store import TournamentStore

NOTICES = 30
"""How many station reports that could not be taken the page lists (newest first)."""


@dataclass(frozen=True)
class Access:
    """The dashboard's login helpers, for pages added to it: who is logged in as a referee,
    the page's CSRF token, and whether a POST carries it."""

    referee: Callable[[Request], str | None]
    csrf_of: Callable[[Request], str]
    csrf_ok: Callable[[Request, Mapping[str, str] | None], Awaitable[bool]]


ExtraRoutes = Callable[[Access], list[Route]]
Endpoint = Callable[[Request], Awaitable[Response]]


class BadRequest(UnreadableInput, ValueError):
    """The body is not what the step takes (400)."""


def _tally(result: Any) -> tuple[list[Any], list[Any]] | None:
    """The winners and scores of a station's result (or of a referee's ruling of one) as the
    tournament counts them, None when either is missing. The schema lets scores be numbers: a
    whole 3.0 is the 3 the tournament counts. The director checks the rest."""
    if not isinstance(result, dict):
        return None
    winners, scores = result.get("winners"), result.get("scores")
    if not isinstance(winners, list) or not isinstance(scores, list):
        return None
    return winners, [int(s) if isinstance(s, float) and s.is_integer() else s for s in scores]


def _fold(name: str) -> str:
    """A name as compared for near misses: accents, case and spacing do not count."""
    plain = unicodedata.normalize("NFKD", name)
    return " ".join("".join(c for c in plain if not unicodedata.combining(c)).casefold().split())


def _distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace) from ``a`` to ``b`` (Levenshtein)."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, start=1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def near_names(typed: str, seated: str) -> bool:
    """``typed`` at the station is ``seated`` with a slip: the same but for accents, case or
    spacing, or one edit away (two for names of 8 letters or more). A near miss is taken for
    the referee to check, never silently dropped and never silently counted."""
    a, b = _fold(typed), _fold(seated)
    if a == b:
        return True
    return _distance(a, b) <= (2 if min(len(a), len(b)) >= 8 else 1) < min(len(a), len(b))


class TournamentDesk:
    """The event's tournament on the dashboard's loop: one value, replaced and saved per step.

    Everything runs on the loop (routes and the desk's result listener), so there is one owner
    and no lock. A step that fails (refused, or the store cannot save) leaves the value as it
    was: the page never shows what the disk does not hold.
    """

    def __init__(self, desk: Desk, path: str | Path) -> None:
        self.desk = desk
        self.store = TournamentStore(path)
        self.tournament: Tournament | None = self.store.load()
        self.version = 1
        self.notices: collections.deque[str] = collections.deque(maxlen=NOTICES)
        self.locks = LocksPayload()
        """The referee's locks as the broker holds them (``tiki/EVENT/locks``)."""
        self.send_locks: Callable[[LocksPayload], bool] | None = None
        """Publishes new locks to every station (the subscriber's; None: no broker here)."""
        self.send_pairing: Callable[[str, PairingPayload | None], None] | None = None
        """Sends a board its pairing, retained (None clears it); must not block the loop (the
        dashboard hands the publishing to a thread). None: no broker here."""
        self.sent: dict[str, tuple[int, int, str, tuple[str, ...], float | None]] = {}
        """What each board was last sent: round, table, game, names (nothing: cleared)."""
        self.placed: dict[str, tuple[int, int]] = self._placed()
        desk.placement = self.placed.get

    def _placed(self) -> dict[str, tuple[int, int]]:
        """Each board's round and table in the current round (finished tables too: the
        overview says which table a board served until the next round is paired)."""
        t = self.tournament
        if t is None or t.current is None:
            return {}
        rnd = t.current
        return {p.board: (rnd.number, p.table) for p in rnd.pairings if p.board and not p.bye}

    def on_locks(self, locks: LocksPayload) -> None:
        """The broker's retained locks (on connecting, and after every change)."""
        if locks != self.locks:
            self.locks = locks
            self.version += 1

    def close(self) -> None:
        self.store.close()

    def apply(self, step: Callable[[Tournament], Tournament], actor: str | None = None
              ) -> Tournament:
        """Run one director step on the current tournament and save the result (``actor``:
        the referee who took the step, for the audit trail)."""
        if self.tournament is None:
            raise TournamentError("no tournament yet: start one first")
        return self._keep(step(self.tournament), actor)

    def _keep(self, tournament: Tournament, actor: str | None = None) -> Tournament:
        try:
            self.store.save(tournament, actor=actor)
        except (OSError, sqlite3.Error) as exc:
            raise TournamentError(f"the tournament could not be saved ({exc}); nothing "
                                  "changed: try again") from exc
        self.tournament = tournament
        self.version += 1
        placed = self._placed()
        if placed != self.placed:  # the overview's round and table columns
            moved = set(placed.items()) ^ set(self.placed.items())
            self.placed.clear()
            self.placed.update(placed)
            self.desk.touch(board for board, _ in moved)
        self.push_pairings()
        return tournament

    def pairings_due(self) -> dict[str, tuple[int, int, str, tuple[str, ...], float | None]]:
        """Each board that serves a table of the current round still waiting for its game:
        round, table, game, the names in seat order and when the round clock ends. A table
        with a result is not offered any more (a station restarting must not offer the
        finished game again)."""
        tournament = self.tournament
        if tournament is None or tournament.current is None:
            return {}
        rnd = tournament.current
        return {p.board: (rnd.number, p.table, tournament.game.value,
                          tuple(tournament.player(pid).name for pid in p.seats), rnd.ends)
                for p in rnd.pairings if p.board and not p.bye and p.result is None}

    def push_pairings(self, everything: bool = False) -> None:
        """Send each board what changed in its pairing since last sent (``everything``: all,
        as after connecting): the new round's tables, boards moved, results that came in."""
        send = self.send_pairing
        if send is None:
            return
        due = self.pairings_due()
        for board in sorted(set(due) | set(self.sent)):
            wanted = due.get(board)
            if not everything and wanted == self.sent.get(board):
                continue
            if wanted is None:
                self.sent.pop(board, None)
                send(board, None)
                continue
            self.sent[board] = wanted
            number, table, game, names, ends = wanted
            now = time.time()
            send(board, PairingPayload(number, table, game, list(names), now,
                                       None if ends is None else max(0.0, ends - now)))

    def start(self, event: str, game: str, seed: int, rounds: int | None = None) -> Tournament:
        if self.tournament is not None:
            raise TournamentError(f"{self.tournament.event} is already running here: one "
                                  "tournament per dashboard")
        return self._keep(director.new_tournament(event, game, seed=seed, rounds=rounds))

    def notice(self, text: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        self.notices.appendleft(f"{stamp} {text}")
        self.version += 1

    # -- results from the stations ---------------------------------------------------------------
    def on_result(self, board: str, game_id: int, data: JSON) -> None:
        """The desk stored a station's ``result`` event: hand it to the board's table.

        Never raises (the desk must go on storing): what cannot be taken becomes a notice."""
        tournament = self.tournament
        if tournament is None or tournament.current is None:
            return
        pairing = next((p for p in tournament.current.pairings if p.board == board), None)
        if pairing is None:
            return  # a board that serves no table this round: not the tournament's game
        where = f"board {board}, game {game_id}"
        seated = [tournament.player(pid).name for pid in pairing.seats]
        playing = self._players(board, game_id)
        slightly = False
        if playing is not None and playing != seated:
            if len(playing) == len(seated) and all(map(near_names, playing, seated)):
                slightly = True   # a typing slip: taken, and the referee is told to look
            else:
                swapped = sorted(map(_fold, playing)) == sorted(map(_fold, seated))
                why = ("in another seat order, so the scores would go to the wrong players"
                       if swapped else f"not table {pairing.table}'s ({', '.join(seated)})")
                self.notice(f"{where}: its players ({', '.join(playing)}) are {why}: result not "
                            "taken; rule the table by hand if it was its game")
                return
        tally = _tally(data)
        if tally is None:
            self.notice(f"{where} ended without winners or scores: rule table "
                        f"{pairing.table} by hand")
            return
        winners, scores = tally
        try:
            self.apply(lambda t: director.report_result(t, board, game_id, scores, winners))
        except TournamentError as exc:
            self.notice(f"{where}: {exc}")
            return
        if slightly and playing is not None:
            self.notice(f"{where}: its players ({', '.join(playing)}) differ slightly from table "
                        f"{pairing.table}'s ({', '.join(seated)}): result taken for the "
                        "referee to check before confirming")

    def on_ruling(self, board: str, game_id: int, ruling: JSON) -> None:
        """A referee ruled a station's game on its board page: the table that holds the game's
        result follows (a ruling this desk made itself is already there: nothing to do)."""
        tournament = self.tournament
        if tournament is None:
            return
        held = next(((rnd, p) for rnd, p in tournament.played() if p.result is not None
                     and (p.result.board, p.result.game_id) == (board, game_id)), None)
        if held is None:
            return  # not a tournament game
        rnd, pairing = held
        tally = _tally(ruling.get("result"))
        if tally is None:
            self.notice(f"board {board}, game {game_id}: the ruling has no winners or scores: "
                        f"rule table {pairing.table} of round {rnd.number} here")
            return
        winners, scores = tally
        now = pairing.result
        if now is not None and now.confirmed and (now.scores, now.winners) == (
                tuple(scores), tuple(sorted(winners))):
            return
        referee = str(ruling.get("referee") or "?")
        try:
            self.apply(lambda t: director.confirm_result(
                t, pairing.table, referee, scores=scores, winners=winners,
                round_number=rnd.number), referee)
        except LateCorrection as exc:
            self.notice(f"board {board}, game {game_id}: its ruling was not taken: {exc} "
                        "(rule the table on this page)")
        except TournamentError as exc:
            self.notice(f"board {board}, game {game_id}: its ruling was not taken: {exc}")

    def _players(self, board: str, game_id: int) -> list[str] | None:
        """The names the station's game was started with, when the desk knows them."""
        view = self.desk.boards.get(board)
        if view is None:
            return None
        known = view.players.get(game_id)
        state = view.state or {}
        if known is None and state.get("game_id") == game_id:
            known = [str(p) for p in state.get("players") or []] or None
        return known

    # -- views -----------------------------------------------------------------------------------
    def as_json(self) -> JSON:
        tournament = self.tournament
        if tournament is None:
            return {"version": self.version, "tournament": None, "standings": [],
                    "notices": list(self.notices)}
        return {"version": self.version, "tournament": asdict(tournament),
                "standings": [asdict(s) for s in standings(tournament)],
                "notices": list(self.notices)}

    def records(self) -> list[JSON]:
        """Every tournament game's record from the ledger, in round and table order."""
        tournament = self.tournament
        if tournament is None:
            return []
        self.desk.ledger.commit()
        return [{"round": ref.round, "table": ref.table, "board": ref.board,
                 "game_id": ref.game_id,
                 "seats": [tournament.player(pid).name for pid in ref.seats],
                 "record": self.desk.ledger.record(ref.board, ref.game_id, self.desk.event)}
                for ref in export.game_refs(tournament)]

    def confirm(self, referee: str, table: int, round_number: int | None,
                scores: list[int] | None, winners: list[int] | None,
                late_ok: bool = False, forfeit: bool = False) -> Tournament:
        """Confirm or rule a table; the station's game gets the same ruling in the ledger."""
        tournament = self.apply(lambda t: director.confirm_result(
            t, table, referee, scores=scores, winners=winners, round_number=round_number,
            late_ok=late_ok, forfeit=forfeit), referee)
        rnd = tournament.rounds[-1] if round_number is None else next(
            r for r in tournament.rounds if r.number == round_number)
        result = rnd.table(table).result
        if result is not None and result.board is not None and result.game_id is not None:
            try:
                self.desk.confirm(result.board, result.game_id, referee,
                                  winners=list(result.winners), scores=list(result.scores),
                                  note=f"tournament round {rnd.number}, table {table}")
            except ValueError as exc:
                self.notice(f"board {result.board}: the ledger did not take the ruling: {exc}")
        return tournament


    def unconfirm(self, referee: str, table: int, round_number: int | None,
                  late_ok: bool = False) -> Tournament:
        """Take a table's ruling back; the station's game loses its ruling in the ledger too
        (its board page shows the reported result waiting again)."""
        tournament = self.apply(lambda t: director.unconfirm_result(
            t, table, round_number=round_number, late_ok=late_ok), referee)
        rnd = tournament.rounds[-1] if round_number is None else \
            tournament.rounds[round_number - 1]
        held = rnd.table(table).result  # a station's result stays, waiting again
        if held is not None and held.board is not None and held.game_id is not None:
            self.desk.unconfirm(held.board, held.game_id, referee,
                                note=f"taken back: tournament round {rnd.number}, table {table}")
        return tournament


# -- request bodies -------------------------------------------------------------------------------
def _int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise BadRequest(f"{what} is a whole number")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{what} is a whole number, not {value!r}") from None


def _ints(value: Any, what: str) -> list[int] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise BadRequest(f"{what} is a list of whole numbers")
    return [_int(v, what) for v in value]


def _round_of(body: Mapping[str, Any]) -> int | None:
    value = body.get("round")
    return None if value in (None, "") else _int(value, "round")


def parse_entries(text: str) -> list[tuple[str, int | None]]:
    """The add-players box: one player a line, ``Name`` or ``Name, 1850`` (a rating)."""
    out: list[tuple[str, int | None]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        name, _, rating = line.rpartition(",")
        if name and rating.strip().isdigit():
            out.append((name.strip(), int(rating.strip())))
        else:
            out.append((line, None))
    if not out:
        raise BadRequest("give at least one name, one a line")
    return out


def tournament_routes(tdesk: TournamentDesk) -> ExtraRoutes:
    """The routes, made once the dashboard hands over its login helpers."""

    def make(access: Access) -> list[Route]:
        return _routes(tdesk, access)

    return make


def _routes(tdesk: TournamentDesk, access: Access) -> list[Route]:
    desk = tdesk.desk

    def refuse(status: int, message: str) -> Response:
        return JSONResponse({"error": message}, status_code=status)

    def reader(request: Request) -> str:
        """The page's language: ``?lang=`` (the page's script asks with it), else the
        browser's."""
        return choose(request.headers.get("accept-language"), request.query_params.get("lang"))

    def body_html(request: Request) -> str:
        return live_html(tdesk.tournament, boards=sorted(desk.boards), locks=tdesk.locks,
                         notices=list(tdesk.notices), referee=access.referee(request) is not None,
                         event=desk.event, lang=reader(request),
                         history=tdesk.store.confirmations(),
                         stations={b: v.status(False).value for b, v in desk.boards.items()})

    async def page(request: Request) -> Response:
        user = access.referee(request)
        csrf = access.csrf_of(request)
        lang = reader(request)
        words = page_words(translator(lang).gettext)
        html = pages.render(TOURNAMENT_HTML, event=desk.event, version=tdesk.version,
                            body=body_html(request), csrf=csrf, lang=lang,
                            languages=pages.language_links(lang),
                            referee="yes" if user else "no",
                            account=pages.account_html(user, csrf, translator(lang).gettext),
                            **{f"w_{key}": value for key, value in words.items()})
        return HTMLResponse(html, headers={"vary": "Accept-Language"})

    async def live(request: Request) -> Response:
        if request.query_params.get("v") == str(tdesk.version):
            return Response(status_code=204, headers={"cache-control": "no-store"})
        return HTMLResponse(body_html(request), headers={"x-version": str(tdesk.version),
                                                        "cache-control": "no-store",
                                                        "vary": "Accept-Language"})

    async def api(_request: Request) -> Response:
        return JSONResponse(tdesk.as_json())

    def csv_of(make_csv: Callable[[Tournament], str], name: str) -> Endpoint:
        async def endpoint(_request: Request) -> Response:
            if tdesk.tournament is None:
                return refuse(404, "no tournament yet")
            return Response(make_csv(tdesk.tournament).encode("utf-8"),
                            media_type="text/csv; charset=utf-8", headers={
                                "content-disposition": f'attachment; filename="{desk.event}-'
                                                       f'{name}.csv"'})
        return endpoint

    async def trf_file(_request: Request) -> Response:
        """The results as FIDE's TRF16 (:func:`pi_app.tournament.export.trf`)."""
        if tdesk.tournament is None:
            return refuse(404, "no tournament yet")
        try:
            text = export.trf(tdesk.tournament)
        except ValueError as exc:
            return refuse(409, str(exc))
        return Response(text.encode("utf-8"), media_type="text/plain; charset=utf-8", headers={
            "content-disposition": f'attachment; filename="{desk.event}-results.trf"'})

    async def records(request: Request) -> Response:
        if access.referee(request) is None:
            return refuse(401, "log in as a referee first")
        return JSONResponse(tdesk.records(), headers={
            "content-disposition": f'attachment; filename="{desk.event}-records.json"'})

    def action(step: Callable[[str, Mapping[str, Any]], Awaitable[None] | None]) -> Endpoint:
        """A referee's POST: login, CSRF, a JSON object, then the step (400/409 on refusal;
        a step that waits, such as the broker taking a lock, is awaited)."""
        async def endpoint(request: Request) -> Response:
            user = access.referee(request)
            if user is None:
                return refuse(401, "log in as a referee first")
            if not await access.csrf_ok(request, None):
                return refuse(403, "missing or wrong CSRF token")
            try:
                body = json.loads(await request.body() or b"{}")
            except (UnicodeDecodeError, ValueError):
                return refuse(400, "send a JSON object")
            if not isinstance(body, dict):
                return refuse(400, "send a JSON object")
            try:
                done = step(user, body)
                if done is not None:
                    await done
            except BadRequest as exc:
                return refuse(400, str(exc))
            except LateCorrection as exc:
                return JSONResponse({"error": str(exc), "late": [list(t) for t in exc.touched]},
                                    status_code=409)
            except TournamentError as exc:
                return refuse(409, str(exc))
            return JSONResponse({"ok": True, "version": tdesk.version})
        return endpoint

    def new(_user: str, body: Mapping[str, Any]) -> None:
        game = body.get("game")
        if not isinstance(game, str):
            raise BadRequest("choose the game: topple, manami or tactiki")
        event = body.get("event") or desk.event
        if not isinstance(event, str):
            raise BadRequest("the event name is text")
        rounds = body.get("rounds")
        tdesk.start(event, game, _int(body.get("seed", 0), "seed"),
                    None if rounds in (None, "") else _int(rounds, "rounds"))

    def plan(_user: str, body: Mapping[str, Any]) -> None:
        rounds = _int(body.get("rounds"), "rounds")
        tdesk.apply(lambda t: director.plan_rounds(t, rounds))

    def clock(_user: str, body: Mapping[str, Any]) -> None:
        minutes = body.get("minutes")
        wanted = None if minutes in (None, "", 0) else _int(minutes, "minutes")
        number = _round_of(body)
        tdesk.apply(lambda t: director.set_round_clock(t, wanted, time.time(), number))

    def halfbye(_user: str, body: Mapping[str, Any]) -> None:
        player = body.get("player")
        if not isinstance(player, str):
            raise BadRequest("give the player's id (p1, p2, ...)")
        wanted = body.get("wanted", True)
        if not isinstance(wanted, bool):
            raise BadRequest("wanted is true or false")
        tdesk.apply(lambda t: director.ask_half_bye(t, player, wanted))

    def players(_user: str, body: Mapping[str, Any]) -> None:
        names = body.get("names")
        if not isinstance(names, str):
            raise BadRequest("send the names as text, one a line")
        entries = parse_entries(names)

        def enter(t: Tournament) -> Tournament:
            for name, rating in entries:
                t = director.add_player(t, name, rating)
            return t
        tdesk.apply(enter)

    def withdraw(_user: str, body: Mapping[str, Any]) -> None:
        player = body.get("player")
        if not isinstance(player, str):
            raise BadRequest("give the player's id (p1, p2, ...)")
        out = body.get("withdrawn", True)
        if not isinstance(out, bool):
            raise BadRequest("withdrawn is true or false")
        tdesk.apply(lambda t: director.set_withdrawn(t, player, out))

    def pair(_user: str, _body: Mapping[str, Any]) -> None:
        tdesk.apply(director.pair_next_round)

    def boards(_user: str, body: Mapping[str, Any]) -> None:
        tables = body.get("tables")
        if not isinstance(tables, dict):
            raise BadRequest('send {"tables": {"1": "board-id", ...}}')
        wanted = {_int(t, "a table"): b for t, b in tables.items() if b not in (None, "")}
        number = _round_of(body)
        tdesk.apply(lambda t: director.assign_boards(t, wanted, number))

    async def hints(user: str, body: Mapping[str, Any]) -> None:
        """Lock (``{"locked": true}``) or allow hints at every station of the event."""
        locked = body.get("locked")
        if not isinstance(locked, bool):
            raise BadRequest('send {"locked": true} or {"locked": false}')
        locks = LocksPayload(hints=not locked, by=user if locked else None, t=time.time())
        send = tdesk.send_locks
        if send is None or not await asyncio.to_thread(send, locks):
            raise TournamentError("the broker did not take the lock: is the dashboard "
                                  "connected?")
        tdesk.on_locks(locks)

    def flag(body: Mapping[str, Any], name: str) -> bool:
        value = body.get(name, False)
        if not isinstance(value, bool):
            raise BadRequest(f"{name} is true or false")
        return value

    def late(body: Mapping[str, Any]) -> bool:
        return flag(body, "late")

    def confirm(user: str, body: Mapping[str, Any]) -> None:
        tdesk.confirm(user, _int(body.get("table"), "table"), _round_of(body),
                      _ints(body.get("scores"), "scores"), _ints(body.get("winners"), "winners"),
                      late(body), flag(body, "forfeit"))

    def unconfirm(user: str, body: Mapping[str, Any]) -> None:
        table, number, late_ok = _int(body.get("table"), "table"), _round_of(body), late(body)
        tdesk.unconfirm(user, table, number, late_ok)

    async def printed(request: Request) -> Response:
        if tdesk.tournament is None:
            return refuse(404, "no tournament yet")
        wanted = request.query_params.get("round")
        try:
            number = None if not wanted else _int(wanted, "round")
        except BadRequest as exc:
            return refuse(400, str(exc))
        return HTMLResponse(print_html(tdesk.tournament, desk.event, number, reader(request)),
                            headers={"vary": "Accept-Language"})

    async def print_css(_request: Request) -> Response:
        return Response(PRINT_CSS, media_type="text/css",
                        headers={"cache-control": "max-age=300"})

    async def script(_request: Request) -> Response:
        return Response(TOURNAMENT_JS, media_type="text/javascript",
                        headers={"cache-control": "max-age=300"})

    post = ["POST"]
    return [
        Route("/tournament", page), Route("/tournament/live", live),
        Route("/api/tournament", api),
        Route("/tournament/standings.csv", csv_of(export.standings_csv, "standings")),
        Route("/tournament/pairings.csv", csv_of(export.pairings_csv, "pairings")),
        Route("/tournament/results.trf", trf_file),
        Route("/tournament/records.json", records),
        Route("/tournament/print", printed),
        Route("/api/tournament/new", action(new), methods=post),
        Route("/api/tournament/players", action(players), methods=post),
        Route("/api/tournament/withdraw", action(withdraw), methods=post),
        Route("/api/tournament/halfbye", action(halfbye), methods=post),
        Route("/api/tournament/rounds", action(plan), methods=post),
        Route("/api/tournament/clock", action(clock), methods=post),
        Route("/api/tournament/pair", action(pair), methods=post),
        Route("/api/tournament/boards", action(boards), methods=post),
        Route("/api/tournament/confirm", action(confirm), methods=post),
        Route("/api/tournament/unconfirm", action(unconfirm), methods=post),
        Route("/api/tournament/hints", action(hints), methods=post),
        Route("/static/tournament.js", script),
        Route("/static/print.css", print_css),
    ]
