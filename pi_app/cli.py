"""The ``tikiboard`` command line.

Every subcommand is a thin shell over the library: it parses arguments, calls one function and
prints. Exit status as in ``docs/records.md``: 0 success, 1 the rules were broken, 2 the input could
not be used (one clear line on stderr, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from pi_app import __version__
from pi_app.games import GAME_NAMES, GameError, get_game
from pi_app.i18n import LANGUAGES, N_, game_title, in_language, translator
from pi_app.records import Replay, check_record, load_record, load_records, parse_record, replay

EXIT_OK, EXIT_ILLEGAL, EXIT_BAD_INPUT = 0, 1, 2


def _fail(message: str) -> int:
    print(f"tikiboard: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


#: Where a record stops, as people count (a record counts rounds and moves from 0, people
#: from 1: "round 1, move 3").
WHERE_WORDS = {"round": N_("round {number}"), "move": N_("move {number}")}


def _print_replay(result: Replay, names: Sequence[str] = (), lang: str = "en") -> None:
    """The replay for a person: players by name (a station's record has them) or "Player 1",
    "Player 2"... (records count from 0, people from 1), in ``lang`` (``--lang``), the
    engine's description of the position too (issue 31: one language per run), an illegal
    move's reason as well (the engines give it a translatable form, :func:`pi_app.i18n.said_of`)."""
    _ = translator(lang).gettext
    game, state = result.game, result.state
    scores = game.scores(state)
    # A station without names stores "Player 1"... in English: said here in ``lang``.
    given = [str(n) for n in names[:len(scores)]]
    if given == [f"Player {i + 1}" for i in range(len(given))]:
        given = []
    people = given + [_("Player {number}").format(number=i + 1)
                      for i in range(len(given), len(scores))]
    print(game.describe(state, _))
    print(_("scores: {scores}").format(
        scores=", ".join(f"{people[p]}: {s}" for p, s in enumerate(scores))))
    winners = result.winners()
    if winners is not None:
        won = [people[w] for w in winners if w < len(people)]
        if won:
            joined = won[0]
            for name in won[1:]:
                joined = _("{first} and {second}").format(first=joined, second=name)
            print(_("result: {names} won").format(names=joined))
        elif result.draw_agreed:
            print(_("result: a draw agreed by the players"))
        else:
            print(_("result: a draw"))
    elif not result.finished:
        print(_("the game goes on"))
    if result.error is not None:
        where = ", ".join(_(WHERE_WORDS[k]).format(number=v + 1) if k in WHERE_WORDS
                          else f"{k} {v}" for k, v in result.error.where.items())
        print(_("illegal move at {where}: {move}: {reason}").format(
            where=where, move=repr(result.error.text),
            reason=in_language(result.error.reason, lang)))


def _replay_one(record: object, where: str) -> Replay | str:
    """The replay of one record, or the line that says why it cannot be used."""
    try:
        return replay(check_record(record))
    except GameError as exc:
        return f"{where}: not a valid record: {exc}"
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        return f"{where}: not a valid record ({type(exc).__name__}: {exc})"


def cmd_replay(args: argparse.Namespace) -> int:
    """Apply every move of a record and report (``docs/records.md``). A file holding a list of
    records, as ``tikiboard export`` writes a station's games, replays each in turn: a bad
    entry is said on stderr and the others still replay; the exit status is the worst."""
    try:
        loaded = load_records(args.file)
    except GameError as exc:
        return _fail(f"{args.file}: not a valid record: {exc}")
    if not isinstance(loaded, list):
        result = _replay_one(loaded, args.file)
        if isinstance(result, str):
            return _fail(result)
        if args.json:
            print(json.dumps(result.to_json()))
        else:
            _print_replay(result, _names(loaded), args.lang)
        return EXIT_OK if result.ok else EXIT_ILLEGAL
    status = EXIT_OK
    outputs: list[dict[str, object] | None] = []
    for index, record in enumerate(loaded):
        where = f"{args.file}: record {index + 1} of {len(loaded)}"
        result = _replay_one(record, where)
        if isinstance(result, str):
            status = _fail(result)
            outputs.append(None)
            continue
        if not result.ok and status == EXIT_OK:
            status = EXIT_ILLEGAL
        outputs.append(result.to_json())
        if not args.json:
            title = game_title(result.game.title, translator(args.lang).gettext)
            print(f"== {index + 1}/{len(loaded)}: {title} ==")
            _print_replay(result, _names(record), args.lang)
            print()
    if args.json:
        print(json.dumps({"ok": status == EXIT_OK, "records": outputs}))
    return status


def cmd_review(args: argparse.Namespace) -> int:
    """Review a finished game (:mod:`pi_app.bots.review`) and draw it as SVG files: the
    evaluation over the game, the score over the game (where it moves before the end), and
    each named move's position with the better move. A record that stops replaying is
    reviewed up to its illegal move, which is reported (exit 1)."""
    from pi_app.bots.review import review
    from pi_app.net.review_svg import evaluation_svg, scores_svg, slip_svg

    try:
        record = load_record(args.file)
        result = replay(record)
        done = review(record, seconds=args.seconds)
    except GameError as exc:
        return _fail(f"{args.file}: not a valid record: {exc}")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        return _fail(f"{args.file}: not a valid record ({type(exc).__name__}: {exc})")
    data = done.to_json()
    names = _names(record)
    people = names + [f"Player {i + 1}" for i in range(len(names), 8)]
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        files = {"evaluation.svg": evaluation_svg(data, names)}
        chart = scores_svg(data, names)
        if chart is not None:
            files["score.svg"] = chart
        for slip in data["slips"]:
            files[f"move-{slip['move']}.svg"] = slip_svg(data["game"], slip)
        for name, text in files.items():
            (out / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        return _fail(f"{out}: cannot write the pictures: {exc.strerror or exc}")
    if args.json:
        print(json.dumps({**data, "files": sorted(str(out / n) for n in files)}))
    else:
        print(f"reviewed {data['reviewed']} of {data['total']} moves"
              + (" (stopped at the time limit)" if data["partial"] else ""))
        for seat in data["skipped"]:
            print(f"{people[seat]}: played by the station, not reviewed")
        for slip in data["slips"]:
            print(f"{people[slip['player']]}, move {slip['move']}: {slip['text']} "
                  f"(better: {slip['better']}; lost {slip['drop']:g}) -> "
                  f"{out / ('move-' + str(slip['move']) + '.svg')}")
        if not data["slips"]:
            print("no move lost much")
        print(f"charts: {', '.join(str(out / n) for n in files if not n.startswith('move-'))}")
    if result.error is not None:
        print(f"illegal move {result.error.text!r}: {result.error.reason} (reviewed up to it)",
              file=sys.stderr)
        return EXIT_ILLEGAL
    return EXIT_OK


def cmd_play(args: argparse.Namespace) -> int:
    """Play a game on the page, moves by tap or click, against the station's bot or two
    people on one screen (:mod:`pi_app.net.play`); no hardware."""
    import uvicorn

    from pi_app.net.play import create_play_app

    people = frozenset({0, 1}) if args.two else frozenset({args.seat - 1})
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "big")
    app = create_play_app(args.game, args.level, people, seed, Path(args.out))
    print(f"tikiboard play: http://{args.host}:{args.port}/ (Ctrl-C stops)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return EXIT_OK


def _names(record: object) -> list[str]:
    """The players' names a record carries (a station writes them as ``"players"``), or none
    when it has no such list of texts."""
    names = record.get("players") if isinstance(record, dict) else None
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        return names
    return []


def example_record(game: str) -> str:
    """The bundled example record of ``game`` as JSON text."""
    name = f"{game}-example.tiki.json"
    return resources.files("pi_app.data").joinpath(name).read_text(encoding="utf-8")


def cmd_demo(args: argparse.Namespace) -> int:
    """A whole game played by simulated hands through the real station, drawn live."""
    from pi_app.demo import main as demo_main

    return demo_main(args.game, args.seed, args.turns, args.picture, speed=args.speed,
                     web=args.web, keep=args.keep, vs_bot=args.vs_bot, lang=args.lang)


def cmd_examples(args: argparse.Namespace) -> int:
    """Replay the bundled example game of each engine, to show what the station computes."""
    status = EXIT_OK
    for name in args.game or GAME_NAMES:
        try:
            get_game(name)
            text = example_record(name)
        except (ModuleNotFoundError, FileNotFoundError):
            continue
        _ = translator(args.lang).gettext
        print(_("== {title}: bundled example record ==").format(title=_(get_game(name).title)))
        result = replay(parse_record(text))
        _print_replay(result, lang=args.lang)
        print()
        if not result.ok:
            status = EXIT_ILLEGAL
    return status


def cmd_sim(args: argparse.Namespace) -> int:
    """Run a sensor trace through tracker, inference and engine; or make one by simulation."""
    from pi_app.board.trace import Trace, TraceError, load_trace, run_trace

    if args.make:
        from pi_app.board.equipment import registry_for
        from pi_app.board.geometry import load_geometry
        from pi_app.sim.hands import Noise
        from pi_app.sim.table import simulate_trace

        game = get_game(args.make)
        header, events = simulate_trace(
            game, load_geometry(args.make), registry_for(args.make), args.seed, args.moves,
            noise=Noise.table() if args.noisy else None,
            miss=0.05 if args.noisy else 0.0, flicker=0.05 if args.noisy else 0.0)
        Trace(header, events).save(Path(args.trace))
        print(f"wrote {len(events)} events of {args.moves} simulated moves to {args.trace}")
        return EXIT_OK
    try:
        result = run_trace(load_trace(args.trace))
    except TraceError as exc:
        return _fail(f"{args.trace}: {exc}")
    if args.json:
        print(json.dumps(result.to_json()))
        return EXIT_OK
    data = result.to_json()
    print("accepted moves: " + (" ".join(f"[{m}]" for m in result.moves) or "none"))
    for prompt in data["prompts"]:
        print(f"  {prompt['t']:8.2f}s asked ({prompt['kind']}): " + " / ".join(prompt["options"]))
    for guide in data["guidance"]:
        print(f"  {guide['t']:8.2f}s {guide['kind']}: " + "; ".join(guide["fixes"]))
    for revision in data["revisions"]:
        print(f"  {revision['t']:8.2f}s revised {revision['replaced']} to {revision['by']}")
    print(get_game(result.game).describe(result.state))
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """The station daemon, on real hardware or the simulated board by configuration."""
    from pi_app.referee.config import DEFAULTS_TOML, ConfigError
    from pi_app.referee.firstboot import load_for_run

    if args.print_config:
        print(DEFAULTS_TOML, end="")
        return EXIT_OK
    if args.write_config:
        return _write_private(Path(args.write_config), DEFAULTS_TOML)
    try:
        config, setup = load_for_run(args.config, first_boot=args.first_boot)
    except ConfigError as exc:
        return _fail(str(exc))
    from pi_app.station_main import run

    return run(config, setup)


def _write_private(path: Path, text: str) -> int:
    """Create ``path`` readable by its owner and group only (0640): a station's configuration
    holds the MQTT password and the page's token. An existing file is left alone."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    except OSError as exc:
        return _fail(f"{path}: cannot create: {exc.strerror or exc}")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    print(f"wrote {path} (mode 0640)", file=sys.stderr)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    """Write a station's games as records (docs/records.md), from its database, read-only (a wrong
    path is an error, never a new empty database). A game that does not read back is left
    out, said on stderr, and the exit status is 2; the others are still written."""
    from pi_app.referee.session import Session
    from pi_app.referee.store import EventStore, StoreError

    try:
        store = EventStore(args.db, readonly=True)
        ids = [row[0] for row in store.db.execute("SELECT id FROM games ORDER BY id")] \
            if args.game is None else [args.game]
    except (StoreError, sqlite3.Error) as exc:
        return _fail(str(exc))
    records, status = [], EXIT_OK
    for game_id in ids:
        try:
            records.append(Session.resume(store, store.game(game_id)).export())
        except (StoreError, sqlite3.Error) as exc:
            status = _fail(f"{args.db}: game {game_id} left out: {exc}")
    if args.game is not None and not records:
        return status
    text = json.dumps(records[0] if args.game is not None else records, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        words = translator(args.lang)
        print(words.ngettext("wrote {count} record to {path}", "wrote {count} records to {path}",
                             len(records)).format(count=len(records), path=args.out)
              + ("" if args.game is not None else " " + words.gettext(
                  "as a list (tikiboard replay reads it; --game ID writes one record)")))
    else:
        print(text)
    return status


def cmd_register(args: argparse.Namespace) -> int:
    """Register tags: put each named piece on any reader, one at a time."""
    import queue as queue_module
    import time

    from pi_app.board.geometry import load_geometry
    from pi_app.board.registrar import Registrar
    from pi_app.board.registry import RegistryError, TagRegistry
    from pi_app.hw.link import SerialLink
    from pi_app.readings import SensorEvent
    from pi_app.referee.config import ConfigError, load_config

    try:
        config = load_config(args.config)
        registry = TagRegistry.load(config.data_dir / "tags.json")
    except (ConfigError, RegistryError) as exc:
        return _fail(str(exc))
    pieces = [p for p in args.piece for _ in range(args.count)]
    registrar = Registrar(registry, pieces, replace=args.replace)
    events: queue_module.Queue[object] = queue_module.Queue()
    sim = None
    device = config.sensors.device
    if config.sensors.source == "sim":
        from pi_app.hw.simfirmware import SimFirmware

        geometry = load_geometry(config.station.game)
        sim = SimFirmware(geometry.reader_count, geometry.presence_count).start()
        device = sim.path
    link = SerialLink(device, events.put, baudrate=config.sensors.baudrate).start()
    deadline = time.monotonic() + args.timeout
    try:
        print(f"put {registrar.waiting_for} on any reader (tags file: {registry.path})")
        while registrar.waiting_for is not None and time.monotonic() < deadline:
            try:
                event = events.get(timeout=0.5)
            except queue_module.Empty:
                continue
            if isinstance(event, SensorEvent):
                for message in registrar.feed(event):
                    print(message)
                if registrar.waiting_for is not None and registrar.done:
                    print(f"put {registrar.waiting_for} on any reader")
    finally:
        link.stop()
        if sim is not None:
            sim.stop()
    if registrar.waiting_for is not None:
        return _fail(f"timed out waiting for {registrar.waiting_for}; "
                     f"{len(registrar.done)} tag(s) registered")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    from pi_app.bots import ALL_LEVELS  # names only: the engines load when a command runs

    parser = argparse.ArgumentParser(
        prog="tikiboard", description="Referee physical tiki board games.")
    parser.add_argument("--version", action="version", version=f"tikiboard {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("replay", help="replay a game record and report the result")
    p.add_argument("file", help="a NAME.tiki.json record")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--lang", choices=LANGUAGES, default="en",
                   help="the replay's language")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("review", help="review a finished game and draw it as SVG charts")
    p.add_argument("file", help="a NAME.tiki.json record")
    p.add_argument("--out", default="review", help="the folder for the SVG files (review)")
    p.add_argument("--seconds", type=float, default=30.0, help="the most the review may think")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.set_defaults(func=cmd_review)

    p = sub.add_parser("play", help="play a game on the page by taps, no hardware")
    p.add_argument("game", choices=GAME_NAMES)
    p.add_argument("--level", choices=ALL_LEVELS, default="casual", help="the bot's level")
    p.add_argument("--two", action="store_true", help="two people on one screen, no bot")
    p.add_argument("--seat", type=int, choices=(1, 2), default=1, help="your seat against the bot")
    p.add_argument("--host", default="127.0.0.1", help="the address to serve on (loopback)")
    p.add_argument("--port", type=int, default=8034)
    p.add_argument("--seed", type=int, help="the deal and the bot's chance (default: random)")
    p.add_argument("--out", default="records", help="the folder for finished games' records")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("run", help="the station daemon (real hardware or simulated board)")
    p.add_argument("--config", help="a TOML file; without it, the embedded defaults")
    p.add_argument("--print-config", action="store_true", help="print the documented defaults")
    p.add_argument("--write-config", metavar="FILE",
                   help="write the documented defaults to a new FILE, mode 0640")
    p.add_argument("--first-boot", action="store_true",
                   help="a missing --config FILE starts the first-boot set-up (the page's "
                        "/setup, with the code on the station's screen), which writes it")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("register", help="teach the station which tag is on which piece")
    p.add_argument("piece", nargs="+", help="piece names: Nani, p0, T3, action:up1, ...")
    p.add_argument("--count", type=int, default=1, help="tags per piece (tokens: 8)")
    p.add_argument("--config", help="the station's TOML file (sensors, data_dir)")
    p.add_argument("--replace", action="store_true", help="re-register known tags")
    p.add_argument("--timeout", type=float, default=300.0, help="give up after seconds")
    p.set_defaults(func=cmd_register)

    p = sub.add_parser("export", help="write the station's games as records")
    p.add_argument("--db", required=True, help="the station database (DATA_DIR/tikiboard.db)")
    p.add_argument("--game", type=int, help="one game by its id (default: all, as a list)")
    p.add_argument("--out", help="write to this file instead of printing")
    p.add_argument("--lang", choices=LANGUAGES, default="en",
                   help="the language of what it says (the records are data)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("sim", help="run a sensor trace through the pipeline, or make one")
    p.add_argument("--trace", required=True, help="a JSON-lines trace (read, or written by --make)")
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--make", choices=GAME_NAMES, help="simulate GAME by hand; write the trace")
    p.add_argument("--seed", type=int, default=1, help="with --make: the random seed")
    p.add_argument("--moves", type=int, default=10, help="with --make: how many moves")
    p.add_argument("--noisy", action="store_true", help="with --make: table noise and misses")
    p.set_defaults(func=cmd_sim)

    from pi_app.commands import diag
    from pi_app.net.dashboard import register as register_referee

    diag.register(sub)
    register_referee(sub)
    from pi_app.commands.bot import register as register_bot

    register_bot(sub)

    p = sub.add_parser("demo", help="a whole game by simulated hands through the real station")
    p.add_argument("--game", choices=GAME_NAMES, default="topple", help="which game")
    p.add_argument("--seed", type=int, help="the random seed of deal and hands (default: a "
                   "new one each run, printed)")
    p.add_argument("--turns", type=int, default=400, help="stop after this many turns")
    p.add_argument("--picture", help="after each turn, save the board and screen as this PNG")
    p.add_argument("--speed", type=float, default=4.0,
                   help="pace: 1 = as people play, 4 = four times faster (default 4)")
    p.add_argument("--web", type=int, nargs="?", const=0, metavar="PORT",
                   help="serve the station's page on 127.0.0.1 (PORT, or a free one)")
    p.add_argument("--keep", metavar="DB", help="keep the game database as this new file "
                   "(then: tikiboard export --db DB)")
    p.add_argument("--vs-bot", nargs="?", const="search", choices=ALL_LEVELS,
                   metavar="LEVEL", help="the station plays P2 at LEVEL (beginner, casual, club, "
                   "strongest, or random, greedy, search: the default) and the hands carry out "
                   "its moves")
    p.add_argument("--lang", choices=LANGUAGES, default="en",
                   help="the station's language: its screen, the legend and the summary")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("examples", help="replay the bundled example record of each game")
    p.add_argument("--game", choices=GAME_NAMES, action="append", help="only this game")
    p.add_argument("--lang", choices=LANGUAGES, default="en",
                   help="the replays' language")
    p.set_defaults(func=cmd_examples)
    return parser


#: The Pi's own drivers (the ``pi`` extra): every other library comes with a plain install.
PI_ONLY = frozenset({"lgpio", "RPi", "board", "busio", "digitalio", "neopixel", "neopixel_spi"})


def missing_part(module: str) -> str:
    """One line for a library a command needs and this installation lacks (issue 31: a
    traceback ending in ``No module named 'PIL'`` told a new user nothing)."""
    top = module.split(".", maxsplit=1)[0]
    if top in PI_ONLY:
        return (f"this needs the Raspberry Pi's drivers ({top}), the pi extra: "
                "pip install 'tikiboard[pi]'")
    return (f"this needs the {top} library, which a plain install brings: "
            "pip install tikiboard (not with --no-deps)")


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        try:
            status = args.func(args)
        except ModuleNotFoundError as exc:
            if not exc.name or exc.name.split(".")[0] in ("pi_app", "tikifw"):
                raise  # the project's own module missing is a bug, with its traceback
            status = _fail(missing_part(exc.name))
        sys.stdout.flush()  # here, not at exit, so a closed pipe is caught below
    except BrokenPipeError:
        # The reader went away (``tikiboard export | head -1``): no traceback, and stdout
        # pointed at /dev/null so Python's own flush at exit does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = 128 + signal.SIGPIPE  # what a shell shows for a writer cut off by a pipe
    sys.exit(status)
