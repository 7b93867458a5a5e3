"""Game knowledge stays in the engines (issue 17, item 4).

What differs between the games (set-up input, options, piece styles, round records, what a
seat may know) is asked of the engine through a ``Game`` hook, never decided by the game's
name or by the class of its engine or view. This scans every module of ``pi_app`` outside
``pi_app/games`` for the two ways of asking "which game is this?":

* a game's record name compared with anything (``game.name == "topple"``, ``!=``, ``in``, a
  ``match`` case), and
* ``isinstance`` against a concrete engine class or a per-game view class
  (``isinstance(view, TacTikiView)``).

Plain uses of a name are fine: a default (``game = "topple"``), a keyword (``Scene(game=...)``),
a list of the games. The bots' per-game models and views (``pi_app/bots/models.py``,
``pi_app/bots/views.py``) are the one place outside the engines that is per game by design:
each model or view class is for one engine and says which, and those classes are what the
rest of the bots dispatch on; so they may name their own game's classes inside themselves,
but nothing may test for them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pi_app.games import GAME_NAMES, get_game

ROOT = Path(__file__).resolve().parents[1] / "pi_app"
GAMES = ROOT / "games"

#: Classes whose ``isinstance`` test asks which game is played: every engine class, and a
#: per-game view (a class named ``...View`` other than the generic sensor ``View`` and the
#: per-seat base ``SeatView``).
ENGINE_CLASSES = frozenset(type(get_game(name)).__name__ for name in GAME_NAMES)
GENERIC_VIEWS = frozenset(("View", "SeatView"))


def _class_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _asks_for_a_class(node: ast.expr) -> list[str]:
    """The engine or per-game view classes an ``isinstance`` second argument names."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    if isinstance(node, ast.BinOp):  # isinstance(x, A | B)
        return _asks_for_a_class(node.left) + _asks_for_a_class(node.right)
    out = []
    for part in parts:
        name = _class_name(part)
        if name is None:
            continue
        if name in ENGINE_CLASSES or (name.endswith("View") and name not in GENERIC_VIEWS):
            out.append(name)
    return out


def _game_literal(node: ast.expr) -> str | None:
    """A game's record name written as a literal (alone, or in a tuple/list/set of them)."""
    if isinstance(node, ast.Constant) and node.value in GAME_NAMES:
        return str(node.value)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        for elt in node.elts:
            found = _game_literal(elt)
            if found is not None:
                return found
    return None


def findings(source: str, where: str) -> list[str]:
    """Every place in ``source`` that asks which game is played, as ``where:line: what``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                literal = _game_literal(side)
                if literal is not None:
                    out.append(f"{where}:{node.lineno}: compares with the game name "
                               f"{literal!r}")
                    break
        elif isinstance(node, ast.match_case):
            for pattern in ast.walk(node.pattern):
                if isinstance(pattern, ast.MatchValue) and _game_literal(pattern.value):
                    out.append(f"{where}:{pattern.lineno}: a match case on a game name")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "isinstance" and len(node.args) == 2):
            for name in _asks_for_a_class(node.args[1]):
                out.append(f"{where}:{node.lineno}: isinstance against {name}")
    return out


def outside_the_engines() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if GAMES not in p.parents)


def test_nothing_outside_the_engines_asks_which_game_it_is() -> None:
    found = [f for path in outside_the_engines()
             for f in findings(path.read_text(), str(path.relative_to(ROOT.parent)))]
    assert found == [], "ask the engine (a Game hook), not its name or class:\n" + \
        "\n".join(found)


@pytest.mark.parametrize("code", [
    'if game.name == "topple":\n    pass\n',
    'if game_name != "tactiki":\n    pass\n',
    'carried = name not in ("topple", "manami")\n',
    'match game.name:\n    case "manami":\n        pass\n',
    'ok = isinstance(view, TacTikiView)\n',
    'ok = isinstance(view, views.ToppleView | ManamiView)\n',
    'ok = isinstance(game, (tactiki.TacTikiGame, int))\n',
])
def test_the_scan_finds_each_way_of_asking(code: str) -> None:
    """The scan is no empty promise: each form the station's code used before the hooks (a
    name compared, a view's class tested) is found."""
    assert findings(code, "x.py")


@pytest.mark.parametrize("code", [
    'game = "topple"\n',
    'scene = Scene(game="manami")\n',
    'if game.name == other.name:\n    pass\n',
    'ok = isinstance(view, SeatView)\n',
    'ok = isinstance(pieces, dict)\n',
])
def test_plain_uses_of_a_name_are_not_findings(code: str) -> None:
    assert findings(code, "x.py") == []


@pytest.mark.parametrize("name", GAME_NAMES)
def test_each_engine_declares_options_the_table_can_start(name: str) -> None:
    """An engine's option declarations hold together: its table defaults and every preset
    name only options it declares, every preset starts a game at each player count, and the
    first preset is the printed rules (no labels)."""
    from pi_app.referee.rule_options import labels, table_options

    game = get_game(name)
    assert set(game.table_defaults) <= set(game.option_names)
    assert game.presets[0].options(min(game.player_counts)) == {}
    for count in game.player_counts:
        assert labels(name, table_options(name, {}, count)) == ()
        for preset in game.presets:
            chosen = preset.options(count)
            assert set(chosen) <= set(game.option_names), preset.name
            options = table_options(name, chosen, count)  # raises if the engine refuses
            assert (labels(name, options) == ()) == (preset.name == "standard"), preset.name


@pytest.mark.parametrize("name", GAME_NAMES)
def test_an_engine_without_a_set_up_input_refuses_its_hooks(name: str) -> None:
    """The set-up hooks answer only for the kind the engine names: a game that deals no
    rounds has no round record, and one without secret cards waits for none."""
    import random

    from pi_app.games.base import IllegalMove, RecordError, SetupInput

    game = get_game(name)
    state = game.new_game(random.Random(1))
    if game.setup_input is not SetupInput.SECRET_CARDS:
        assert game.secret_card_seats(state) == ()
        with pytest.raises(IllegalMove):
            game.with_secret_cards(state, [])
    else:
        assert game.secret_card_seats(state)
    if game.setup_input is not SetupInput.START_STACKS:
        assert game.start_stack_problem("a1", ["x"])
        with pytest.raises(RecordError):
            game.start_stacks_record({}, {})
