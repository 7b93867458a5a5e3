"""Feedback: exact LED frames at chosen times, the LED language's rules, and every OLED screen
against reference pictures (regenerate with
``python -m tools.render_docs docs/images --references tests/data/feedback``)."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageChops

from pi_app.board.fixes import Fix
from pi_app.board.follower import GuidanceKind, Prompt, PromptKind
from pi_app.board.geometry import Geometry, load_geometry
from pi_app.games.topple import GAME as TOPPLE
from pi_app.hw.leds import RGB
from pi_app.referee import feedback as fb
from pi_app.referee.feed import Phase
from pi_app.referee.feedback import BLUE, DIM, OFF, ORANGE, WHITE, Pattern, Scene
from tools import render_docs

ROOT = Path(__file__).resolve().parent.parent
REFERENCES = ROOT / "tests" / "data" / "feedback"
DOCS = ROOT / "docs"
REGENERATE = ("python -m tools.render_docs docs/images "
              "--references tests/data/feedback")


@pytest.fixture(scope="module")
def topple() -> Geometry:
    return load_geometry("topple")


@pytest.fixture(scope="module")
def tactiki() -> Geometry:
    return load_geometry("tactiki")


def leds(geometry: Geometry, *cells: str) -> set[int]:
    return {i for c in cells for i in geometry.cell(c).leds}


def scaled(colour: RGB, level: float) -> RGB:
    r, g, b = colour
    return round(r * level), round(g * level), round(b * level)


def lit(frame: list[RGB]) -> dict[int, RGB]:
    return {i: c for i, c in enumerate(frame) if c != OFF}


PLAY = Scene(phase=Phase.PLAY, game="topple", title="Tiki Topple", to_move=1, scores=(3, 5, 0))


# -- the LED language ----------------------------------------------------------------------------
def test_no_two_signals_share_colour_and_pattern() -> None:
    pairs = [(s.colour, s.pattern) for s in fb.SIGNALS.values()]
    assert len(set(pairs)) == len(pairs)


def test_only_colours_that_survive_red_green_colour_blindness() -> None:
    """Protanopes and deuteranopes merge red and green into one channel whatever its mix; the
    palette still differs a lot in (that channel, blue) for every mix."""
    palette = {s.colour for s in fb.SIGNALS.values()}
    assert palette == {BLUE, ORANGE, WHITE}
    for w in (0.0, 0.25, 0.5, 0.75, 1.0):
        seen = {c: (w * c[0] + (1 - w) * c[1], float(c[2])) for c in palette}
        for a, b in itertools.combinations(palette, 2):
            (ya, ba), (yb, bb) = seen[a], seen[b]
            assert abs(ya - yb) + abs(ba - bb) > 90, (a, b, w)


def test_signals_lit_on_cells_together_differ_in_pattern_alone() -> None:
    """Confirm, the fix to do now (from- and to-cell) and the dim "differs" can share the
    board; a player who sees no colour at all still tells them apart."""
    together = [("confirm", "extra", "missing", "differs"),
                ("confirm", "follow_up", "missing", "differs"),
                ("confirm", "unknown", "differs")]
    for keys in together:
        patterns = [fb.SIGNALS[k].pattern for k in keys]
        assert len(set(patterns)) == len(patterns), keys


def test_blink_patterns_differ_in_time() -> None:
    samples = {p: tuple(p.level(i * 0.05) for i in range(56)) for p in Pattern
               if p is not Pattern.FADE}
    for a, b in itertools.combinations(samples, 2):
        assert samples[a] != samples[b], (a, b)
    assert Pattern.SLOW.level(0.1) == 1 and Pattern.SLOW.level(0.7) == 0
    assert Pattern.FAST.level(0.1) == 1 and Pattern.FAST.level(0.3) == 0
    assert [Pattern.DOUBLE.level(t) for t in (0.1, 0.2, 0.35, 0.5, 1.3)] == [1, 0, 1, 0, 0]


def test_nothing_flashes_faster_than_three_times_a_second() -> None:
    for pattern in (Pattern.SLOW, Pattern.FAST, Pattern.DOUBLE):
        period = pattern.period
        assert period is not None
        levels = [pattern.level(i * 0.01) for i in range(round(period * 100))]
        flashes = sum(1 for a, b in itertools.pairwise(levels) if a == 0 and b == 1) + 1
        assert flashes / period <= 3, pattern


def test_brightness_is_capped() -> None:
    assert max(max(s.colour) for s in fb.SIGNALS.values()) <= 192
    assert sum(WHITE) <= 3 * 150


# -- frames ---------------------------------------------------------------------------------------
def test_confirm_lights_exactly_the_changed_cells_briefly(topple: Geometry) -> None:
    before = TOPPLE.new_game(random.Random(1))
    after = TOPPLE.apply_text(before, "up2 Nani")
    cells = fb.changed_cells(TOPPLE.expected_view(before), TOPPLE.expected_view(after))
    assert cells == ("s2", "s3", "s4")
    scene = replace(PLAY, confirmed=cells, confirmed_at=10.0)
    turn = set(topple.status_leds["p1"])
    frame = fb.led_frame(scene, topple, 10.2)
    assert len(frame) == topple.led_count == 24
    assert lit(frame) == {**{i: WHITE for i in leds(topple, *cells)}, **{i: BLUE for i in turn}}
    assert lit(fb.led_frame(scene, topple, 10.75)) == {  # fading out
        **{i: scaled(WHITE, 0.5) for i in leds(topple, *cells)}, **{i: BLUE for i in turn}}
    for t in (9.99, 11.0, 30.0):  # before the move, and once the confirmation is over
        assert set(lit(fb.led_frame(scene, topple, t))) == turn


def test_your_turn_is_the_movers_status_led_only(topple: Geometry) -> None:
    for player in range(4):
        frame = fb.led_frame(replace(PLAY, to_move=player), topple, 0.0)
        assert lit(frame) == {i: BLUE for i in topple.status_leds[f"p{player}"]}
    assert lit(fb.led_frame(replace(PLAY, to_move=None), topple, 0.0)) == {}


GUIDED = replace(PLAY, to_move=0, guidance_kind=GuidanceKind.MISMATCH,
                 fixes=(Fix("move", "Nui", "s6", "s2"), Fix("remove", "Kapu", "card"),
                        Fix("place", "Eepo", "s9")))


def test_guidance_first_fix_strong_in_two_patterns_others_dim(topple: Geometry) -> None:
    """One piece at a time: take off s6 (orange fast), put on s2 (blue slow); the card pad and
    s9 still differ (dim orange, steady)."""
    s6, s2, rest = leds(topple, "s6"), leds(topple, "s2"), leds(topple, "card", "s9")
    dim = scaled(ORANGE, DIM)
    turn = {i: BLUE for i in topple.status_leds["p0"]}
    expected = {
        0.1: {**dict.fromkeys(s6, ORANGE), **dict.fromkeys(s2, BLUE)},
        0.3: dict.fromkeys(s2, BLUE),                      # fast blink off, slow still on
        0.9: dict.fromkeys(s6, ORANGE),                    # fast on again, slow off
        1.1: {},
    }
    for t, strong in expected.items():
        assert lit(fb.led_frame(GUIDED, topple, t)) == {
            **strong, **dict.fromkeys(rest, dim), **turn}, t


def test_follow_up_remove_is_a_double_pulse(tactiki: Geometry) -> None:
    scene = Scene(phase=Phase.PLAY, game="tactiki", to_move=1, guidance_kind=GuidanceKind.FOLLOW_UP,
                  fixes=(Fix("remove", "C4", "c3"), Fix("remove", "C1", "d3")))
    c3, d3 = leds(tactiki, "c3"), leds(tactiki, "d3")
    for t, on in ((0.1, True), (0.2, False), (0.35, True), (0.5, False), (1.5, True)):
        frame = fb.led_frame(scene, tactiki, t)
        assert {frame[i] for i in c3} == {BLUE if on else OFF}, t
        assert {frame[i] for i in d3} == {scaled(ORANGE, DIM)}


def test_a_wrong_move_remove_is_fast_orange_and_unknown_tags_double_orange(
        topple: Geometry) -> None:
    mismatch = GuidanceKind.MISMATCH
    extra = replace(PLAY, guidance_kind=mismatch, fixes=(Fix("remove", "Nui", "s1"),))
    unknown = replace(PLAY, guidance_kind=mismatch, fixes=(Fix("unknown", "04ab", "s1"),))
    s1 = sorted(leds(topple, "s1"))
    extra_levels = [fb.led_frame(extra, topple, t)[s1[0]] for t in (0.1, 0.25, 0.45, 0.65)]
    unknown_levels = [fb.led_frame(unknown, topple, t)[s1[0]] for t in (0.1, 0.25, 0.45, 0.65)]
    assert extra_levels == [ORANGE, OFF, ORANGE, OFF]
    assert unknown_levels == [ORANGE, OFF, OFF, OFF]


def test_a_question_breathes_blue_on_its_cells(topple: Geometry) -> None:
    scene = render_docs.SCREENS["prompt-ambiguous"]
    cells = leds(topple, "s8", "s9")
    low, high = fb.led_frame(scene, topple, 0.0), fb.led_frame(scene, topple, 1.2)
    assert {low[i] for i in cells} == {scaled(BLUE, 2 / 16)}
    assert {high[i] for i in cells} == {BLUE}
    assert set(lit(high)) == cells | set(topple.status_leds["p0"])


def test_takeback_blinks_white_and_wins_over_guidance(topple: Geometry) -> None:
    scene = replace(GUIDED, takeback=("s6", "s2"))
    on, off = fb.led_frame(scene, topple, 0.1), fb.led_frame(scene, topple, 0.7)
    assert {on[i] for i in leds(topple, "s6", "s2")} == {WHITE}
    assert {off[i] for i in leds(topple, "s6", "s2")} == {OFF}
    assert {on[i] for i in leds(topple, "card", "s9")} == {scaled(ORANGE, DIM)}


def test_link_down_darkens_the_cells_and_breathes_every_status_led(topple: Geometry) -> None:
    scene = replace(GUIDED, phase=Phase.OFFLINE, confirmed=("s1",), confirmed_at=0.0)
    status = {i for group in topple.status_leds.values() for i in group}
    frame = fb.led_frame(scene, topple, 1.2)
    assert lit(frame) == dict.fromkeys(status, WHITE)
    assert {fb.led_frame(scene, topple, 0.0)[i] for i in status} == {scaled(WHITE, 2 / 16)}


def test_store_error_never_confirms_but_still_guides(topple: Geometry) -> None:
    scene = replace(GUIDED, phase=Phase.ERROR, store_error="disk I/O error",
                    confirmed=("s1",), confirmed_at=0.0)
    status = {i for group in topple.status_leds.values() for i in group}
    on, off = fb.led_frame(scene, topple, 0.1), fb.led_frame(scene, topple, 0.3)
    assert {on[i] for i in status} == {WHITE} and {off[i] for i in status} == {OFF}
    assert {on[i] for i in leds(topple, "s1")} == {OFF}  # not confirmed
    assert {on[i] for i in leds(topple, "s6")} == {ORANGE}


def test_game_over_lights_the_winners(topple: Geometry) -> None:
    scene = replace(PLAY, phase=Phase.OVER, winners=(0, 2), to_move=None)
    assert lit(fb.led_frame(scene, topple, 5.0)) == {
        i: WHITE for g in ("p0", "p2") for i in topple.status_leds[g]}


def test_unknown_cells_are_ignored_and_menu_is_dark(topple: Geometry) -> None:
    scene = replace(PLAY, confirmed=("z9",), confirmed_at=0.0,
                    fixes=(Fix("remove", "x", "nowhere"),), guidance_kind=GuidanceKind.MISMATCH)
    assert set(lit(fb.led_frame(scene, topple, 0.1))) == set(topple.status_leds["p1"])
    assert lit(fb.led_frame(replace(GUIDED, phase=Phase.MENU), topple, 0.1)) == {}


@pytest.mark.parametrize("board", ["topple", "manami", "tactiki"])
def test_frames_fit_every_board_and_repeat_exactly(board: str) -> None:
    geometry = load_geometry(board)
    for name, scene in render_docs.SCREENS.items():
        for t in (0.0, 0.33, 1.7):
            frame = fb.led_frame(scene, geometry, t)
            assert len(frame) == geometry.led_count, name
            assert all(0 <= v <= 255 and isinstance(v, int) for c in frame for v in c)
            assert frame == fb.led_frame(scene, geometry, t)


def test_next_change_is_when_the_frame_changes(topple: Geometry) -> None:
    assert fb.next_change(PLAY, topple, 3.0) is None  # steady: sleep until the scene changes
    confirmed = replace(PLAY, confirmed=("s1",), confirmed_at=3.0)
    assert fb.next_change(confirmed, topple, 3.1) == pytest.approx(3.5)
    assert fb.next_change(confirmed, topple, 5.0) is None
    smooth = render_docs.SCREENS["prompt-ambiguous"]  # breathing: redrawn every step
    assert fb.next_change(smooth, topple, 3.0) == pytest.approx(3.0 + fb.STEP_S)
    for scene in (GUIDED, replace(GUIDED, fixes=GUIDED.fixes[:1],
                                  guidance_kind=GuidanceKind.FOLLOW_UP)):
        t = 3.02
        for _ in range(30):
            nxt = fb.next_change(scene, topple, t)
            if nxt is None:
                break
            assert nxt > t
            frame = fb.led_frame(scene, topple, t)
            for k in range(1, 5):  # nothing changes before the announced time
                assert fb.led_frame(scene, topple, t + (nxt - t) * k / 5 - 1e-6) == frame
            t = nxt


# -- helpers --------------------------------------------------------------------------------------
def test_changed_cells_counts_absent_cells_as_empty() -> None:
    before = {"a1": ("T1",), "b1": (), "c1": ("T2", "T3")}
    after = {"a1": (), "c1": ("T2", "T3"), "d1": ("T1",)}
    assert fb.changed_cells(before, after) == ("a1", "d1")
    assert fb.changed_cells(before, before) == ()


def test_option_cells_of_a_topple_ambiguity() -> None:
    state = TOPPLE.new_game(random.Random(1))
    assert fb.option_cells(TOPPLE, state, ["up1 Kapu", "topple Eepo", "nonsense"]) == \
        ("s8", "s9")


def test_scene_rejects_unknown_phases_and_kinds() -> None:
    with pytest.raises(ValueError, match="phase"):
        Scene(phase="playing")  # type: ignore[arg-type]  # an untyped caller
    with pytest.raises(ValueError, match="guidance"):
        Scene(guidance_kind="oops")  # type: ignore[arg-type]  # an untyped caller


# -- screens --------------------------------------------------------------------------------------
def find(image: Image.Image, mask: Image.Image, fill: int = 1) -> bool:
    """True when ``mask`` appears in ``image`` exactly (ink ``fill`` on the other colour)."""
    want = mask if fill else ImageChops.invert(mask.convert("L")).convert("1")
    target = want.tobytes()
    for y in range(image.height - want.height + 1):
        for x in range(image.width - want.width + 1):
            if image.crop((x, y, x + want.width, y + want.height)).tobytes() == target:
                return True
    return False


@pytest.mark.parametrize("name", list(render_docs.SCREENS))
def test_screens_match_their_reference_pictures(name: str) -> None:
    image = fb.screen(render_docs.SCREENS[name])
    assert image.mode == "1" and image.size == (128, 64)
    reference = Image.open(REFERENCES / f"oled-{name}.png")
    assert reference.mode == "1" and reference.size == image.size
    assert image.tobytes() == reference.tobytes(), f"screen {name} changed; if on purpose: " \
        f"{REGENERATE}"


def test_every_phase_has_its_screen() -> None:
    names = {fb.screen_name(scene) for scene in render_docs.SCREENS.values()}
    assert names == {"menu", "setup", "play", "prompt", "guidance", "takeback", "over",
                     "offline", "store-error", "error"}


def test_guidance_says_the_first_fix_in_words() -> None:
    scene = replace(PLAY, guidance_kind=GuidanceKind.MISMATCH,
                    fixes=(Fix("remove", "T3", "c4"), Fix("place", "T3", "c5")))
    image = fb.screen(scene)
    assert find(image, fb.text_mask("Remove T3"))
    assert find(image, fb.text_mask("from c4", 2))
    assert find(image, fb.text_mask("then 1 more"))
    assert find(image, fb.text_mask("Fix the board"), fill=0)  # in the inverted header


def test_play_offline_and_store_error_texts() -> None:
    play = fb.screen(replace(PLAY, last_move="up2 Nani"))
    assert find(play, fb.text_mask("P2 to move", 2)) and find(play, fb.text_mask("up2 Nani"))
    offline = fb.screen(replace(PLAY, phase=Phase.OFFLINE))
    assert find(offline, fb.text_mask("Sensors", 2)) and find(offline, fb.text_mask("unplugged", 2))
    assert find(offline, fb.text_mask("reconnecting..."))
    stored = fb.screen(replace(PLAY, phase=Phase.ERROR, store_error="disk full"))
    assert find(stored, fb.text_mask("Cannot save moves"), fill=0)
    assert find(stored, fb.text_mask("storage", 2))


def _row_inverted(image: Image.Image, row: int) -> bool:
    """Option row ``row`` (0-based) of a question screen is drawn inverted (white bar)."""
    y = 13 + row * 13
    return all(image.getpixel((x, yy)) for x in (0, 1, 126, 127) for yy in range(y, y + 11))


@pytest.mark.parametrize("selected", [0, 1, 2, 3, 4])
def test_the_selected_option_row_is_inverted(selected: int) -> None:
    options = ("up1 Kapu", "topple Eepo", "up2 Nui", "up3 Nani", "toast Kapu")
    scene = replace(PLAY, phase=Phase.PROMPT,
                    prompt=Prompt(0.0, PromptKind.AMBIGUOUS, options, selected))
    image = fb.screen(scene)
    visible = min(max(selected - 1, 0), len(options) - 3)  # three rows, scrolled to show it
    rows = [_row_inverted(image, r) for r in range(3)]
    assert rows == [visible + r == selected for r in range(3)]
    assert find(image, fb.text_mask(options[selected]), fill=0)


def test_the_menu_marks_the_chosen_game() -> None:
    image = fb.screen(Scene(phase=Phase.MENU, game="topple", menu_game="tactiki"))
    assert [_row_inverted(image, r) for r in range(3)] == [False, False, True]
    assert find(image, fb.text_mask("TacTiki"), fill=0)


def test_button_legends_fit_and_name_the_buttons() -> None:
    for kind in set(PromptKind) - {PromptKind.ORDER}:  # (ORDER has a screen of its own)
        scene = replace(PLAY, phase=Phase.PROMPT, prompt=Prompt(0.0, kind, ("a", "b")))
        image = fb.screen(scene)
        assert find(image, fb.text_mask("OK"), fill=0)
    takeback = fb.screen(replace(PLAY, phase=Phase.PROMPT,
                                 prompt=Prompt(0.0, PromptKind.TAKEBACK, ("take back 1 move(s)",))))
    assert find(takeback, fb.text_mask("BACK"), fill=0) and find(takeback, fb.text_mask("yes"))


texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=60)


@settings(max_examples=40, deadline=None)
@given(phase=st.sampled_from(fb.PHASES), title=texts, message=texts, board=texts,
       options=st.lists(texts, max_size=6), selected=st.integers(-2, 8),
       scores=st.lists(st.integers(-5, 1000), max_size=4), to_move=st.none() | st.integers(0, 5),
       piece=texts, store_error=texts)
def test_any_scene_renders(phase: Phase, title: str, message: str, board: str,
                           options: list[str], selected: int, scores: list[int],
                           to_move: int | None, piece: str, store_error: str) -> None:
    """Long names, odd characters and out-of-range numbers never break a screen."""
    scene = Scene(phase=phase, title=title, message=message, board=board,
                  scores=tuple(scores), to_move=to_move, winners=tuple(range(len(scores))),
                  prompt=(Prompt(0.0, PromptKind.AMBIGUOUS, tuple(options), selected)
                          if options else None),
                  fixes=(Fix("move", piece, "s1", "s2"),) if piece else (),
                  guidance_kind=GuidanceKind.MISMATCH, store_error=store_error,
                  link_detail=message)
    image = fb.screen(scene)
    assert image.size == (128, 64) and image.mode == "1"


# -- docs -----------------------------------------------------------------------------------------
def test_docs_pictures_are_current(tmp_path: Path) -> None:
    render_docs.render(tmp_path)
    fresh = sorted(p.name for p in tmp_path.iterdir())
    assert fresh == sorted(p.name for p in (DOCS / "images").glob("*.png")
                           if p.name.startswith(("oled-", "leds-")))
    for name in fresh:
        new, old = Image.open(tmp_path / name), Image.open(DOCS / "images" / name)
        assert new.size == old.size and new.tobytes() == old.convert(new.mode).tobytes(), \
            f"docs/images/{name} is stale: {REGENERATE}"


def test_docs_show_every_screen_and_name_every_signal() -> None:
    text = (DOCS / "feedback.md").read_text(encoding="utf-8")
    for name in render_docs.SCREENS:
        assert f"images/oled-{name}.png" in text, name
    for name in render_docs.BOARDS:
        assert f"images/leds-{name}.png" in text, name
    for signal in fb.SIGNALS.values():
        assert f"| {signal.label} |" in text, signal.label
