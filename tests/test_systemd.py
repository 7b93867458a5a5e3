"""The service unit: systemd itself checks it, and its key settings are what the station needs.

``systemd-analyze`` must be installed (Debian: ``apt-get install -y systemd``); without it these
tests fail on purpose, since an unchecked unit is how a station stops booting unnoticed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "systemd" / "tikiboard.service"
SYSUSERS = ROOT / "systemd" / "tikiboard.sysusers"
EXEC = "/opt/tikiboard/.venv/bin/tikiboard"
INSTALL_HINT = "systemd-analyze is missing: install it with `apt-get install -y systemd`"


def _parse(path: Path) -> dict[str, dict[str, list[str]]]:
    """A unit file as section -> key -> every value (keys such as DeviceAllow= repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        assert current is not None, f"{path}: {raw!r} before any section"
        key, sep, value = line.partition("=")
        assert sep, f"{path}: {raw!r} is not KEY=VALUE"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def _analyze() -> str:
    tool = shutil.which("systemd-analyze")
    assert tool is not None, INSTALL_HINT
    return tool


def _testable_unit(tmp_path: Path) -> Path:
    """The unit with ExecStart pointing at this checkout's tikiboard (verify checks that the
    binary exists; /opt/tikiboard is where it lives on a station, not here)."""
    binary = Path(sys.executable).parent / "tikiboard"
    assert binary.exists(), f"{binary} is missing: run sh tests/bootstrap.sh"
    text = UNIT.read_text(encoding="utf-8")
    assert f"ExecStart={EXEC} " in text
    copy = tmp_path / "tikiboard.service"
    copy.write_text(text.replace(f"ExecStart={EXEC} ", f"ExecStart={binary} "),
                    encoding="utf-8")
    return copy


def test_systemd_analyze_is_installed() -> None:
    _analyze()


def test_systemd_verify_accepts_the_unit(tmp_path: Path) -> None:
    unit = _testable_unit(tmp_path)
    run = subprocess.run([_analyze(), "verify", "--man=no", str(unit)], capture_output=True,
                         text=True, timeout=60, check=False)
    # verify exits 0 even for unknown keys or bad values: any word about our unit is a failure.
    complaints = [line for line in (run.stdout + run.stderr).splitlines()
                  if "tikiboard" in line]
    assert run.returncode == 0 and not complaints, run.stdout + run.stderr


def test_hardening_exposure_stays_low(tmp_path: Path) -> None:
    """systemd's own hardening score (0 = locked down, 10 = wide open) stays at 2.0 or below."""
    unit = _testable_unit(tmp_path)
    run = subprocess.run([_analyze(), "security", "--offline=yes", "--threshold=20",
                          "--no-pager", str(unit)], capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr


def test_verify_would_catch_a_broken_unit(tmp_path: Path) -> None:
    """The check above is not vacuous: a misspelt key is reported."""
    unit = _testable_unit(tmp_path)
    unit.write_text(unit.read_text().replace("WatchdogSec=", "WatchdogSecs="))
    run = subprocess.run([_analyze(), "verify", "--man=no", str(unit)], capture_output=True,
                         text=True, timeout=60, check=False)
    assert "WatchdogSecs" in run.stdout + run.stderr


def test_key_settings() -> None:
    unit = _parse(UNIT)
    service = {key: values[-1] for key, values in unit["Service"].items()}
    assert service["Type"] == "notify"
    assert service["NotifyAccess"] == "main"
    assert 10 <= int(service["WatchdogSec"]) <= 120
    assert service["Restart"] == "on-failure"
    assert service["ExecStart"] == (f"{EXEC} run --config /etc/tikiboard/tikiboard.toml "
                                    "--first-boot")
    assert service["ReadWritePaths"] == "/etc/tikiboard"  # the set-up writes the file there
    assert service["User"] == "tikiboard"
    assert set(service["SupplementaryGroups"].split()) == {"gpio", "spi", "i2c", "dialout"}
    assert service["StateDirectory"] == "tikiboard"
    assert service["ConfigurationDirectory"] == "tikiboard"
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_resource_limits() -> None:
    """Memory, task and file limits with headroom over what the daemon was measured to use
    with the page and the publisher on (51 MB, 9 threads, 32 files: the unit's comment), and
    low enough that a leak or a flood ends in a restart before the Pi runs out."""
    service = {k: v[-1] for k, v in _parse(UNIT)["Service"].items()}
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    memory = service["MemoryMax"]
    size = int(memory[:-1]) * units[memory[-1]] if memory[-1] in units else int(memory)
    assert 4 * 51 * 2**20 <= size <= 2**30
    assert 4 * 9 <= int(service["TasksMax"]) <= 256
    assert 4 * 32 <= int(service["LimitNOFILE"]) <= 4096


def test_verify_would_catch_a_bad_limit(tmp_path: Path) -> None:
    """systemd itself parses the limits: a value it cannot read is reported."""
    unit = _testable_unit(tmp_path)
    unit.write_text(unit.read_text().replace("MemoryMax=256M", "MemoryMax=lots"))
    run = subprocess.run([_analyze(), "verify", "--man=no", str(unit)], capture_output=True,
                         text=True, timeout=60, check=False)
    assert "Invalid memory limit 'lots'" in run.stdout + run.stderr


def test_hardening_keys() -> None:
    service = _parse(UNIT)["Service"]
    last = {key: values[-1] for key, values in service.items()}
    for key in ("NoNewPrivileges", "ProtectHome", "PrivateTmp", "ProtectKernelTunables",
                "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
                "LockPersonality", "RestrictRealtime", "RestrictSUIDSGID",
                "MemoryDenyWriteExecute", "RestrictNamespaces"):
        assert last.get(key) == "yes", key
    assert last["ProtectSystem"] == "strict"
    assert last["CapabilityBoundingSet"] == ""
    assert last["SystemCallArchitectures"] == "native"
    assert set(last["RestrictAddressFamilies"].split()) == {"AF_UNIX", "AF_INET", "AF_INET6"}
    # The hardware must stay reachable: no private /dev, and each device class allowed.
    assert "PrivateDevices" not in service and "PrivateUsers" not in service
    assert last["DevicePolicy"] == "closed"
    allowed = {value.split()[0] for value in service["DeviceAllow"]}
    assert {"char-ttyACM", "char-gpiochip", "char-spi", "char-i2c"} <= allowed
    assert all(value.split()[1] == "rw" for value in service["DeviceAllow"])


def test_sysusers_creates_the_user_and_groups(tmp_path: Path) -> None:
    tool = shutil.which("systemd-sysusers")
    assert tool is not None, INSTALL_HINT.replace("systemd-analyze", "systemd-sysusers")
    (tmp_path / "etc").mkdir()
    run = subprocess.run([tool, f"--root={tmp_path}", str(SYSUSERS)], capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    passwd = {line.split(":")[0]: line.split(":")
              for line in (tmp_path / "etc" / "passwd").read_text().splitlines()}
    user = passwd["tikiboard"]
    assert int(user[2]) < 1000, "a system user"
    assert user[5] == "/var/lib/tikiboard" and user[6].endswith("nologin")
    members = {line.split(":")[0]: line.split(":")[3].split(",")
               for line in (tmp_path / "etc" / "group").read_text().splitlines()}
    for group in ("gpio", "spi", "i2c", "dialout"):
        assert "tikiboard" in members[group], group


MDWE_PROBE = textwrap.dedent("""
    import ctypes, sys
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN = 65, 1
    if libc.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0:
        print("no PR_SET_MDWE"); sys.exit(3)
    import mmap
    try:
        mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        print("W+X mapping was allowed: the probe proves nothing"); sys.exit(4)
    except OSError:
        pass
    # What the daemon does: asyncio, SQLite, Pillow, ctypes callbacks, the feedback renderer,
    # luma's dummy device and the recording LED strip.
    import asyncio, sqlite3
    asyncio.run(asyncio.sleep(0))
    db = sqlite3.connect(":memory:"); db.execute("create table t (x)"); db.commit()
    callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)
    assert callback(41) == 42
    from pi_app.board.geometry import load_geometry
    from pi_app.referee import feedback
    from tools.render_docs import SCREENS
    from pi_app.hw.display import open_display
    from pi_app.hw.leds import open_strip
    from pi_app.hw.pinmap import load_pinmap
    pins = load_pinmap()
    geometry = load_geometry("topple")
    strip = open_strip(geometry.led_count, pins.neopixel, "mock")
    display = open_display(pins.oled, "mock")
    for scene in SCREENS.values():
        display.show(feedback.screen(scene))
        strip.show(feedback.led_frame(scene, geometry, 0.1))
    print("ok")
""")


def test_memory_deny_write_execute_does_not_break_python() -> None:
    """MemoryDenyWriteExecute=yes refuses writable+executable memory. The kernel's own switch
    for the same rule (PR_SET_MDWE, Linux 6.3+) runs the daemon's kind of work here."""
    run = subprocess.run([sys.executable, "-c", MDWE_PROBE], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, check=False)
    if run.returncode == 3:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux < 6.3)")
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr
