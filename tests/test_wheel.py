"""The wheel is what a station installs: built from the sources, installed in a fresh virtual
environment that cannot see the checkout, it must run the demo, the simulated-board diag and the
bundled records. A module that reads its data from the checkout (``parents[2] / "hardware"``) or
imports the firmware through a search-path trick passes every other test and fails here.

The engines need no library: in a second fresh venv with the wheel installed without its
dependencies, ``replay`` and ``examples`` must work, so nothing on their path imports serial,
imaging, GPIO or network code; anything else says in one line what is missing.

Fast and offline: the build uses the project venv's setuptools (no build isolation), the fresh
venvs have no pip (the project venv's pip installs into them), and the station's libraries come
from the project venv through a ``.pth`` line, so only ``pi_app`` and ``tikifw`` are the wheel's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

from pi_app.records import load_record, replay

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "pi_app" / "data").glob("*-example.tiki.json"))


class Installed:
    """A fresh venv with the built wheel in it; commands run away from the checkout."""

    def __init__(self, venv: Path, cwd: Path) -> None:
        self.venv, self.cwd = venv, cwd
        # No PYTHONPATH or the like: nothing but the venv decides what is imported.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=self.cwd, env=self.env, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def tikiboard(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.venv / "bin" / "tikiboard"), *args, timeout=timeout)


def _copy_sources(dest: Path) -> None:
    """The files the build reads, copied so that building leaves no build/ in the checkout."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "pi_app", dest / "pi_app", ignore=ignore)
    shutil.copytree(ROOT / "firmware" / "tikifw", dest / "firmware" / "tikifw", ignore=ignore)


PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    src, dist = work / "src", work / "dist"
    src.mkdir()
    _copy_sources(src)
    build = subprocess.run([*PIP, "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "-w", str(dist), str(src)],
                           capture_output=True, text=True, timeout=120, check=False)
    assert build.returncode == 0, build.stderr
    wheels = list(dist.glob("tikiboard-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _venv_with(wheel: Path, where: Path) -> tuple[Path, Path]:
    """A fresh venv (no system site-packages) holding only the wheel; (venv, its purelib)."""
    venv, cwd = where / "venv", where / "elsewhere"
    cwd.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=60)
    python = venv / "bin" / "python"
    install = subprocess.run([*PIP, "--python", str(python), "install", "--no-deps",
                              "--no-index", str(wheel)],
                             capture_output=True, text=True, timeout=120, check=False)
    assert install.returncode == 0, install.stderr
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=30).stdout.strip())
    return venv, site


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel with the station's libraries (from the project venv)."""
    venv, site = _venv_with(wheel, tmp_path_factory.mktemp("station"))
    # A path line in a .pth does not run that venv's own .pth files, so its editable pi_app
    # finder stays off.
    (site / "project-libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return Installed(venv, venv.parent / "elsewhere")


@pytest.fixture(scope="module")
def engines_only(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel and nothing else: no pyserial, Pillow, gpiozero, luma, paho, starlette."""
    venv, _site = _venv_with(wheel, tmp_path_factory.mktemp("engines"))
    return Installed(venv, venv.parent / "elsewhere")


def test_a_plain_install_brings_what_every_command_needs(wheel: Path) -> None:
    """Issue 31: ``pip install tikiboard-*.whl`` runs the demo, the station page and the
    referee; only the Pi's own drivers are an extra, behind platform markers."""
    with zipfile.ZipFile(wheel) as whl:
        name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        meta = HeaderParser().parsestr(whl.read(name).decode())
    requires = meta.get_all("Requires-Dist") or []
    plain = {r.split(">")[0].split(";")[0].strip().lower() for r in requires if "extra ==" not in r}
    assert {"pillow", "pyserial", "gpiozero", "luma.oled", "paho-mqtt", "starlette", "uvicorn",
            "networkx", "segno", "tomlkit"} <= plain, plain
    pi = [r for r in requires if 'extra == "pi"' in r]
    assert pi and all("platform_machine" in r for r in pi), pi
    assert set(meta.get_all("Provides-Extra") or []) == {"station", "net", "pi", "test"}


def test_a_missing_library_is_one_line_not_a_traceback(engines_only: Installed) -> None:
    """The wheel installed without its dependencies: the demo says what is missing and how to
    get it, in one line."""
    demo = engines_only.tikiboard("demo", "--turns", "1")
    assert demo.returncode == 2
    assert "Traceback" not in demo.stderr
    lines = demo.stderr.strip().splitlines()
    assert len(lines) == 1 and "library, which a plain install brings" in lines[0], lines


def test_the_wheel_ships_only_what_runs(wheel: Path) -> None:
    """Benches and the docs' picture renderer stay in the checkout (``tools/``): a Pi installs
    the station, not the developers' instruments."""
    with zipfile.ZipFile(wheel) as whl:
        tops = {n.split("/")[0] for n in whl.namelist()}
        names = whl.namelist()
    assert not [t for t in tops if t == "tools" or t.startswith("tests")], tops
    assert not [n for n in names if "/bench/" in n or n.endswith("render_docs.py")], names


def test_the_wheel_alone_provides_the_packages(installed: Installed) -> None:
    probe = installed.run(str(installed.venv / "bin" / "python"), "-c", (
        "import json, sys, pi_app, tikifw.scanner; from importlib import resources as r; "
        "print(json.dumps({'pi_app': pi_app.__file__, 'tikifw': tikifw.scanner.__file__, "
        "'typed': r.files('pi_app').joinpath('py.typed').is_file(), 'path': sys.path}))"))
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    venv = str(installed.venv.resolve())
    assert found["pi_app"].startswith(venv) and found["tikifw"].startswith(venv)
    assert found["typed"]
    checkout = {ROOT, ROOT / "firmware"}
    assert not [p for p in found["path"] if (installed.cwd / p).resolve() in checkout]


def test_the_demo_runs_from_the_wheel(installed: Installed) -> None:
    demo = installed.tikiboard("demo", "--turns", "3")
    assert demo.returncode == 0, demo.stderr
    assert "Traceback" not in demo.stderr
    assert "moves accepted" in demo.stdout
    assert "moves accepted 0 of" not in demo.stdout


def test_diag_on_the_simulated_board_runs_from_the_wheel(installed: Installed) -> None:
    """The shipped pin map, a shipped board and the firmware's own scanner, all from the wheel."""
    diag = installed.tikiboard("diag", "--sim", "--game", "tactiki", "--seconds", "0.5", "--json")
    assert diag.returncode == 0, diag.stderr
    report = json.loads(diag.stdout.splitlines()[-1])
    assert report["link_up"] and report["selftest"]["ok"]
    assert len(report["cells"]) == 25


@pytest.mark.parametrize("venv", ["installed", "engines_only"])
@pytest.mark.parametrize("record", EXAMPLES, ids=lambda p: p.name.split("-")[0])
def test_replay_from_the_wheel_matches_the_checkout(venv: str, record: Path,
                                                    request: pytest.FixtureRequest) -> None:
    """The wheel replays each example as the checkout does, also with no library at all
    (``engines_only``: replay needs no serial, imaging or network package)."""
    installed: Installed = request.getfixturevalue(venv)
    run = installed.tikiboard("replay", "--json", str(record))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == replay(load_record(record)).to_json()


def test_examples_from_the_wheel(installed: Installed) -> None:
    run = installed.tikiboard("examples")
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("bundled example record") == len(EXAMPLES) == 3


def test_examples_need_no_library(engines_only: Installed) -> None:
    run = engines_only.tikiboard("examples")
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("bundled example record") == len(EXAMPLES)
    probe = engines_only.run(str(engines_only.venv / "bin" / "python"), "-c",
                             "import serial", timeout=30)
    assert probe.returncode != 0, "the engines-only venv is meant to lack pyserial"
