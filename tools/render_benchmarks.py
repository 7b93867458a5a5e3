"""``docs/benchmarks.md`` from the benchmark results in ``docs/*.json``.

The README once carried every figure by hand, round after round, until the numbers and the
commits they were measured at outgrew the page and nobody could tell which table was current.
The figures now live only in the JSON files the benches print (``tools/bench/``), and this
script writes the one page that shows them: ``python -m tools.render_benchmarks`` rewrites
``docs/benchmarks.md``, ``--check`` exits 1 when the page and the JSON files disagree
(``tests/test_benchmarks_doc.py`` runs that check, so a results file committed without the page,
or a page edited by hand, fails the suite). Output depends only on the JSON files: run it twice,
get the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
OUT = DOCS / "benchmarks.md"

#: The results shown first, newest and most complete; every other JSON file in docs/ follows
#: in name order under "Earlier runs" (the history of how they came about: CHANGELOG.md).
CURRENT = (
    "bench-results.json",
    "tournament-500.json",
    "accuracy-varied-10k-noise-levels.json",
    "longsoak-results.json",
    "longsoak-bots-results.json",
    "soak-results.json",
    "bots-results.json",
    "bots-tactiki-pi-budget.json",
)

#: Keys a reader scans a row for, in column order, with their headings. A table of rows that
#: have at least three of them shows only these (a row holds 30-odd figures; the JSON has all).
HEADLINE: tuple[tuple[str, str], ...] = (
    ("game", "game"),
    ("players", "players"),
    ("level", "level"),
    ("opponent", "opponent"),
    ("games", "games"),
    ("finished", "finished"),
    ("wins", "wins"),
    ("draws", "draws"),
    ("losses", "losses"),
    ("score", "score"),
    ("moves_made", "moves"),
    ("followed", "followed"),
    ("lost", "lost"),
    ("phantom", "phantom"),
    ("missed", "missed"),
    ("revised", "revised"),
    ("illegal_made", "illegal made"),
    ("illegal_reported", "illegal reported"),
    ("prompts", "questions"),
    ("rest_to_accept_s.p50", "rest→accept p50 s"),
    ("rest_to_accept_s.p95", "rest→accept p95 s"),
    ("rest_to_accept_s.clear_share", "clear share"),
    ("rest_to_accept_s.clear_p95", "clear p95 s"),
    ("restarts", "restarts"),
    ("restart_losses", "restart losses"),
    ("record_mismatches", "record mismatches"),
    ("crashes", "crashes"),
    ("games_per_s", "games/s"),
    ("moves_generated_and_applied_per_s", "moves generated+applied/s"),
    ("seconds_per_decision.p50", "decision p50 s"),
    ("seconds_per_decision.p95", "decision p95 s"),
)

#: Lists too long for a page (the bots' pooled pieces): counted, not drawn.
COUNTED_ONLY = frozenset({"parts", "bad_tables", "unreported_tables", "bad_games"})
#: A string longer than this is prose (a note), shown as a paragraph, not a table cell.
PROSE = 100


def _number(value: float) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return format(value, ",.6g")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, list):
        return ", ".join(_cell(v) for v in value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def _scalar(value: Any) -> bool:
    if isinstance(value, list):
        return all(_scalar(v) and not isinstance(v, list) for v in value) and len(value) <= 4
    return (
        value is None
        or isinstance(value, bool | int | float)
        or (isinstance(value, str) and len(value) <= PROSE)
    )


def _leaves(row: Mapping[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """A row's figures as dotted keys, two levels deep (``rest_to_accept_s.p50``)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, Mapping) and depth < 1:
            out.update(_leaves(value, f"{prefix}{key}.", depth + 1))
        elif _scalar(value) and key not in COUNTED_ONLY:
            out[f"{prefix}{key}"] = value
    return out


def _table(rows: Sequence[tuple[str, Mapping[str, Any]]], first: str) -> list[str]:
    """A Markdown table, one row per (label, figures); the headline columns when they fit."""
    flat = [(label, _leaves(row)) for label, row in rows]
    present: list[str] = []
    for _label, leaves in flat:
        present += [k for k in leaves if k not in present]
    headline = [(k, h) for k, h in HEADLINE if k in present]
    columns = headline if len(headline) >= 3 else [(k, k) for k in present]
    if first:
        columns = [(k, h) for k, h in columns if k != first]
    head = ([first] if first else []) + [h for _k, h in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, leaves in flat:
        cells = ([label] if first else []) + [_cell(leaves.get(k)) for k, _h in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _depth(value: Any) -> int:
    if isinstance(value, Mapping) and value:
        return 1 + max(_depth(v) for v in value.values())
    return 0


def _is_rows(value: Any) -> bool:
    """A mapping of rows: each a mapping of figures at most two levels deep (each game's
    figures with their percentiles). Deeper children are sections of their own."""
    return (
        isinstance(value, Mapping)
        and bool(value)
        and all(
            isinstance(v, Mapping) and any(_scalar(x) for x in v.values()) and _depth(v) <= 2
            for v in value.values()
        )
    )


def _heading(level: int, text: str) -> str:
    """A heading, or past Markdown's six levels a bold line."""
    return f"{'#' * level} {text}" if level <= 6 else f"**{text}**"


def _section(data: Mapping[str, Any], level: int) -> list[str]:
    out: list[str] = []
    facts = [(k, v) for k, v in data.items() if _scalar(v) and k not in ("benchmark", "bench")]
    prose = [(k, v) for k, v in data.items() if isinstance(v, str) and len(v) > PROSE]
    if facts:
        out += [f"- {k}: {_cell(v)}" for k, v in facts] + [""]
    out += [f"*{k}*: {v}\n" for k, v in prose]
    for key, value in data.items():
        if key in COUNTED_ONLY and isinstance(value, list):
            if value:
                out += [f"- {key}: {len(value)} (listed in the JSON file)", ""]
            continue
        if _scalar(value) or isinstance(value, str):
            continue
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            out += [_heading(level, key), "", *_table([("", v) for v in value], ""), ""]
        elif _is_rows(value):
            label = "game" if key == "figures" else key
            out += [_heading(level, key), "", *_table(list(value.items()), label), ""]
        elif isinstance(value, Mapping):
            out += [_heading(level, key), "", *_section(value, level + 1)]
    return out


def _title(name: str) -> str:
    return name.removesuffix(".json")


def render(files: Iterable[Path]) -> str:
    """The page for these results files, in :data:`CURRENT` order, then by name."""
    by_name = {p.name: p for p in files}
    current = [n for n in CURRENT if n in by_name]
    earlier = sorted(n for n in by_name if n not in CURRENT)
    out = [
        "# Benchmark results",
        "",
        "Written by `python -m tools.render_benchmarks` from the JSON files in this folder; do not",
        "edit by hand (`tests/test_benchmarks_doc.py` fails when the two disagree). Each file is",
        "what a bench in `tools/bench/` printed, with its command, commit and machine where the",
        "run recorded them. How the figures came about, round by round:",
        "[CHANGELOG.md](../CHANGELOG.md).",
        "",
        "Machine for all runs: the development machine (x86-64, 2 cores shared with other work,",
        "Python 3.11) unless a file says otherwise. *phantom*: a move the station took that",
        "nobody made; *missed*: a move made and never taken; *questions*: answers the station",
        "asked the players for; *rest→accept*: seconds from the pieces coming to rest to the",
        "station accepting the move; *clear*: moves no other legal move could be mistaken for.",
        "",
        "Contents: " + ", ".join(f"[{_title(n)}](#{_title(n)})" for n in current + earlier),
        "",
    ]
    for group, names in (("Current", current), ("Earlier runs", earlier)):
        if not names:
            continue
        out += [f"## {group}", ""]
        for name in names:
            data = json.loads(by_name[name].read_text(encoding="utf-8"))
            out += [
                f'<a id="{_title(name)}"></a>',
                "",
                f"### {_title(name)}",
                "",
                f"From [{name}]({name}).",
                "",
            ]
            out += _section(data, 4)
    text = "\n".join(out)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"


def results_files(folder: Path = DOCS) -> list[Path]:
    """Every results file in ``folder``: the JSON files a bench wrote."""
    return sorted(folder.glob("*.json"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if docs/benchmarks.md is not what the JSON files give",
    )
    args = parser.parse_args(argv)
    text = render(results_files())
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(
                "docs/benchmarks.md is out of date: python -m tools.render_benchmarks",
                file=sys.stderr,
            )
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
