#!/bin/sh
# All set-up for a fresh Debian or Raspberry Pi OS machine, and nothing else:
#   - the system packages the project and its tests need, via apt when missing: python3-venv;
#     mosquitto, chromium, chromium-driver, openssl and systemd for the test suite's real broker,
#     browser, TLS certificates and unit checks; KiCad (kicad, for the sensing layer's DRC and
#     Gerbers: 104 MB download, 471 MB on disk, 41 s on Debian 12) except on a Raspberry Pi;
#   - a virtual environment in .venv with the project and its test tools (and the `pi` extra
#     on a Raspberry Pi).
# Safe to run again: it only installs what is missing or changed (pyproject.toml's hash).
set -eu
cd "$(dirname "$0")/.."

need_apt=""
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    echo "bootstrap: Python 3.11 or newer is needed (Raspberry Pi OS Bookworm has it)" >&2; exit 1; }
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt="$need_apt python3-venv"
# The test suite runs a real broker, a real browser and systemd's unit checker.
[ -x /usr/sbin/mosquitto ] || need_apt="$need_apt mosquitto"
[ -x /usr/bin/chromium ] || need_apt="$need_apt chromium"
[ -x /usr/bin/chromedriver ] || need_apt="$need_apt chromium-driver"
command -v openssl >/dev/null 2>&1 || need_apt="$need_apt openssl"
command -v systemd-analyze >/dev/null 2>&1 || need_apt="$need_apt systemd"
# KiCad's pcbnew (system Python only) generates and checks the TacTiki sensing layer
# (hardware/antenna/make_layer.py, tests/test_sensing_layer.py); a station never needs it.
# Its own apt call, not fatal: a distribution without the package still gets the rest, and
# the sensing-layer tests then fail saying KiCad is missing.
need_kicad=""
case "$(uname -m)" in
    aarch64|armv7l) ;;
    *) [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pcbnew' 2>/dev/null ||
        need_kicad="kicad" ;;
esac
if [ -n "$need_apt" ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "bootstrap: installing$need_apt with apt" >&2
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need_apt
fi
if [ -n "$need_kicad" ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "bootstrap: installing KiCad with apt (about 100 MB; the sensing layer's DRC)" >&2
    [ -n "$need_apt" ] || $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends kicad ||
        echo "bootstrap: KiCad could not be installed; tests/test_sensing_layer.py will say so" >&2
fi

stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
    # Said as it happens (issue 31): the first run is a silent minute or more otherwise.
    [ -x .venv/bin/python ] || {
        echo "bootstrap: making the virtual environment .venv" >&2; python3 -m venv .venv; }
    echo "bootstrap: updating pip in .venv" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -U pip
    extras="test"
    case "$(uname -m)" in aarch64|armv7l) extras="test,pi" ;; esac
    echo "bootstrap: installing tikiboard and its [$extras] extras into .venv (a minute or" \
        "two the first time)" >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]"
    rm -f .venv/.installed-*
    touch "$stamp"
    echo "bootstrap: done; run again, it does nothing until pyproject.toml changes" >&2
fi
