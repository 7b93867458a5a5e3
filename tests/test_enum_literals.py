"""No StrEnum compared with a string literal (issue 32).

A ``StrEnum`` member equals its value, so ``phase == "setup"`` works until the value is
renamed, and then fails silently. This test finds each comparison (``==``, ``!=``, ``in``)
between a string literal that is the value of one of the package's StrEnums and a name or
attribute declared somewhere in the package with that enum's type (a dataclass field, a
parameter, an annotated variable). Names are matched by spelling, without type inference:
a name declared with an enum's type anywhere is read as that enum everywhere it is compared.
"""

from __future__ import annotations

import ast
import enum
import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pi_app

ROOT = Path(pi_app.__file__).parent


def str_enums() -> dict[str, type[enum.Enum]]:
    """Every StrEnum the package defines, by class name."""
    found: dict[str, type[enum.Enum]] = {}
    for info in pkgutil.walk_packages(pi_app.__path__, "pi_app."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # a Pi-only driver's module off the Pi
            continue
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, enum.Enum)
                    and issubclass(value, str) and value.__module__ == module.__name__):
                assert found.setdefault(value.__name__, value) is value, value.__name__
    return found


def declared(enums: dict[str, type[enum.Enum]]) -> dict[str, set[str]]:
    """Name or attribute -> the enums it is declared with somewhere in the package."""
    names: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.AnnAssign):
                target: ast.AST = node.target
                name = target.attr if isinstance(target, ast.Attribute) else getattr(
                    target, "id", None)
                annotation: ast.AST | None = node.annotation
            elif isinstance(node, ast.arg):
                name, annotation = node.arg, node.annotation
            else:
                continue
            if annotation is None or name is None:
                continue
            words = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
            words |= {n.attr for n in ast.walk(annotation) if isinstance(n, ast.Attribute)}
            words |= {n.value for n in ast.walk(annotation)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            for enum_name in words & enums.keys():
                names.setdefault(name, set()).add(enum_name)
    return names


def literal_comparisons(enums: dict[str, type[enum.Enum]]) -> Iterator[str]:
    names = declared(enums)
    values = {name: {str(m.value) for m in cls} for name, cls in enums.items()}
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            literals = [s.value for s in sides
                        if isinstance(s, ast.Constant) and isinstance(s.value, str)]
            for side in sides:
                if isinstance(side, (ast.Tuple, ast.Set, ast.List)):
                    literals += [e.value for e in side.elts
                                 if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            for side in sides:
                name = (side.attr if isinstance(side, ast.Attribute)
                        else side.id if isinstance(side, ast.Name) else None)
                for enum_name in names.get(name or "", ()):
                    for literal in literals:
                        if literal in values[enum_name]:
                            yield (f"{path.relative_to(ROOT.parent)}:{node.lineno}: {name} "
                                   f"compared with {literal!r} ({enum_name})")


def test_the_scan_finds_a_literal_comparison() -> None:
    """The scan itself can fail: it finds the pattern it forbids."""
    enums = str_enums()
    assert {"Phase", "PromptKind", "StationStatus"} <= enums.keys()
    assert "Phase" in declared(enums)["phase"]


def test_no_str_enum_is_compared_with_a_literal() -> None:
    found = list(literal_comparisons(str_enums()))
    assert found == [], "\n".join(found)
