"""The server-side measures of bench/dashboard_load.py (issue 29): the app served under
bench/serve_timed.py, health polled by bench/health_probe.py, and their logs read back.

The browser-side times of a step come from Chromium (its websocket frames as it reports them), so
a Chromium short of CPU lengthens them; these come from the server's process (each rerun request's
arrival on its event loop and its run's script-finished message) and from a prober in a scheduler
autogroup of its own at a raised priority, so they are the server's alone. All times are
time.monotonic(), shared by the processes of the machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.app_server import AppServer  # noqa: E402

BENCH = Path(__file__).resolve().parent
COOKIE = "bench_session"  # the cookie naming a browser context's session in the server's log


class TimedServer(AppServer):
    """AppServer's `streamlit run app.py` (same options, environment and checkout), under
    bench/serve_timed.py, logging to `run_log`; with a health prober (bench/health_probe.py)
    logging to `health_log` while it runs."""

    def __init__(self, home: Path, *, start_timeout: float = 90.0, root: Path = ROOT, tag: str = "server") -> None:
        super().__init__(home, start_timeout=start_timeout, root=root)
        self.run_log = self.home / f"{tag}.runs.jsonl"
        self.health_log = self.home / f"{tag}.health.jsonl"
        self.log_path = self.home / f"{tag}.log"
        self._prober: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        return [sys.executable, str(BENCH / "serve_timed.py"), "--log", str(self.run_log), "--",
                *self.streamlit_arguments()]

    def __enter__(self) -> TimedServer:
        super().__enter__()
        # a session of its own: its own autogroup, whose priority it raises
        self._prober = subprocess.Popen([sys.executable, str(BENCH / "health_probe.py"), self.url,
                                         str(self.health_log)], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        return self

    def stop(self) -> None:
        prober, self._prober = self._prober, None
        if prober is not None and prober.poll() is None:
            os.killpg(prober.pid, signal.SIGTERM)
            prober.wait(timeout=15)
        super().stop()

    def prober_priority(self) -> str:
        """What the prober could do about its priority (its first line)."""
        for record in read_jsonl(self.health_log):
            if "priority" in record:
                return record["priority"]
        return "prober not started"


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:  # a line being written as we read
            continue
    return records


def health_between(path: Path, start: float, end: float) -> dict:
    """The prober's polls that began in [start, end]: the worst wait, the failed polls, their count."""
    polls = [r for r in read_jsonl(path) if "t" in r and start <= r["t"] <= end]
    return {"worst": max((r["wait"] for r in polls), default=float("nan")),
            "failed": sum(not r["ok"] for r in polls), "polls": len(polls)}


def loop_lag_between(path: Path, start: float, end: float) -> float:
    """The event loop's worst lag (serve_timed's one-second records) over [start, end]."""
    return max((r["lag"] for r in read_jsonl(path) if r.get("event") == "loop" and start <= r["t"] <= end),
               default=float("nan"))


class ServerRuns:
    """serve_timed's log, by bench session label: rerun arrivals and finished runs."""

    def __init__(self, path: Path) -> None:
        records = read_jsonl(path)
        label_of = {r["session"]: r["bench"] for r in records if r.get("event") == "connect" and r.get("bench")}
        self.reruns: dict[str, list[float]] = defaultdict(list)
        self.finished: dict[str, list[dict]] = defaultdict(list)
        for record in records:
            label = label_of.get(record.get("session"))
            if label is None:
                continue
            if record["event"] == "rerun":
                self.reruns[label].append(record["t"])
            elif record["event"] == "finished":
                self.finished[label].append(record)

    def step(self, label: str, start: float, end: float) -> tuple[float, list[dict]]:
        """The server's share of a step of session `label` from `start` to `end`: from the first
        rerun request that arrived in it to the last run that finished in it (nan: none); and the
        runs that finished in it."""
        arrived = [t for t in self.reruns.get(label, []) if start <= t <= end]
        runs = [r for r in self.finished.get(label, []) if start <= r["t"] <= end]
        if not arrived or not runs or runs[-1]["t"] < arrived[0]:
            return float("nan"), runs
        return runs[-1]["t"] - arrived[0], runs


def memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a process, MB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process (all its threads) has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_queue_wait(pid: int) -> float:
    """Seconds the threads of a process have waited, runnable, for a CPU (/proc schedstat)."""
    total = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1]) / 1e9
        except (OSError, ValueError, IndexError):  # a thread ended meanwhile
            continue
    return total


def process_parents() -> dict[int, int]:
    """Every running process's parent pid, by pid (from /proc; processes that end meanwhile skipped)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return parents


def profile_between(path: Path, folder: Path, start: float, end: float, out: Path, top: int = 14) -> str:
    """With the server profiled (serve_timed, BENCH_PROFILE_DIR=`folder`): the script runs that
    ended in [start, end] merged into `out`, and a summary: runs, their wall and CPU seconds, the
    slowest run, and the `top` functions of the app (app.py, views/, tempo_eval*) by cumulative
    time with their call counts ("" when nothing was profiled)."""
    import pstats

    runs = [r for r in read_jsonl(path) if r.get("event") == "profiled" and start <= r["t"] <= end]
    if not runs:
        return ""
    stats = pstats.Stats(str(folder / runs[0]["file"]))
    for record in runs[1:]:
        stats.add(str(folder / record["file"]))
    stats.dump_stats(str(out))
    mine = [(key, value) for key, value in stats.stats.items()  # type: ignore[attr-defined]
            if any(part in key[0] for part in ("/views/", "/tempo_eval", "app.py"))]
    mine.sort(key=lambda item: item[1][3], reverse=True)
    slowest = max(runs, key=lambda r: r["wall"])
    lines = [f"{len(runs)} runs, wall {sum(r['wall'] for r in runs):.2f} s, script-thread CPU "
             f"{sum(r['cpu'] for r in runs):.2f} s; slowest {slowest['wall']:.2f} s ({slowest['file']}); "
             f"merged into {out}"]
    for (file, line, name), (_, calls, _, cumulative, _) in mine[:top]:
        lines.append(f"      {cumulative * 1000:8.0f} ms {calls:6d} calls  {Path(file).name}:{line} {name}")
    return "\n".join(lines)
