"""Benchmark: many analysts on one dashboard, with and without an evaluation running (issue 29).

    python bench/dashboard_load.py                       # 1, 5, 10, 20 sessions, each with and without
    python bench/dashboard_load.py --sessions 1,20 --browser-group-nice 19,0   # Chromium both ways
    python bench/dashboard_load.py --long 40             # one session walking 40 times: server memory
    python bench/dashboard_load.py --sessions 20 --no-eval --trees /work/main,. --repeat 2
                                                         # A/B: another checkout's app against this one

The real server (`streamlit run app.py`, the repository's .streamlit/config.toml, under
bench/serve_timed.py, which logs its own timing and changes nothing else) on a fresh workspace
holding the sample QA dataset and two runs of it (both selected, `--runs 2`: Results shows both,
Compare runs compares them). One Chromium (/usr/bin/chromium, the tests' flags), one browser
context per session; every session opens on the Overview and walks Results -> Compare runs ->
Claims -> Overview through the sidebar, all at once. Measured:
- a step: from the click to the page idle again (Streamlit's script state "notRunning"), once
  the browser has sent the click to the server and the server has answered (drawing included);
- the server's share of a step, server side (the target's measure): from the arrival of the
  step's first rerun request on the server's event loop to its last run's script-finished
  message, as the server logged them (bench/load_timing.py); Chromium's delays excluded;
- the first page, server side: a session's first rerun request to its last run before the walk;
- with an evaluation, pages with it over pages without it on the same server (server side, p50
  and p95), against the target of 1.2x;
- the same share, browser side: from the first websocket frame Chromium reports sent after the
  click to the last it reports received: it includes Chromium's own scheduling delays;
- health-check waits: /_stcore/health polled every 0.25 s by bench/health_probe.py, a process in
  a scheduler autogroup of its own at nice -10 (Chromium cannot starve it), the slowest answer;
  and the server's event-loop lag (the worst delay of a 50 ms sleep there, logged each second);
- dropped websockets: websockets closed while the page was open (Streamlit reconnects);
- errors: JavaScript errors on the pages, Streamlit exception / error boxes, and a session that
  left the dataset it opened on (its address's `dataset` after a step);
- the server's CPU time (all its threads) over the walks, per step; its memory (VmRSS) before and
  after, and its peak (VmHWM); its CPU use over the walk (share of one core), the time its threads
  waited, runnable, for a CPU, and the CPU of Chromium (all its processes) over the same window;
- clicks sent again: a click the page did not pass on to the server in 60 s is sent again, counted.
"With evaluation": one more browser context starts an evaluation of a generated dataset from the
Evaluate page (the worker process does the work), then the sessions open and walk; the job's rate
while they walk is the rows it finished during the walk (its progress in the workspace) over the
walk's length, and its rate alone is the same job's, same settings, right after, over a window of
the same length (both printed, and their ratio). The job must outlast the second window: each
such row gets a generated dataset sized from the row without an evaluation and the job's last
rate alone (class Generated), one larger and a second try if it ended early, else INVALID.
`--profile DIR` profiles every script run of the server (cProfile, bench/serve_timed.py) and
prints, per row, the app's functions by cumulative time: for where the time goes, not for timings.
`--trees A,B` serves each checkout's app in turn (same workspace, same bench and browser), `--repeat`
times, alternating: an A/B comparison on a shared machine, rows of the same run only.
Chromium: in deployment the analysts' browsers run on their own machines, so by default its
scheduler autogroup (all of Chromium; what counts on Linux, see Renicer) runs at nice 19
(column "chromium": g19) and its drawing takes the CPU only when the server and the job leave it;
--browser-group-nice 0 runs it unprioritized (g0), an equal of the server; 19,0 runs both in turn.
At g19 on a machine that others load heavily, Chromium starves (pages do not open): use g0 there
and read the server-side columns. The load average is printed: compare rows of the same run only.
Targets (issue 29): at 20 sessions the server's share p95 <= 2 s, no health wait over 1 s, no
dropped websocket, no error; with an evaluation, pages at most 1.2x slower and the job at 90% or
more of its speed alone.
`--db postgresql://user@host:port/database` prints the table twice: on the workspace's SQLite file,
then with the workspace database on that PostgreSQL server (`TEMPO_EVAL_DB`: a new database made
beside the one named, for the servers, the workers and the bench alike; dropped after). The
targets are the same on both (issue 40).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.load_timing import (  # noqa: E402
    COOKIE,
    ServerRuns,
    TimedServer,
    cpu_seconds,
    health_between,
    loop_lag_between,
    memory,
    process_parents,
    profile_between,
    run_queue_wait,
)

TIMEOUT_S = 600.0  # a page that has not opened or finished a step by then fails its row (--timeout)
RESEND_CLICK_S = 60.0  # a click the page has not passed on to the server by then is sent again
PROFILE_DIR: Path | None = None  # --profile: every script run of the servers profiled there

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--disable-sync"]
# the sessions open on the Overview, so the walk starts elsewhere: every step is a new page
WALK = ["Results", "Compare runs", "Claims", "Overview"]
IDLE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stStatusWidget"]')
        && !document.querySelector('[data-stale="true"]');
}"""


class Renicer(threading.Thread):
    """Every `every` s, gives Chromium's scheduler autogroup (all of this bench's Chromium) the nice
    value `group_nice`, and its drawing processes (renderers and the GPU process: descendants of
    this process) the nice value `nice` (0: left alone).

    On Linux with autogroups (sched_autogroup_enabled) the group's nice is what counts: Playwright
    starts Chromium in a session of its own, each session is a group, and groups share the CPU by
    their own nice whatever the nice values inside (Chromium also sets its own threads' priorities:
    renderer main threads back to 0 or 5, compositor and GPU threads at -8). At group nice 0,
    Chromium is an equal of the server (in a group of its own too): at 20 sessions Chromium used
    1.78 cores and the server 0.12 of one. At 19 (the default), Chromium takes the CPU only when
    the server, the job and the others leave it: as browsers on the analysts' own machines would."""

    DRAWING = (b"--type=renderer", b"--type=gpu-process")

    def __init__(self, nice: int, group_nice: int, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.nice, self.group_nice, self.every, self.reniced = nice, group_nice, every, set()
        self.groups: dict[str, int] = {}  # Chromium's autogroups: a process of each
        self._own_group = self._autogroup("self")
        self._lock = threading.Lock()
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.renice_once()
            self._halt.wait(self.every)

    def renice_once(self) -> None:
        parents = process_parents()
        me = os.getpid()
        for pid in parents:
            if pid in self.reniced or not self._descends(pid, me, parents):
                continue
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"chrom" not in command:
                    continue
                self._track_group(pid)
                if self.nice and any(flag in command for flag in self.DRAWING):
                    os.setpriority(os.PRIO_PROCESS, pid, self.nice)
                self.reniced.add(pid)
            except OSError:  # ended meanwhile
                continue

    def set_group_nice(self, nice: int) -> None:
        """Chromium's autogroup(s) at `nice` from now on."""
        with self._lock:
            self.group_nice = nice
            for group, pid in list(self.groups.items()):
                try:
                    Path(f"/proc/{pid}/autogroup").write_text(str(nice))
                except OSError:  # that process ended: another of the group is found on the next round
                    del self.groups[group]

    def group_nices(self) -> str:
        """The nice of each of Chromium's autogroups, as the kernel reports it (e.g. "19")."""
        found = []
        for pid in self.groups.values():
            try:
                found.append(Path(f"/proc/{pid}/autogroup").read_text().split("nice")[-1].strip())
            except OSError:
                continue
        return ",".join(found) or "none found"

    @staticmethod
    def _autogroup(pid: int | str) -> str | None:
        try:
            return Path(f"/proc/{pid}/autogroup").read_text().split()[0]
        except (OSError, IndexError):  # no autogroups on this kernel
            return None

    def _track_group(self, pid: int) -> None:
        """Chromium's autogroup at `group_nice`, never the bench's own (Chromium in the bench's session)."""
        group = self._autogroup(pid)
        with self._lock:
            if group is None or group == self._own_group or group in self.groups:
                return
            Path(f"/proc/{pid}/autogroup").write_text(str(self.group_nice))
            self.groups[group] = pid

    @staticmethod
    def _descends(pid: int, ancestor: int, parents: dict[int, int]) -> bool:
        for _ in range(16):
            pid = parents.get(pid, 0)
            if pid == ancestor:
                return True
            if pid <= 1:
                return False
        return False

    def stop(self) -> None:
        self._halt.set()
        self.join()


def build_workspace(home: Path) -> tuple[int, list[int]]:
    """The sample QA dataset with two runs; returns (sample id, its run ids)."""
    os.environ["TEMPO_EVAL_HOME"] = str(home)
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.metrics.temporal_ndcg import TemporalNDCG
    from tempo_eval.store.runs import RunStore

    store = RunStore()
    sample = load_dataset(ROOT / "data" / "sample" / "temporal_qa.csv")
    sample.name = "Sample: temporal QA (30 questions)"
    sample_id = store.save_dataset(sample)
    run_ids = []
    for k in (5, 10):
        run_ids.append(evaluate(store.get_dataset(sample_id), [TemporalFaithfulness(mode="focus_time"),
                                               TemporalNDCG(k=k, mode="focus_time")],
                 store=store, run_name=f"focus k={k}").run_id)
    store.close()
    return sample_id, run_ids


class Generated:
    """The generated datasets the evaluations run on, made as large as a row needs: a job must
    outlast the walk and the window alone after it (twice the walk), or its rates mean nothing."""

    def __init__(self, home: Path, minimum: int) -> None:
        self.home, self.minimum = home, minimum
        self.made: dict[int, int] = {}  # rows -> dataset id
        self.rate = 8000.0  # the job's rate alone, rows/s, to size a dataset: the last measured
    def at_least(self, rows: int) -> tuple[int, int]:
        """(id, rows) of a generated dataset of `rows` or more (made now if none is)."""
        rows = max(rows, self.minimum)
        fits = [have for have in self.made if have >= rows]
        if fits:
            return self.made[min(fits)], min(fits)
        started = time.monotonic()
        self.made[rows] = generate_dataset(self.home, rows)
        print(f"    generated a dataset of {rows:,} rows in {time.monotonic() - started:.0f} s", flush=True)
        return self.made[rows], rows


def generate_dataset(home: Path, rows: int) -> int:
    """A dataset of `rows` rows stored in the workspace; returns its id. Every row's texts are its
    own (a bridge number), so the job extracts each one, as on logged data, instead of finding a
    few texts in its memo."""
    import json

    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.store.runs import RunStore

    path = home / f"generated_{rows}.jsonl"
    with path.open("w", encoding="utf-8") as out:  # streamed: a million rows never held as objects here
        for i in range(rows):
            year = 1900 + i % 120
            out.write(json.dumps({
                "query_id": f"q{i}", "query": f"What happened to bridge {i} in {year}?",
                "answer": f"In {year} bridge {i} opened; it closed in {1950 + i % 60}.",
                "contexts": [f"Bridge {i} opened in {year}.", f"Bridge {i} closed later."]}) + "\n")
    generated = load_dataset(path, max_bytes=path.stat().st_size + 1)
    generated.name = f"generated {rows} rows"
    path.unlink()
    store = RunStore()
    try:
        return store.save_dataset(generated)
    finally:
        store.close()


def chromium_cpu_seconds() -> float:
    """User + system CPU seconds of the running Chromium processes that descend from this bench."""
    parents = process_parents()
    me, total = os.getpid(), 0.0
    for pid in parents:
        try:
            if Renicer._descends(pid, me, parents) and b"chrom" in Path(f"/proc/{pid}/cmdline").read_bytes():
                total += cpu_seconds(pid)
        except (OSError, ValueError, IndexError):  # ended meanwhile
            continue
    return total


class Session:
    """One analyst: a browser context walking the pages, with its websocket frames timed."""

    def __init__(self, context, url: str, label: str = "") -> None:
        self.context, self.url, self.label = context, url, label
        self.frames: list[tuple[float, str]] = []
        self.sockets = 0
        self.closed = 0
        self.errors: list[str] = []
        self.steps: list[tuple[str, float, float]] = []  # page, step time, server's share (browser side)
        self.windows: list[tuple[str, float, float]] = []  # page, the step's start and end (time.monotonic())
        self.resent = 0  # clicks sent again

    async def open(self, path: str = ""):
        page = await self.context.new_page()
        page.set_default_timeout(TIMEOUT_S * 1000)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("websocket", self._socket)
        started = time.monotonic()
        await page.goto(self.url + path)
        await page.wait_for_function(IDLE, timeout=TIMEOUT_S * 1000)
        self.first = time.monotonic() - started
        self.page = page
        self.dataset = _dataset_of(page.url)  # the sidebar writes the session's dataset into the address
        return page

    def _socket(self, socket) -> None:
        self.sockets += 1
        socket.on("framesent", lambda _: self.frames.append((time.monotonic(), "sent")))
        socket.on("framereceived", lambda _: self.frames.append((time.monotonic(), "received")))
        socket.on("close", lambda _: setattr(self, "closed", self.closed + 1))

    async def step(self, title: str) -> None:
        page = self.page
        mark = len(self.frames)
        started = clicked = time.monotonic()
        link = page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first
        await link.click()
        # the step has begun once the browser has sent the server its request and the server has
        # answered it: a browser slow to take the click (at nice 19 on a busy machine), or a server
        # slow to start the run, would otherwise leave the old page looking idle (a step of 0.3 s)
        while not self._answered(mark):
            if time.monotonic() - started > TIMEOUT_S:
                raise TimeoutError(f"the click on {title} had no answer from the server in {TIMEOUT_S:.0f} s")
            if not self._sent(mark) and time.monotonic() - clicked > RESEND_CLICK_S:
                self.resent += 1  # the page never passed the click on: click again
                await link.click()
                clicked = time.monotonic()
            await asyncio.sleep(0.02)
        await page.wait_for_timeout(300)
        await page.wait_for_function(IDLE, timeout=TIMEOUT_S * 1000)
        took = time.monotonic() - started
        frames = self.frames[mark:]
        sent = [t for t, kind in frames if kind == "sent"]
        received = [t for t, kind in frames if kind == "received"]
        share = (max(received) - min(sent)) if sent and received and max(received) > min(sent) else float("nan")
        boxes = await page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').count()
        if boxes:
            self.errors.append(f"{boxes} error box(es) on {title}")
        now_on = _dataset_of(page.url)
        if now_on is not None and now_on != self.dataset:  # e.g. a sidebar widget redrawn at its first option
            self.errors.append(f"the session moved from dataset {self.dataset} to {now_on} on {title}")
            self.dataset = now_on
        self.steps.append((title, took, share))
        self.windows.append((title, started, started + took))

    def _sent(self, mark: int) -> bool:
        return any(kind == "sent" for _, kind in self.frames[mark:])

    def _answered(self, mark: int) -> bool:
        """A frame was sent after `mark` and one received after it."""
        sent = next((t for t, kind in self.frames[mark:] if kind == "sent"), None)
        return sent is not None and any(kind == "received" and t > sent for t, kind in self.frames[mark:])

    async def walk(self, walks: int) -> float:
        started = time.monotonic()
        for _ in range(walks):
            for title in WALK:
                await self.step(title)
        return time.monotonic() - started


def _dataset_of(url: str) -> str | None:
    """The `dataset` query parameter of a page's address (None: none)."""
    from urllib.parse import parse_qs, urlparse

    return (parse_qs(urlparse(url).query).get("dataset") or [None])[0]


def job_done(job_id: int) -> tuple[int, str]:
    from tempo_eval.store.jobs import JobQueue

    queue = JobQueue()
    try:
        job = queue.get(job_id)
    finally:
        queue.close()
    return job["done"], job["status"]


def drop_runs(dataset_id: int) -> None:
    """Delete the dataset's runs: the Evaluate page resumes a run of the same settings, and a
    finished one would end at once."""
    from tempo_eval.store.runs import RunStore

    store = RunStore()
    try:
        for run_id in store.list_runs(dataset_id)["id"].tolist():
            store.delete_run(int(run_id))
    finally:
        store.close()


def latest_job() -> int:
    from tempo_eval.store.jobs import JobQueue

    queue = JobQueue()
    try:
        return queue.jobs(kind="evaluate", limit=1)[0]["id"]
    finally:
        queue.close()


def cancel_jobs() -> None:
    from tempo_eval.store.jobs import JobQueue

    queue = JobQueue()
    try:
        for job in queue.jobs(active=True):
            queue.request_cancel(job["id"])
    finally:
        queue.close()


def delete_job_run(job_id: int) -> None:
    from tempo_eval.store.jobs import JobQueue
    from tempo_eval.store.runs import RunStore

    queue, store = JobQueue(), RunStore()
    try:
        run_id = queue.get(job_id)["run_id"]
        if run_id is not None:
            store.delete_run(run_id)
    finally:
        queue.close()
        store.close()


async def start_evaluation(browser, url: str, dataset_id: int, run_name: str) -> int:
    """Start an evaluation from the Evaluate page, as an analyst does; returns the job id."""
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_S * 1000)
    await page.goto(f"{url}/evaluate?dataset={dataset_id}")
    await page.wait_for_function(IDLE)
    name = page.get_by_role("textbox", name="Run name")
    await name.fill(run_name)
    await name.press("Enter")
    await page.wait_for_timeout(300)
    await page.wait_for_function(IDLE)
    await page.get_by_role("button", name="Run evaluation").click()
    await page.get_by_text("rows/s").first.wait_for(timeout=TIMEOUT_S * 1000)
    await context.close()
    return latest_job()


def quantile(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


async def one_load(browser, server: TimedServer, pid: int, n: int, walks: int, job_id: int | None,
                   start: str) -> dict:
    labels = [f"{uuid.uuid4().hex[:8]}-{i}" for i in range(n)]
    sessions: list[Session] = []

    async def open_all() -> None:
        for label in labels:  # the cookie names the session in the server's log
            context = await browser.new_context(viewport={"width": 1280, "height": 900})
            await context.add_cookies([{"name": COOKIE, "value": label, "url": server.url}])
            sessions.append(Session(context, server.url, label))
        await asyncio.gather(*(session.open(start) for session in sessions))

    before = memory(pid)
    opened = time.monotonic()
    await asyncio.wait_for(open_all(), TIMEOUT_S)  # a Chromium that never answers fails the row too
    contexts = [session.context for session in sessions]
    open_s = time.monotonic() - opened
    # the walks only: what each page run costs the server, on any load
    cpu0, wait0, chromium0 = cpu_seconds(pid), run_queue_wait(pid), chromium_cpu_seconds()
    done0 = job_done(job_id)[0] if job_id else 0
    t0 = time.monotonic()
    walk_times = await asyncio.gather(*(session.walk(walks) for session in sessions))
    walked = time.monotonic()
    window = walked - t0
    server_cpu, server_wait = cpu_seconds(pid) - cpu0, run_queue_wait(pid) - wait0
    chromium_cpu = chromium_cpu_seconds() - chromium0
    job = None
    if job_id:
        # the rows the job finished during the walk, then alone over a window of the same length
        done1 = job_done(job_id)[0]
        t1 = time.monotonic()
        await asyncio.sleep(window)
        done2, status = job_done(job_id)
        job = {"walking": (done1 - done0) / window, "alone": (done2 - done1) / (time.monotonic() - t1),
               "window": window, "rows": done2, "ran_through": status == "running", "status": status}
    after = memory(pid)
    health = health_between(server.health_log, opened, walked)
    runs = ServerRuns(server.run_log)
    by_step = [(title, *runs.step(s.label, begin, end)) for s in sessions for title, begin, end in s.windows]
    # each session's first page, server side: its first rerun request to its last run before the walk
    firsts = [share for s in sessions for share in [runs.step(s.label, opened, t0)[0]] if share == share]
    server_shares = [(title, share) for title, share, _ in by_step if share == share]
    run_times = [r["t"] - r["since"] for _, _, finished in by_step for r in finished if r["since"] is not None]
    shares = [share for s in sessions for _, _, share in s.steps if share == share]
    steps = [took for s in sessions for _, took, _ in s.steps]
    for context in contexts:
        await context.close()
    return {
        "sessions": n, "open_s": open_s, "window_s": window,
        "walk_s": statistics.median(walk_times),
        "first_s": statistics.median(s.first for s in sessions),
        "first_server_p50": quantile(firsts, 50), "first_server_p95": quantile(firsts, 95),
        "step_p50": quantile(steps, 50), "step_p95": quantile(steps, 95),
        "share_p50": quantile(shares, 50), "share_p95": quantile(shares, 95),
        "server_p50": quantile([v for _, v in server_shares], 50),
        "server_p95": quantile([v for _, v in server_shares], 95),
        "server_steps": f"{len(server_shares)} of {len(steps)}",
        "run_p95": quantile(run_times, 95), "runs": len(run_times),
        "msgs_per_run": statistics.mean([r["msgs"] for _, _, f in by_step for r in f]) if run_times else float("nan"),
        "health_worst": health["worst"], "health_failed": health["failed"], "health_polls": health["polls"],
        "loop_lag": loop_lag_between(server.run_log, opened, walked),
        "dropped": sum(max(0, s.sockets - 1) + s.closed for s in sessions),
        "errors": sum(len(s.errors) for s in sessions),
        "error_text": next((e for s in sessions for e in s.errors), ""),
        "rss_before": before["VmRSS"], "rss_after": after["VmRSS"], "hwm": after["VmHWM"],
        "server_cpu_per_step": server_cpu / max(1, len(steps)),
        "server_busy": server_cpu / window, "server_wait": server_wait / window, "chromium_busy": chromium_cpu / window,
        "resent": sum(s.resent for s in sessions),
        "job": job, "job_rows_s": job["walking"] if job else None,
        "share_by_page": {title: quantile([v for t, v in server_shares if t == title], 95) for title in WALK},
        "profile": profile_between(server.run_log, PROFILE_DIR, opened, walked,
                                   PROFILE_DIR / f"{n}-{'eval' if job_id else 'quiet'}-{uuid.uuid4().hex[:6]}.prof")
        if PROFILE_DIR else "",
    }


def print_row(row: dict, label: str, chromium: str) -> None:
    job = f"{row['job_rows_s']:.0f}" if row["job_rows_s"] is not None else "-"
    print(f"| {row['sessions']:>3} | {chromium} | {label:<9} | {row['walk_s']:6.1f} | {row['first_s']:5.1f} | "
          f"{row['step_p50']:5.2f} / {row['step_p95']:5.2f} | {row['share_p50']:5.2f} / {row['share_p95']:5.2f} | "
          f"{row['server_p50']:5.2f} / {row['server_p95']:5.2f} | {row['health_worst']:5.2f} | {row['loop_lag']:5.2f} | "
          f"{row['dropped']:>3} | {row['errors']:>3} | "
          f"{row['rss_before']:5.0f} -> {row['rss_after']:5.0f} ({row['hwm']:.0f}) | {job:>6} |", flush=True)
    print("    server side: share p95 by page " + ", ".join(f"{title} {value:.2f} s"
                                                       for title, value in row["share_by_page"].items())
          + f"; steps timed {row['server_steps']}; {row['runs']} script runs, p95 {row['run_p95']:.2f} s, "
          f"{row['msgs_per_run']:.0f} ForwardMsgs each; health polls {row['health_polls']} "
          f"({row['health_failed']} failed); server CPU {row['server_cpu_per_step'] * 1000:.0f} ms per step; first page "
          f"server side p50 / p95 {row['first_server_p50']:.2f} / {row['first_server_p95']:.2f} s", flush=True)
    print(f"    over the walk: server CPU {row['server_busy']:.2f} of a core, its threads waited for a CPU "
          f"{row['server_wait']:.2f} s per s; Chromium {row['chromium_busy']:.2f} cores; clicks sent again "
          f"{row['resent']}; load average {load_average()}", flush=True)
    if row["profile"]:
        print(f"    profile (opening and walk): {row['profile']}", flush=True)
    if row["error_text"]:
        print(f"    first error: {row['error_text'][:200]}", flush=True)


def page_ratios(with_eval: dict, without: dict) -> str:
    """The server's share of a step with an evaluation running over without it, at p50 and p95."""
    def ratio(key: str) -> str:
        base = without[key]
        return f"{with_eval[key] / base:.2f}x" if base and base == base else "n/a"

    return (f"p50 {ratio('server_p50')} ({without['server_p50']:.2f} -> {with_eval['server_p50']:.2f} s), "
            f"p95 {ratio('server_p95')} ({without['server_p95']:.2f} -> {with_eval['server_p95']:.2f} s)")


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


async def main_async(args: argparse.Namespace) -> None:
    for database in ([None, args.db] if args.db else [None]):
        if database is None:
            os.environ.pop("TEMPO_EVAL_DB", None)
            print("\n== the workspace database: SQLite (the workspace's file)", flush=True)
            await one_database(args)
            continue
        from bench.evaluate_scale import _drop_database, _fresh_database

        name = f"dashboard_load_{os.getpid()}"
        os.environ["TEMPO_EVAL_DB"] = _fresh_database(database, name)
        print(f"\n== the workspace database: PostgreSQL (a new database {name} on {database.split('@')[-1]})",
              flush=True)
        try:
            await one_database(args)
        finally:
            os.environ.pop("TEMPO_EVAL_DB", None)
            _drop_database(database, name)


async def one_database(args: argparse.Namespace) -> None:
    """The table on a fresh workspace (of the database TEMPO_EVAL_DB names, or the SQLite file)."""
    from playwright.async_api import async_playwright

    home = Path(tempfile.mkdtemp(prefix="dashboard_load_"))
    print(f"load average {load_average()} (1, 5, 15 min) on {os.cpu_count()} cores", flush=True)
    sample_id, run_ids = build_workspace(home)
    generated = Generated(home, args.eval_rows)
    # the sessions open the sample with its first `--runs` runs selected: with two, Results shows
    # both and Compare runs their significance table and per-query scatter
    start = f"/?dataset={sample_id}&runs={','.join(map(str, run_ids[:args.runs]))}"
    print(f"load average {load_average()}", flush=True)
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        renicer = Renicer(args.browser_nice, args.browser_group_nice[0])
        if max(args.browser_group_nice) >= 10 and os.getloadavg()[0] > 2 * (os.cpu_count() or 1):
            print("WARNING: a loaded machine: at g19 Chromium may starve (pages not opened in --timeout)", flush=True)
        renicer.start()
        print(f"Chromium's autogroup at nice {' then '.join(map(str, args.browser_group_nice))} (column chromium: "
              f"g19 = nice 19, as if the browsers were on other machines; g0 = unprioritized), its renderers "
              f"and GPU process at nice {args.browser_nice}; the server, the worker and the bench at "
              f"{os.nice(0)}, each in an autogroup of its own; the health prober in its own at -10", flush=True)
        try:
            await run_rows(browser, home, args, generated, start, renicer)
        finally:
            renicer.stop()
            renicer.set_group_nice(0)  # a Chromium starved at 19 takes minutes to close
            await browser.close()
        print(f"load average at the end {load_average()}", flush=True)


async def run_rows(browser, home: Path, args: argparse.Namespace, generated: Generated, start: str,
                   renicer: Renicer) -> None:
    """The table's rows (or, with --long, one long session)."""
    if args.long:
        with TimedServer(home, start_timeout=180, root=args.trees[0]) as server:
            await long_session(browser, server, server._process.pid, args.long, start)  # noqa: SLF001
    else:
        print(f"sessions open {start}", flush=True)
        print("| sessions | chromium | evaluation | one walk s | first page s | step p50 / p95 s "
              "| share, browser side p50 / p95 s | share, server side p50 / p95 s | worst health s "
              "| worst loop lag s | dropped ws | errors | server RSS MB before -> after (peak) | job rows/s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for n in args.sessions:
            for group_nice in args.browser_group_nice:
                renicer.set_group_nice(group_nice)
                for _ in range(args.repeat):
                    for tree in args.trees:
                        try:
                            await one_tree(browser, home, tree, n, args, generated, start, renicer)
                        except Exception as error:  # e.g. pages that never opened: the next rows still run
                            print(f"|   {n} | g{group_nice} | FAILED: {type(error).__name__}: "
                                  f"{str(error)[:200] or f'no answer in {TIMEOUT_S:.0f} s'} |", flush=True)
                            renicer.set_group_nice(0)  # lets a starved Chromium close them
                            for context in browser.contexts:
                                await context.close()
                            renicer.set_group_nice(group_nice)


async def one_tree(browser, home: Path, tree: Path, n: int, args: argparse.Namespace, generated: Generated,
                   start: str, renicer: Renicer) -> None:
    """The rows of one checkout's app at `n` sessions: a fresh server on the shared workspace."""
    with TimedServer(home, start_timeout=180, root=tree, tag=f"server-{uuid.uuid4().hex[:6]}") as server:
        pid = server._process.pid  # noqa: SLF001 - the server's own process, for its memory and CPU
        if len(args.trees) > 1:
            print(f"    app of {tree} (server pid {pid})", flush=True)
        chromium = f"g{renicer.group_nice}"
        quiet = await one_load(browser, server, pid, n, args.walks, None, start)
        print_row(quiet, "no", chromium)
        print(f"    Chromium's autogroup(s) at nice {renicer.group_nices()}; health prober: "
              f"{server.prober_priority()}", flush=True)
        if args.no_eval:
            return
        # the job runs while the sessions open, walk (slower beside it) and over the window alone
        rows = int(generated.rate * 1.3 * (quiet["open_s"] + 3 * quiet["window_s"])) + 50_000
        for attempt in (1, 2):
            dataset_id, rows = generated.at_least(rows)
            job, row = await one_evaluation(browser, server, pid, n, args, dataset_id, start)
            generated.rate = job["alone"] or generated.rate
            if job["ran_through"] or attempt == 2:
                break
            rows = int(1.5 * (job["rows"] + job["alone"] * job["window"])) + 1
            print(f"    the job ended ({job['status']}, {job['rows']:,} rows) before the window alone did: again "
                  f"on {rows:,} rows", flush=True)
        print_row(row, "running", chromium)
        print(f"    pages with evaluation / without (server side, same server): {page_ratios(row, quiet)} "
              "(target <= 1.2x)", flush=True)
        ratio = job["walking"] / job["alone"] if job["alone"] else float("nan")
        print(f"    job ({rows:,} rows) while {n} session(s) walked {job['walking']:.1f} rows/s, alone right after "
              f"over the same {job['window']:.0f} s {job['alone']:.1f} rows/s ({ratio:.0%}); load average now "
              f"{load_average()}", flush=True)
        if not job["ran_through"]:
            print(f"    INVALID: the job ended ({job['status']}, {job['rows']:,} rows) before the window alone did",
                  flush=True)


async def one_evaluation(browser, server: TimedServer, pid: int, n: int, args: argparse.Namespace, dataset_id: int,
                         start: str) -> tuple[dict, dict]:
    """An evaluation of the dataset started from the Evaluate page, `n` sessions walking beside it;
    (the job's rates, the row)."""
    drop_runs(dataset_id)  # a fresh evaluation each time, not the resume of a finished one
    job_id = await start_evaluation(browser, server.url, dataset_id, f"bench {n}")
    row = await one_load(browser, server, pid, n, args.walks, job_id, start)
    cancel_jobs()
    while job_done(job_id)[1] in ("queued", "running"):
        time.sleep(0.5)
    delete_job_run(job_id)  # the next evaluation starts from nothing, not resumed
    return row["job"], row


async def long_session(browser, server: TimedServer, pid: int, walks: int, start: str) -> None:
    """One session walking `walks` times; the server's memory after each walk."""
    context = await browser.new_context()
    session = Session(context, server.url)
    await session.open(start)
    samples = []
    for walk in range(walks):
        await session.walk(1)
        samples.append(memory(pid)["VmRSS"])
        if walk % 5 == 4 or walk == walks - 1:
            print(f"walk {walk + 1:>3}: server RSS {samples[-1]:.0f} MB", flush=True)
    tail = samples[len(samples) // 2:]
    print(f"server RSS after walk 1 {samples[0]:.0f} MB, after walk {walks} {samples[-1]:.0f} MB; second half "
          f"min {min(tail):.0f} max {max(tail):.0f} MB (growth over the second half "
          f"{tail[-1] - tail[0]:+.0f} MB); errors {len(session.errors)}; dropped websockets "
          f"{max(0, session.sockets - 1) + session.closed}", flush=True)
    await context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="1,5,10,20", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--walks", type=int, default=1, help="walks per session (default 1)")
    parser.add_argument("--eval-rows", type=int, default=100_000, metavar="ROWS",
                        help="the smallest generated dataset evaluated (default 100,000); each row with an "
                        "evaluation gets one large enough for the job to outlast its windows, made then, from the "
                        "row without (its opening and walk) and the job's last rate alone, and made "
                        "larger and run again once if the job still ended early")
    parser.add_argument("--trees", default=[ROOT], type=lambda s: [Path(x).resolve() for x in s.split(",")],
                        help="checkouts whose app is served, in turn, on the same workspace (default: this one); "
                        "e.g. /work/main,. for an A/B comparison")
    parser.add_argument("--repeat", type=int, default=1, help="times each session count runs on each tree, "
                        "alternating (default 1)")
    parser.add_argument("--runs", type=int, default=2, choices=(1, 2),
                        help="runs of the sample the sessions select (default 2: Compare compares them)")
    parser.add_argument("--browser-nice", type=int, default=19, metavar="N",
                        help="Chromium's renderers and GPU process at this nice value inside its autogroup "
                        "(default 19; 0: left alone)")
    parser.add_argument("--browser-group-nice", default=[19], metavar="N[,N]",
                        type=lambda s: [int(x) for x in s.split(",")],
                        help="Chromium's scheduler autogroup at this nice value (default 19: the browsers as if on "
                        "machines of their own; 0: unprioritized, an equal of the server; 19,0: each in turn; Linux)")
    parser.add_argument("--no-eval", action="store_true", help="skip the runs with an evaluation")
    parser.add_argument("--db", metavar="URL", help="also run the table with the workspace database on PostgreSQL "
                        "(a postgresql:// URL of a database on the server; a database of its own is made there)")
    parser.add_argument("--long", type=int, default=0, metavar="WALKS",
                        help="instead: one session walking WALKS times, the server's memory after each")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, metavar="S",
                        help=f"a page not opened or a step not done in S seconds fails its row (default {TIMEOUT_S:.0f})")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="profile every script run of the server (cProfile, bench/serve_timed.py) into DIR "
                        "and print each row's app functions by cumulative time (slows the runs: for where the "
                        "time goes, not for the table)")
    args = parser.parse_args()
    globals()["TIMEOUT_S"] = args.timeout
    if args.profile:
        globals()["PROFILE_DIR"] = args.profile.resolve()
        os.environ["BENCH_PROFILE_DIR"] = str(PROFILE_DIR)  # read by serve_timed in each server
    # killed (timeout, kill): end as on Ctrl-C, so the servers and their probers stop too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
