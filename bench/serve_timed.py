"""`streamlit run`, with the server's own timing of every script run logged (bench only, issue 29).

    python bench/serve_timed.py --log runs.jsonl -- run app.py --server.port 8501 ...

Everything after `--` is `streamlit`'s own command line; the app and Streamlit are unchanged: this
wrapper patches three methods in its own process before Streamlit starts, and writes JSON lines
(times are time.monotonic(), the clock every process on the machine shares):
- {"event": "connect", "session": ID, "bench": LABEL}: a websocket's session; LABEL is the
  `bench_session` cookie the browser sent (the bench gives each context one), or null;
- {"event": "rerun", "session": ID, "t": T}: a rerun request (BackMsg rerun_script) reached the
  server's event loop;
- {"event": "finished", "session": ID, "t": T, "status": S, "msgs": N, "since": T0}: that
  session's script-finished ForwardMsg was written to its websocket's send queue; S is the
  ForwardMsg.ScriptFinishedStatus name, N the ForwardMsgs written since the rerun request
  (included), T0 that request's arrival (null for a run no request started, e.g. st.rerun);
- {"event": "loop", "t": T, "lag": L}: every second, the event loop's worst lag in it: how much
  later than asked a 50 ms sleep woke (what a health check or a websocket frame waits there).
With BENCH_PROFILE_DIR set (`dashboard_load.py --profile DIR`), every script run is also profiled
(cProfile, the script thread only): DIR/run-PID-N.prof, and a line {"event": "profiled", "file":
"run-PID-N.prof", "session": ID, "page": HASH, "t": T, "wall": W, "cpu": C, "rss_mb": R} in the log
(C: the script thread's CPU seconds; R: the server's resident memory after the run), and a line
{"event": "gc", ...} for each garbage collection that paused the process over 20 ms. Profiling slows the runs: read those rows for where the time goes,
not for their times.
The server stops itself when the process that started it has gone (a bench killed midway).
So a rerun's server-side duration is T - T0: from the request's arrival to the run's end, the
browser and its scheduling excluded.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
from typing import Any

LAG_TICK_S = 0.05


class RunLog:
    """The JSON-lines log, written from the event loop thread (and any other) under a lock."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - open for the process's life
        self._lock = threading.Lock()
        self.labels: dict[int, str] = {}  # id(client) -> session id
        self.pending: dict[str, float] = {}  # session id -> arrival of its last rerun request
        self.counts: dict[str, int] = {}  # session id -> ForwardMsgs since that request

    def write(self, **record: Any) -> None:
        with self._lock:
            self._file.write(json.dumps(record) + "\n")


def install(log: RunLog) -> None:
    """Wrap Runtime.connect_session / handle_backmsg, the websocket client's write_forward_msg and
    Server.start (the lag monitor), recording into `log`."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.runtime import Runtime
    from streamlit.web.server.server import Server
    from streamlit.web.server.starlette.starlette_websocket import StarletteSessionClient

    connect, handle, write, start = (Runtime.connect_session, Runtime.handle_backmsg,
                                     StarletteSessionClient.write_forward_msg, Server.start)
    status_name = ForwardMsg.ScriptFinishedStatus.Name

    def connect_session(self, client, *args, **kwargs):
        session_id = connect(self, client, *args, **kwargs)
        cookies = getattr(getattr(client, "client_context", None), "cookies", {})  # none: not a websocket
        label = cookies.get("bench_session")
        log.labels[id(client)] = session_id
        log.write(event="connect", session=session_id, bench=label, t=time.monotonic())
        return session_id

    def handle_backmsg(self, session_id, msg, *args, **kwargs):
        if msg.WhichOneof("type") == "rerun_script":
            now = time.monotonic()
            log.pending[session_id] = now
            log.counts[session_id] = 0
            log.write(event="rerun", session=session_id, t=now)
        return handle(self, session_id, msg, *args, **kwargs)

    def write_forward_msg(self, msg):
        session_id = log.labels.get(id(self))
        if session_id is not None:
            log.counts[session_id] = log.counts.get(session_id, 0) + 1
            if msg.WhichOneof("type") == "script_finished":
                since = log.pending.pop(session_id, None)
                log.write(event="finished", session=session_id, t=time.monotonic(),
                          status=status_name(msg.script_finished), msgs=log.counts.pop(session_id), since=since)
        return write(self, msg)

    async def lag_monitor() -> None:
        window_end, worst, parent = time.monotonic() + 1.0, 0.0, os.getppid()
        while True:
            if os.getppid() != parent:  # the bench that started this server has gone: stop, as on Ctrl-C
                os.kill(os.getpid(), signal.SIGTERM)
                return
            asked = time.monotonic()
            await asyncio.sleep(LAG_TICK_S)
            now = time.monotonic()
            worst = max(worst, now - asked - LAG_TICK_S)
            if now >= window_end:
                log.write(event="loop", t=now, lag=round(worst, 4))
                window_end, worst = now + 1.0, 0.0

    async def server_start(self):
        self._bench_lag_task = asyncio.get_running_loop().create_task(lag_monitor())
        return await start(self)

    profile_dir = os.environ.get("BENCH_PROFILE_DIR")
    if profile_dir:
        profile_runs(log, profile_dir)
    Runtime.connect_session = connect_session
    Runtime.handle_backmsg = handle_backmsg
    StarletteSessionClient.write_forward_msg = write_forward_msg
    Server.start = server_start


def profile_runs(log: RunLog, folder: str) -> None:
    """Profile each script run (see the module's docstring)."""
    import cProfile
    import itertools

    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    run_script, numbers = ScriptRunner._run_script, itertools.count()  # noqa: SLF001
    os.makedirs(folder, exist_ok=True)

    def profiled(self, rerun_data):
        profile, started, cpu = cProfile.Profile(), time.monotonic(), time.thread_time()
        profile.enable()
        try:
            return run_script(self, rerun_data)
        finally:
            profile.disable()
            name = f"run-{os.getpid()}-{next(numbers)}.prof"
            profile.dump_stats(os.path.join(folder, name))
            with open("/proc/self/statm") as statm:
                rss = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
            log.write(event="profiled", file=name, session=getattr(self, "_session_id", None),
                      page=rerun_data.page_script_hash, t=time.monotonic(), wall=time.monotonic() - started,
                      cpu=time.thread_time() - cpu, rss_mb=round(rss))

    ScriptRunner._run_script = profiled  # noqa: SLF001
    watch_collections(log)


def watch_collections(log: RunLog, over_s: float = 0.02) -> None:
    """Log each garbage collection that held the GIL longer than `over_s`: {"event": "gc",
    "t": T, "generation": G, "pause": P, "collected": N, "rss_mb": R} (what stalls every thread)."""
    import gc

    started: list[float] = [0.0]

    def callback(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.monotonic()
            return
        pause = time.monotonic() - started[0]
        if pause > over_s:
            with open("/proc/self/statm") as statm:
                rss = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
            log.write(event="gc", t=time.monotonic(), generation=info.get("generation"), pause=round(pause, 4),
                      collected=info.get("collected"), rss_mb=round(rss))

    gc.callbacks.append(callback)


def main() -> None:
    if "--log" not in sys.argv[1:2] or "--" not in sys.argv:
        raise SystemExit("usage: serve_timed.py --log FILE -- run app.py [streamlit options]")
    split = sys.argv.index("--")
    # as `python -m streamlit` from the app's folder: that folder first on the path, never bench/
    # (whose modules, e.g. bench/ray.py, would hide the libraries of the same name)
    sys.path[0] = os.getcwd()
    install(RunLog(sys.argv[2]))
    sys.argv = ["streamlit", *sys.argv[split + 1:]]
    from streamlit.web import cli

    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
