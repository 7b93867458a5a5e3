"""Tournament load: many stations, one mosquitto, the referee dashboard, on this machine.

Run ``python -m tools.bench.tournament [--stations 64] [--seconds 20] [--rate 1.0]``; it prints
one JSON object. Everything is real and on loopback: a mosquitto with passwords, ACL and
persistence (:mod:`pi_app.net.broker`), the dashboard as its own process
(``python -m pi_app.net.dashboard run``) with one browser-like SSE client on its overview, and
worker processes (``--procs``, default one per :data:`PER_PROCESS` stations) that each run
their share of simulated stations (:class:`~pi_app.net.simstation.SimStation`: real session,
SQLite store, publisher). Every station connects and publishes its new game before the
measured window opens, in all workers at once.

Each station makes a move every ``1/rate`` seconds on average (uniform jitter of +-50 %; a real
table makes one every 5-30 s, so the default of 1/s is already five times busier than a hall).

Figures:

* ``lag_ms``: from the moment a station committed an event to its SQLite file (``Event.t``) to
  the moment the dashboard committed it to its ledger and woke its pages (the desk's flush):
  p50, p90, p99, max over every event of the window (``/api/stats?since=``). Target: p99 <=
  250 ms.
* ``cpu_pct``: CPU time of the mosquitto process and of the dashboard process during the run,
  from ``/proc/PID/stat`` (utime + stime), as a percentage of one core.
* ``memory_mb``: resident memory of mosquitto and of the dashboard at the end of the run, now
  and at its peak (``/proc/PID/status`` VmRSS, VmHWM); ``load_avg_1m_at_end`` says how busy
  the machine was (other work shares its cores).
* ``delivered``: every event of every station reached the dashboard's ledger (checked per board
  against the highest ``events.id``), ``duplicates`` and ``gaps`` as the desk counted them.
"""

from __future__ import annotations

import argparse
import getpass
import http.client
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pi_app.net.broker import BrokerProcess, free_port, wait_connectable, write_broker_config

EVENT = "bench"
REFEREE = "referee"
PER_PROCESS = 100
"""Stations per worker process. paho's network loop waits with ``select()``, which cannot watch
a descriptor numbered 1024 or more (FD_SETSIZE), and each simulated station holds about six
(two SQLite connections with their WAL files, its socket and paho's wake-up pair): past about
150 stations in one process the later ones never connect. A real station is one process."""


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds (fields 14 and 15 of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def get_json(port: int, path: str, timeout: float = 5.0) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


# -- a worker process: its share of the stations -----------------------------------------------
def worker(args: argparse.Namespace) -> int:
    from pi_app.net.mqtt import BrokerOptions, Publisher, PublisherConfig, start_publisher
    from pi_app.net.simstation import SimStation

    boards = args.boards.split(",")
    stations = [SimStation(Path(args.dir), b, seed=sum(map(ord, b)) * 7919 + args.seed)
                for b in boards]
    publishers: list[Publisher] = []
    for station in stations:
        options = BrokerOptions(port=args.port, username=station.board,
                                password=f"pw-{station.board}")
        publishers.append(start_publisher(station.feed, station.store,
                                          PublisherConfig(EVENT, station.board, options)))
        station.new_game()
    # Warm-up: every station connected and its new game published before the window opens,
    # as at an event, where stations come online over the minutes before round 1.
    deadline = time.monotonic() + 120   # (idle: connected, and everything stored published)
    for publisher in publishers:
        publisher.wait_idle(max(0.0, deadline - time.monotonic()))
    print(json.dumps({"ready": sum(p.stats().connected for p in publishers)}), flush=True)
    sys.stdin.readline()  # the conductor's "go": all workers open the window together
    rng = random.Random(args.seed)
    period = 1.0 / args.rate
    due = [time.monotonic() + rng.uniform(0, period) for _ in stations]
    end = time.monotonic() + args.seconds
    steps = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        i = min(range(len(stations)), key=due.__getitem__)
        if due[i] > now:
            time.sleep(min(due[i], end) - now)
            continue
        stations[i].step()
        steps += 1
        due[i] += period * rng.uniform(0.5, 1.5)
    idle = all(p.wait_idle(30) for p in publishers)
    last = {s.board: s.seq for s in stations}
    errors = sorted({e for p in publishers if (e := p.stats().last_error)})
    for publisher in publishers:
        publisher.stop()
    for station in stations:
        station.close()
    print(json.dumps({"steps": steps, "idle": idle, "last": last, "errors": errors}), flush=True)
    return 0


# -- the conductor -------------------------------------------------------------------------------
def _sse_reader(port: int, stop: threading.Event, counter: list[int]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/api/stream")
        reply = conn.getresponse()
        while not stop.is_set():
            try:
                line = reply.readline()
            except TimeoutError:
                continue
            if not line:
                return
            if line.startswith(b"event: "):
                counter[0] += 1
    except OSError:
        return
    finally:
        conn.close()


def memory_mb(pid: int) -> dict[str, float]:
    """A process's resident memory now and at its peak (``/proc/PID/status`` VmRSS, VmHWM), MB."""
    found: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found["rss" if key == "VmRSS" else "peak"] = round(int(value.split()[0]) / 1024,
                                                                    1)
    return found


def run(args: argparse.Namespace) -> dict[str, Any]:
    procs = args.procs or -(-args.stations // PER_PROCESS)
    directory = Path(tempfile.mkdtemp(prefix="tiki-bench-"))
    boards = [f"s{i:02d}" for i in range(args.stations)]
    mqtt_port, web_port = free_port(), free_port()
    files = write_broker_config(directory / "broker", event=EVENT,
                                boards={b: f"pw-{b}" for b in boards}, referee_user=REFEREE,
                                referee_password="pw-referee", port=mqtt_port,
                                log=directory / "mosquitto.log", user=getpass.getuser())
    (directory / "referee.toml").write_text(
        f'event = "{EVENT}"\ndb = "referee.sqlite"\n[broker]\nport = {mqtt_port}\n'
        f'username = "{REFEREE}"\npassword = "pw-referee"\n[web]\nport = {web_port}\n',
        encoding="utf-8")
    broker = BrokerProcess(files.conf, "127.0.0.1", mqtt_port)
    dashboard: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = []
    stop_sse = threading.Event()
    sse_count = [0]
    try:
        broker.start()
        dashboard = subprocess.Popen(
            [sys.executable, "-m", "pi_app.net.dashboard", "run", "--config",
             str(directory / "referee.toml")], stdout=subprocess.DEVNULL,
            stderr=open(directory / "dashboard.err", "wb"))  # noqa: SIM115
        if not wait_connectable("127.0.0.1", web_port, 20):
            raise RuntimeError("the dashboard did not start")
        deadline = time.monotonic() + 20
        while not get_json(web_port, "/api/stats")["ready"]:
            if time.monotonic() > deadline:
                raise RuntimeError("the dashboard did not subscribe")
            time.sleep(0.05)
        reader = threading.Thread(target=_sse_reader, args=(web_port, stop_sse, sse_count),
                                  daemon=True)
        reader.start()
        assert broker.pid is not None
        share = [boards[i::procs] for i in range(procs)]
        for i, mine in enumerate(share):
            if not mine:
                continue
            workers.append(subprocess.Popen(
                [sys.executable, "-m", "tools.bench.tournament", "--worker",
                 "--boards", ",".join(mine), "--port", str(mqtt_port), "--dir",
                 str(directory / "stations"), "--seconds", str(args.seconds),
                 "--rate", str(args.rate), "--seed", str(i)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE))
        t_warm = time.monotonic()
        connected = 0
        for proc in workers:
            assert proc.stdout is not None
            connected += json.loads(proc.stdout.readline())["ready"]
        warm_up = time.monotonic() - t_warm
        cpu0 = {"broker": cpu_seconds(broker.pid), "dashboard": cpu_seconds(dashboard.pid)}
        since = time.time()
        t0 = time.monotonic()
        for proc in workers:
            assert proc.stdin is not None
            proc.stdin.write(b"go\n")
            proc.stdin.flush()
        reports = []
        for proc in workers:
            out, _ = proc.communicate(timeout=args.seconds + 120)
            reports.append(json.loads(out.decode().strip().splitlines()[-1]))
        last: dict[str, int] = {}
        for report in reports:
            last.update(report["last"])
        deadline = time.monotonic() + 30
        delivered = False
        while time.monotonic() < deadline:
            seen = {b["board"]: b["seq"] for b in get_json(web_port, "/api/boards")}
            if all(seen.get(b) == n for b, n in last.items()):
                delivered = True
                break
            time.sleep(0.1)
        wall = time.monotonic() - t0
        cpu = {"broker": cpu_seconds(broker.pid) - cpu0["broker"],
               "dashboard": cpu_seconds(dashboard.pid) - cpu0["dashboard"]}
        stats = get_json(web_port, f"/api/stats?since={since}")
        memory = {"broker": memory_mb(broker.pid), "dashboard": memory_mb(dashboard.pid)}
        steps = sum(r["steps"] for r in reports)
        return {
            "stations": args.stations, "processes": procs, "connected": connected,
            "warm_up_s": round(warm_up, 1), "seconds": args.seconds,
            "rate_per_station": args.rate, "events": steps,
            "events_per_s": round(steps / args.seconds, 1), "delivered": delivered,
            "publishers_idle": all(r["idle"] for r in reports),
            "publisher_errors": sorted({e for r in reports for e in r["errors"]}),
            "duplicates": stats["counts"].get("duplicates", 0),
            "gaps": stats["counts"].get("gaps", 0),
            "lag_ms": stats["lag_ms"], "target_p99_ms": 250,
            "cpu_pct": {k: round(100 * v / wall, 1) for k, v in cpu.items()},
            "sse_updates_seen": sse_count[0],
            "memory_mb": memory,
            "load_avg_1m_at_end": round(os.getloadavg()[0], 1),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "system": platform.platform()},
        }
    finally:
        stop_sse.set()
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        if dashboard is not None and dashboard.poll() is None:
            dashboard.terminate()
            try:
                dashboard.wait(10)
            except subprocess.TimeoutExpired:
                dashboard.kill()
                dashboard.wait(10)
        broker.stop()
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stations", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=1.0, help="moves per second per station")
    parser.add_argument("--procs", type=int, default=0,
                        help=f"worker processes (default: one per {PER_PROCESS} stations)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--boards", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        sys.exit(worker(args))
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()
