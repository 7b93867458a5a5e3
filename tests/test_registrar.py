"""Tag registration: one new tag at a time becomes the named piece; known tags stay theirs."""

from __future__ import annotations

from pathlib import Path

from pi_app.board.registrar import Registrar
from pi_app.board.registry import TagRegistry
from pi_app.readings import Snapshot, TagsSeen


def test_registers_one_new_tag_per_piece_and_persists(tmp_path: Path) -> None:
    registry = TagRegistry(path=tmp_path / "tags.json")
    registrar = Registrar(registry, ["p0", "p0", "Nani"])
    assert registrar.waiting_for == "p0"
    assert registrar.feed(TagsSeen(0.1, 2, frozenset({"04AA000000000001"}))) == [
        "registered tag 04AA000000000001 as p0"]
    # Two new tags at once cannot be told apart.
    out = registrar.feed(TagsSeen(0.2, 3, frozenset({"04AA000000000002", "04AA000000000003"})))
    assert "2 new tags at once" in out[0] and registrar.waiting_for == "p0"
    registrar.feed(TagsSeen(0.3, 4, frozenset({"04AA000000000004"})))
    # A known tag is refused unless replacing.
    out = registrar.feed(TagsSeen(0.4, 5, frozenset({"04AA000000000001"})))
    assert "already p0" in out[0]
    registrar.feed(Snapshot(0.5, (frozenset(),) * 6 + (frozenset({"04AA000000000005"}),),
                            ()))
    assert registrar.waiting_for is None
    loaded = TagRegistry.load(tmp_path / "tags.json")
    assert loaded.uids_of("p0") == ["04AA000000000001", "04AA000000000004"]
    assert loaded.lookup("04AA000000000005") == "Nani"


def test_unknown_and_malformed_registry_files(tmp_path: Path) -> None:
    import pytest

    from pi_app.board.registry import RegistryError, normalise_uid

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(RegistryError, match="not a readable tag registry"):
        TagRegistry.load(bad)
    bad.write_text('{"version": 1, "tags": {"zz": "Nani"}}')
    with pytest.raises(RegistryError, match="not a tag UID"):
        TagRegistry.load(bad)
    assert normalise_uid("04:a2:b3:c4") == "04A2B3C4"
    assert TagRegistry.load(tmp_path / "missing.json").lookup("04A2B3C4") is None
