"""The load bench's server-side timing (bench/serve_timed.py, bench/load_timing.py; issue 29): the
real app under the wrapper, one real browser session, its reruns logged with their durations."""

from __future__ import annotations

import json
import math
import time

import pytest

from tests.browser.test_main_pages import CHROMIUM, LAUNCH_ARGS, nav, require_browser, wait_idle
from tests.support.paths import ROOT
from tests.support.scripts import load_script

load_timing = load_script(ROOT / "bench" / "load_timing.py")


def test_step_share_is_from_the_first_rerun_request_to_the_last_run_finished_in_the_window(tmp_path) -> None:
    log = tmp_path / "runs.jsonl"
    records = [
        {"event": "connect", "session": "s1", "bench": "a", "t": 0.0},
        {"event": "connect", "session": "s2", "bench": None, "t": 0.0},  # not a bench session: ignored
        {"event": "rerun", "session": "s1", "t": 10.0},
        {"event": "finished", "session": "s1", "t": 10.5, "status": "FINISHED_EARLY_FOR_RERUN", "msgs": 3,
         "since": 10.0},
        {"event": "rerun", "session": "s1", "t": 10.6},
        {"event": "finished", "session": "s1", "t": 11.4, "status": "FINISHED_SUCCESSFULLY", "msgs": 9, "since": 10.6},
        {"event": "rerun", "session": "s2", "t": 10.1},
        {"event": "finished", "session": "s2", "t": 19.0, "status": "FINISHED_SUCCESSFULLY", "msgs": 9, "since": 10.1},
        {"event": "rerun", "session": "s1", "t": 30.0},  # the next step's
        {"event": "loop", "t": 11.0, "lag": 0.25},
        {"event": "loop", "t": 40.0, "lag": 3.0},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in records) + '{"event": "rer')  # a line half written
    share, runs = load_timing.ServerRuns(log).step("a", 9.0, 12.0)
    assert share == pytest.approx(1.4)
    assert [r["msgs"] for r in runs] == [3, 9]
    assert math.isnan(load_timing.ServerRuns(log).step("a", 12.0, 20.0)[0])  # no request of "a" in it
    assert load_timing.loop_lag_between(log, 9.0, 12.0) == 0.25


@pytest.mark.browser
def test_the_wrapper_logs_each_rerun_of_a_real_session_with_its_duration(tmp_path) -> None:
    require_browser()
    from playwright.sync_api import sync_playwright

    with load_timing.TimedServer(tmp_path / "home", start_timeout=180) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        context = browser.new_context()
        context.add_cookies([{"name": load_timing.COOKIE, "value": "analyst-1", "url": server.url}])
        page = context.new_page()
        page.goto(server.url)
        wait_idle(page)
        clicked = time.monotonic()
        nav(page, "Datasets")
        drawn = time.monotonic()
        browser.close()
        runs = load_timing.ServerRuns(server.run_log)
        share, finished = runs.step("analyst-1", clicked, drawn)
        health = load_timing.health_between(server.health_log, clicked - 600, drawn)
        priority = server.prober_priority()
    assert runs.reruns["analyst-1"], f"no rerun request logged for the session:\n{server.run_log.read_text()}"
    assert finished and finished[-1]["status"] == "FINISHED_SUCCESSFULLY"
    assert finished[-1]["msgs"] >= 2  # the page's elements, then the script-finished message
    # the rerun's duration on the server: its request's arrival to its end, inside the browser's step
    assert 0 < finished[-1]["t"] - finished[-1]["since"] <= share < drawn - clicked
    assert health["polls"] >= 1 and health["failed"] == 0 and health["worst"] < 30
    assert "autogroup" in priority
    assert load_timing.loop_lag_between(server.run_log, clicked - 600, drawn + 5) >= 0
