"""Every document the repository cites is in the repository.

The design notes once lived outside the checkout (a user of the repository never had them), so a
citation such as ``RECORDS.md`` or ``research/hardware.md §1.3`` led nowhere. These tests read
the project's own texts and fail on a relative link or a cited ``.md`` file that is not in the
tree, and on any citation of the old out-of-tree places. Plain file reads: well under a second.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The texts that cite documents: the READMEs and docs, the rules pages, the code's docstrings and
#: comments, the firmware, the data files that carry an "about" text, and the tests.
PATTERNS = ("README.md", "docs/*.md", "hardware/*.md", "seeds/*.md", "firmware/**/*.md",
            "firmware/**/*.py", "pi_app/**/*.py", "pi_app/**/*.md", "pi_app/data/*.json",
            "tests/*.py")

#: ``[text](target)`` and ``![alt](target)`` in Markdown.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
#: A cited Markdown file: a path or a bare name ending in ``.md``.
CITED_MD = re.compile(r"(?<![\w./-])((?:\.\./|[\w-]+/)*[\w-]+\.md)\b")
#: Any path under docs/ (a page, an image, a results file).
CITED_DOCS = re.compile(r"(?<![\w.-])(docs/[\w./-]*[\w-])")
#: The places the notes lived before they moved into docs/.
OLD_PLACES = re.compile(r"/work/shared|\bshared/(?:seeds|research)\b|\bresearch/|"
                        r"\b(?:RECORDS|DESIGN)\.md\b|(?<![\w-])(?:hardware|rules|stack|anchors)"
                        r"\.md\b")


def _texts() -> list[Path]:
    files = {p for pattern in PATTERNS for p in ROOT.glob(pattern) if p.is_file()}
    files.discard(Path(__file__).resolve())
    return sorted(files)


def _where(path: Path, text: str, index: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, index) + 1}"


def _exists(path: Path, target: str) -> bool:
    """A cited path resolves from the citing file's folder or from the repository's root; a
    bare name (``BOM.md``, ``PROTOCOL.md``) names one of the repository's documents."""
    if "/" not in target and target in MD_NAMES:
        return True
    return (path.parent / target).exists() or (ROOT / target).exists()


TEXTS = _texts()
MD_NAMES = {p.name for p in TEXTS if p.suffix == ".md"}


def test_there_are_texts_to_check() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in TEXTS}
    assert {"README.md", "docs/records.md", "docs/design.md", "docs/hardware-notes.md",
            "seeds/tiki-topple.md", "pi_app/records.py"} <= names


@pytest.mark.parametrize("path", [p for p in TEXTS if p.suffix == ".md"],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1).split("#", 1)[0]
        if not target or re.match(r"[a-z]+:", target):  # an anchor, http:, mailto:...
            continue
        if not (path.parent / target).exists():
            broken.append(f"{_where(path, text, match.start())}: {match.group(1)}")
    assert not broken, "links to files that are not in the repository:\n" + "\n".join(broken)


def test_cited_files_are_in_the_repository() -> None:
    missing = []
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        for pattern in (CITED_MD, CITED_DOCS):
            for match in pattern.finditer(text):
                target = match.group(1)
                if not _exists(path, target) and not _exists(path, target.rstrip(".")):
                    missing.append(f"{_where(path, text, match.start())}: {target}")
    assert not missing, "cited files that are not in the repository:\n" + "\n".join(missing)


def test_nothing_cites_the_old_notes() -> None:
    """The notes are docs/records.md, docs/design.md, docs/hardware-notes.md and
    docs/rules-sources.md; nothing points outside the checkout any more."""
    old = []
    for path in TEXTS:
        text = path.read_text(encoding="utf-8")
        old += [f"{_where(path, text, m.start())}: {m.group(0)}"
                for m in OLD_PLACES.finditer(text)]
    assert not old, "citations of notes outside the repository:\n" + "\n".join(old)


def test_the_records_contract_names_every_field_and_exit_status() -> None:
    """docs/records.md is what held-out replay cases are checked against: it keeps every part
    of the contract (a page rewritten without one of these is caught here)."""
    text = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    for needle in ('"ok"', '"error"', '"finished"', '"scores"', '"winner"', '"state"',
                   "`round`", "`move`", "`text`", "`reason`", "| 0 |", "| 1 |", "| 2 |",
                   "`line`", "`cards`", "`first`", "`rounds`", "`toast`", "`villages`",
                   "`place X`", "`resolve X Y`", "`shaman X/Y`", "`shaman stay`", "`pass`",
                   "`setup`", "`reincarnate RANK FIELD`", '"players"', "extension"):
        assert needle in text, needle
